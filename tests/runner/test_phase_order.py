"""A ``depends_on`` into a later phase reorders the run; ``plan`` says so."""

from __future__ import annotations

from pathlib import Path

from prompt_runner import api
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def packet(tmp_path: Path) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {"depends_on": ["03"]},
            "02": {},
            "03": {"phase": 2},
        },
    )


def test_plan_says_a_later_phase_dependency_runs_ahead_of_its_phase(tmp_path: Path) -> None:
    root = packet(tmp_path)
    p = api.plan(root)
    assert p.selected == ("03", "01", "02")
    assert (
        "prompt 01 (phase 1) depends on 03 (phase 2), so 03 runs before 01, ahead of its "
        "phase; move 03 into phase 1 or drop the dependency"
    ) in p.notes
    shown = cli("plan", root)
    assert "note: prompt 01 (phase 1) depends on 03 (phase 2)" in shown.stdout, shown.stderr


def test_a_phase_selection_says_the_dependency_is_not_run(tmp_path: Path) -> None:
    p = api.plan(packet(tmp_path), phase="1")
    assert p.selected == ("01", "02")
    assert (
        "prompt 01 (phase 1) depends on 03 (phase 2), which this selection does not run: "
        "01 is blocked unless 03 has completed"
    ) in p.notes
