"""F: contradictory selectors are errors; the documented combinations still work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


@pytest.fixture
def packet(tmp_path: Path) -> Path:
    return make_packet(tmp_path, {f"0{i}": {"phase": i % 2 + 1} for i in range(1, 6)})


@pytest.mark.parametrize(
    "options",
    [
        {"ids": ("02",), "from_id": "04"},
        {"ids": ("02",), "through_id": "04"},
        {"ids": ("02",), "phase": "9"},
        {"ids": ("02",), "phase": "1"},
    ],
)
def test_ids_with_a_range_or_phase_are_refused(packet: Path, options: dict[str, Any]) -> None:
    with pytest.raises(UserError, match="name prompt ids or use --from/--through/--phase"):
        api.plan(packet, **options)


def test_all_with_remaining_is_refused(packet: Path) -> None:
    with pytest.raises(UserError, match="--all and --remaining"):
        api.plan(packet, select_all=True, remaining=True)


def test_the_cli_exits_2_and_runs_nothing(packet: Path, pr: PR) -> None:
    result = pr("run", packet, "02", "--from", "04", "--no-commit")
    assert result.code == 2
    assert "prompt ids (02) cannot be combined with --from" in result.err
    assert not (packet / ".prompt_runner").exists()
    assert pr("run", packet, "--all", "--remaining", "--dry-run").code == 2


def test_documented_combinations_still_select(packet: Path) -> None:
    assert api.plan(packet, select_all=True, through_id="02").selected == ("01", "02")
    assert api.plan(packet, from_id="2", through_id="3").selected == ("02", "03")
    assert api.plan(packet, ids=("03",), remaining=True).selected == ("03",)
    with pytest.raises(UserError, match="cannot be combined with --all"):
        api.plan(packet, ids=("03",), select_all=True)
    assert api.plan(packet, phase="1").selected == ("02", "04")
    assert api.plan(packet, phase="1", from_id="03").selected == ("04",)


def test_remaining_with_a_range_narrows(packet: Path) -> None:
    assert api.run(packet, ids=("01",), runtime_store="file").exit_code == 0
    chosen = api.plan(packet, remaining=True, through_id="03", runtime_store="file").selected
    assert chosen == ("02", "03")
