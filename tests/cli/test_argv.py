"""E: prompt ids may follow flags; --debug may follow the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


@pytest.fixture
def packet(tmp_path: Path) -> Path:
    return make_packet(tmp_path, {"01": {}, "02": {}, "03": {}})


def _selected(out: str) -> list[str]:
    lines = [line for line in out.splitlines() if not line.startswith("warning:")]
    return [line.split()[0] for line in lines[1:] if not line.startswith(" ")]


def test_an_id_after_a_flag_is_selected(packet: Path, pr: PR) -> None:
    result = pr("run", packet, "--no-commit", "--dry-run", "03")
    assert result.code == 0, result.err
    assert _selected(result.out) == ["03"]


def test_ids_before_and_after_flags_are_kept_in_order(packet: Path, pr: PR) -> None:
    result = pr("plan", packet, "02", "--json", "01")
    assert result.code == 0, result.err
    assert json.loads(result.out)["selected"] == ["02", "01"]


def test_verify_takes_an_id_after_json(packet: Path, pr: PR) -> None:
    result = pr("verify", packet, "--json", "02")
    assert result.code == 0, result.err
    assert [r["prompt_id"] for r in json.loads(result.out)["reports"]] == ["02"]


def test_repair_takes_its_id_after_a_flag(packet: Path, pr: PR) -> None:
    assert pr("run", packet, "--no-commit").code == 0
    result = pr("repair", packet, "--no-commit", "--json", "02")
    assert result.code == 0, result.err
    assert json.loads(result.out)["prompts"] == {"02": "completed"}


def test_an_unknown_flag_is_an_error_of_the_command(packet: Path, pr: PR) -> None:
    result = pr("run", packet, "--no-commit", "--remainging", "03")
    assert result.code == 2
    assert result.err.strip().splitlines() == [
        "error: unrecognized arguments: --remainging; see `prompt-runner run --help`"
    ]
    assert not (packet / ".prompt_runner").exists()


def test_a_stray_argument_to_a_command_without_ids_is_an_error(packet: Path, pr: PR) -> None:
    result = pr("list", packet, "--json", "extra")
    assert result.code == 2
    assert "unrecognized arguments: extra; see `prompt-runner list --help`" in result.err
    assert json.loads(result.out) == {
        "error": "unrecognized arguments: extra; see `prompt-runner list --help`",
        "exit_code": 2,
        "kind": "UsageError",
    }


def test_debug_after_the_command_works(tmp_path: Path, pr: PR) -> None:
    missing = tmp_path / "missing"
    plain = pr("run", missing)
    debug = pr("run", missing, "--debug")
    assert plain.code == debug.code == 2
    assert "Traceback" not in plain.err
    assert "Traceback" in debug.err
    assert "unrecognized" not in debug.err


def test_ids_after_a_double_dash_are_ids(packet: Path, pr: PR) -> None:
    result = pr("plan", packet, "--json", "--", "03")
    assert result.code == 0, result.err
    assert json.loads(result.out)["selected"] == ["03"]


def test_repair_with_only_an_id_outside_a_packet_says_the_packet_is_missing(
    tmp_path: Path, pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `repair 01` repairs prompt 01 of the packet here (the reference's convention);
    # outside a packet the error names the current directory.
    monkeypatch.chdir(tmp_path)
    result = pr("repair", "01")
    assert result.code == 2
    assert f"{tmp_path}: is not a packet (no prompt_runner_packet.md)" in result.err


def test_repair_with_only_a_packet_asks_for_the_id(packet: Path, pr: PR) -> None:
    result = pr("repair", packet)
    assert result.code == 2
    assert "repair needs the id of the prompt to repair" in result.err


@pytest.mark.parametrize("flag", ["-x", "--bogus", "--bogus=1"])
def test_an_unknown_flag_is_named_before_a_missing_name(
    tmp_path: Path, pr: PR, flag: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # argparse checks required positionals first: `packet new -x` used to say the
    # name was missing, when -x is what is wrong
    monkeypatch.chdir(tmp_path)
    result = pr("packet", "new", flag)
    assert result.code == 2
    assert result.err.strip().splitlines() == [
        f"error: unrecognized arguments: {flag}; see `prompt-runner packet new --help`"
    ]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["packet", "new"], "the following arguments are required: name"),
        (["packet", "new", "--prov"], "argument --provider: expected one argument"),
    ],
)
def test_a_missing_name_is_still_named_when_every_flag_is_known(
    tmp_path: Path, pr: PR, argv: list[str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = pr(*argv)
    assert result.code == 2
    assert result.err.strip().splitlines() == [
        f"error: {expected}; see `prompt-runner packet new --help`"
    ]
