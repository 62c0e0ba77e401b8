"""A numeric prompt id is found whether or not the command that names it pads
it: a packet whose ids are "1", "2" took `control amend PACKET 1` as "01" (the
request pads) and said "unknown prompt id '01'; use one of: 1, 2" (a new
user's finding); a packet of "01", "02" takes "1", as before."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.planning.selection import normalize_id
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_a_numeric_id_finds_the_one_known_id_of_its_number() -> None:
    assert normalize_id("3", ["01", "03"]) == "03"
    assert normalize_id("3", ["001", "003"]) == "003"
    assert normalize_id("01", ["1", "2"]) == "1"
    assert normalize_id(" 2 ", ["1", "2"]) == "2"
    assert normalize_id("3", ["03", "003"]) == "3"  # two of that number: no guess
    assert normalize_id("4", ["01", "03"]) == "4"  # unknown stays what was typed
    assert normalize_id("a1", ["a01"]) == "a1"  # only numeric ids


def test_control_amend_finds_an_unpadded_id(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "1": {"verify": {"files_exist": ["README.md"]}},
            "2": {"verify": {"files_exist": ["README.md"]}},
        },
    )
    res = cli("control", "amend", packet, "1", "--add-file", "x.txt", "--reason", "r")
    assert "unknown prompt id" not in res.stdout + res.stderr, res.stdout + res.stderr
    assert res.returncode == 0, res.stdout + res.stderr
    shown = cli("control", "contract", packet, "1")
    assert shown.returncode == 0, shown.stderr
    assert "x.txt" in shown.stdout


def test_an_empty_bound_is_an_unknown_id_not_no_bound(tmp_path: Path) -> None:
    # a new user's finding: `run --from ""` ran every prompt, as with no --from
    packet = make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["README.md"]}},
            "02": {"verify": {"files_exist": ["README.md"]}},
        },
    )
    for flag in ("--from", "--through"):
        res = cli("run", packet, flag, "", "--no-commit")
        assert res.returncode == 2, res.stdout + res.stderr
        assert f"unknown prompt id '' for {flag}" in res.stderr
        assert "Traceback" not in res.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()  # nothing ran
