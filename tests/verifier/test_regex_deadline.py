"""Every regex clause runs under a deadline; expiry is verifier_timeout (issue 12.10)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from prompt_runner.verifier import regexes
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.verifier.conftest import Check

# Backtracks without end in `re` and in the `regex` engine alike.
EXPLODES = r"^(a|aa)+$"
TEXT = "a" * 60 + "!\n"
# The issue's example: endless in `re`; the engine the verifier uses solves it at once.
ISSUE = r"^(a+)+$"
ISSUE_TEXT = "a" * 40 + "!\n"
LIMIT_S = regexes.BASE_TIMEOUT_S + 3  # the deadline, plus the time to start python


def timed(fn):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    out = fn()
    return out, time.monotonic() - started


def test_matches_stops_at_the_deadline_as_verifier_timeout(check: Check, git_repo: Path) -> None:
    (git_repo / "a.txt").write_text(TEXT, encoding="utf-8")
    report, took = timed(lambda: check({"matches": [{"path": "a.txt", "pattern": EXPLODES}]}))
    (item,) = report.items
    assert item.verdict == "verifier_timeout" and report.fault is item
    assert "did not finish within 2.0 s on a.txt" in item.details
    assert "nested or overlapping quantifiers" in item.details
    assert took < LIMIT_S


def test_source_absent_stops_at_the_deadline_naming_the_file(check: Check, git_repo: Path) -> None:
    (git_repo / "src").mkdir()
    (git_repo / "src" / "ok.py").write_text("x = 1\n", encoding="utf-8")
    (git_repo / "src" / "slow.py").write_text(TEXT, encoding="utf-8")
    raw = {"source_absent": [{"path": "src", "pattern": EXPLODES}]}
    report, took = timed(lambda: check(raw))
    (item,) = report.items
    assert item.verdict == "verifier_timeout"
    assert "on src/slow.py in repo 'app'" in item.details
    assert took < LIMIT_S


def test_stdout_matches_stops_at_the_deadline(check: Check) -> None:
    command = {
        "exec": sys.executable,
        "args": ["-c", f"print({TEXT.strip()!r})"],
        "timeout_ms": 30_000,
        "stdout_matches": [EXPLODES],
    }
    report, took = timed(lambda: check({"commands": [command]}))
    (item,) = report.items
    assert item.verdict == "verifier_timeout"
    assert "on the stdout of" in item.details
    assert took < LIMIT_S


def test_the_issue_s_pattern_finishes_at_once_with_an_honest_verdict(
    check: Check, git_repo: Path
) -> None:
    (git_repo / "a.txt").write_text(ISSUE_TEXT, encoding="utf-8")
    report, took = timed(lambda: check({"matches": [{"path": "a.txt", "pattern": ISSUE}]}))
    (item,) = report.items
    assert item.verdict == "failure" and "has no match" in item.details
    assert took < 1.0


def test_the_deadline_grows_with_the_text() -> None:
    assert regexes.timeout_s(0) == regexes.BASE_TIMEOUT_S
    assert regexes.timeout_s(50_000_000) == regexes.BASE_TIMEOUT_S + 5


@pytest.mark.parametrize("command", ["run", "verify"])
def test_run_and_verify_halt_with_verifier_timeout(tmp_path: Path, command: str) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": TEXT}]}]},
                "verify": {"matches": [{"path": "a.txt", "pattern": EXPLODES}]},
            }
        },
    )
    if command == "verify":
        (tmp_path / "repo" / "a.txt").write_text(TEXT, encoding="utf-8")
    proc, took = timed(
        lambda: (
            cli(command, packet, "--timeout", "600000", timeout=60)
            if command == "run"
            else cli(command, packet, timeout=60)
        )
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "verifier_timeout" in proc.stdout + proc.stderr
    assert took < LIMIT_S + 10
