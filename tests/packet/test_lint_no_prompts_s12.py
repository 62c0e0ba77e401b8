"""A packet with no prompt at all (new-user s12 #6): ``run``, ``plan`` and
``verify`` refuse it, so ``packet lint`` no longer passes it and ``list`` and
``checklist sync`` refuse it in ``run``'s own sentence (they said "0 prompt(s)"
and nothing, exit 0)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from prompt_runner.api_packet import lint
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _prompts_a_file(packet: Path) -> None:
    shutil.rmtree(packet / "prompts")
    (packet / "prompts").write_text("not a dir\n", encoding="utf-8")


def _prompts_empty(packet: Path) -> None:
    for file in (packet / "prompts").iterdir():
        file.unlink()


def _prompts_missing(packet: Path) -> None:
    shutil.rmtree(packet / "prompts")


CASES: dict[str, Callable[[Path], None]] = {
    "a file": _prompts_a_file,
    "empty": _prompts_empty,
    "missing": _prompts_missing,
}


@pytest.mark.parametrize("case", CASES)
def test_lint_reports_a_packet_of_no_prompts_as_an_error(tmp_path: Path, case: str) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    CASES[case](packet)
    refused = cli("run", packet)
    assert refused.returncode == 2, refused.stdout + refused.stderr

    done = cli("packet", "lint", packet, "--json")

    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    errors = [f for f in report["findings"] if f["severity"] == "error"]
    assert [(f["kind"], f["file"]) for f in errors] == [("packet_load_error", "prompts")]
    assert "has no prompts" in errors[0]["message"]
    assert refused.stderr.strip().removeprefix("error: ") in errors[0]["message"]


def test_the_library_lint_says_so_too(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    _prompts_empty(packet)

    report = lint(packet)

    assert [f.kind for f in report.findings] == ["packet_load_error"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("command", [("list",), ("list", "--json"), ("checklist", "sync")])
def test_list_and_checklist_sync_refuse_as_run_does(
    tmp_path: Path, case: str, command: tuple[str, ...]
) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    CASES[case](packet)
    refused = cli("run", packet)

    done = cli(*command, packet)

    assert done.returncode == 2, done.stdout + done.stderr
    sentence = refused.stderr.strip().removeprefix("error: ")
    assert "has no prompts" in sentence and "\n" not in sentence
    if "--json" in command:  # the error as the one JSON document, as every --json says it
        assert json.loads(done.stdout)["error"] == sentence
    else:
        assert done.stdout == ""
        assert done.stderr == refused.stderr
