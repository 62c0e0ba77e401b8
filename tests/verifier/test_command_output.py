"""Output assertions see a command's whole output, in bounded memory (issue 12.7)."""

from __future__ import annotations

import sys
from pathlib import Path

from prompt_runner.verifier.output import (
    REGEX_TEXT_CAP_BYTES,
    WINDOW_CHARS,
    CommandOutput,
)
from tests.verifier.conftest import Check

PY = sys.executable
LOG_LINE = "tests/test_mod.py::test_case PASSED" + " " * 40 + "[ 50%]\n"


def long_log(summary: str, *, lines: int = 60_000, code: int = 0, stderr: str = "") -> dict:
    """A command printing ~5 MB of log, then ``summary`` as its last line."""
    program = (
        "import sys\n"
        f"sys.stdout.write({LOG_LINE!r} * {lines})\n"
        f"sys.stdout.write({summary!r} + '\\n')\n"
        f"sys.stderr.write({stderr!r})\n"
        f"sys.exit({code})\n"
    )
    return {"exec": PY, "args": ["-c", program], "timeout_ms": 60_000}


def test_a_summary_printed_after_a_long_log_is_found(check: Check) -> None:
    command = long_log("===== 812 passed in 41.2s =====")
    command["stdout_contains"] = ["812 passed"]
    command["stdout_matches"] = [r"^=+ \d+ passed in [\d.]+s =+$"]
    (item,) = check({"commands": [command]}).items
    assert item.passed, item.details
    assert item.extra["output_truncated"] is True
    assert item.extra["output_bytes"]["stdout"] > 4_000_000
    assert item.output is not None and "812 passed" in item.output
    assert "[truncated:" in item.output and len(item.output) <= 16_100


def test_a_failure_reports_the_real_last_line_and_says_output_was_truncated(
    check: Check,
) -> None:
    command = long_log("FAILED tests/test_x.py::test_last - assert 1 == 2", code=1)
    (item,) = check({"commands": [command]}).items
    assert not item.passed and item.verdict == "failure"
    assert "last output: FAILED tests/test_x.py::test_last - assert 1 == 2" in item.details
    assert "output truncated:" in item.details
    assert item.output is not None
    assert item.output.rstrip().endswith("FAILED tests/test_x.py::test_last - assert 1 == 2")


def test_an_unmet_assertion_after_a_long_log_says_output_was_truncated(check: Check) -> None:
    command = long_log("1 failed, 811 passed")
    command["stdout_contains"] = ["0 failed"]
    (item,) = check({"commands": [command]}).items
    assert not item.passed
    assert "stdout does not contain '0 failed'" in item.details
    assert "output truncated:" in item.details


def test_stdout_over_the_regex_cap_is_a_verifier_fault_naming_the_cap(check: Check) -> None:
    mib = REGEX_TEXT_CAP_BYTES // (1024 * 1024)
    program = (
        "import sys\n"
        f"block = 'x' * 1023 + '\\n'\nfor _ in range({(mib + 1) * 1024}): sys.stdout.write(block)\n"
        "print('7 passed')\n"
    )
    command = {
        "exec": PY,
        "args": ["-c", program],
        "timeout_ms": 60_000,
        "stdout_matches": [r"\d+ passed"],
        "stdout_contains": ["7 passed"],
    }
    (item,) = check({"commands": [command]}).items
    assert item.verdict == "verifier_fault", item.details
    assert f"{mib} MiB (REGEX_TEXT_CAP_BYTES)" in item.details
    assert item.extra["stdout_cap_bytes"] == REGEX_TEXT_CAP_BYTES


def test_small_output_is_reported_exactly_as_before(check: Check, git_repo: Path) -> None:
    program = "import sys\nprint('one')\nprint('two')\nsys.stderr.write('warn\\n')\nsys.exit(3)\n"
    (item,) = check({"commands": [{"exec": PY, "args": ["-c", program]}]}).items
    assert item.output == "one\ntwo\n[stderr]\nwarn"
    assert item.details.endswith("exited 3 (expected 0); last output: warn")
    assert "output_truncated" not in item.extra


def test_a_literal_split_across_reads_and_utf8_sequences_is_found() -> None:
    out = CommandOutput(["PASSÉ: 12 tests", "never"])
    data = ("x" * (WINDOW_CHARS * 3) + " PASSÉ: 12 tests " + "y" * 1000).encode()
    cut = data.index("É".encode()) + 1  # inside the two-byte sequence
    for chunk in (data[: cut - 5], data[cut - 5 : cut], data[cut : cut + 3], data[cut + 3 :]):
        out("stdout", chunk)
    out.close()
    assert out.contains("PASSÉ: 12 tests") and not out.contains("never")
    assert out.truncated and out.stdout.bytes == len(data)
    assert out.whole_stdout() is None  # not kept: the entry has no stdout_matches


def test_memory_stays_bounded_without_stdout_matches() -> None:
    out = CommandOutput(["needle"])
    chunk = b"z" * 65536
    for _ in range(2000):  # 128 MiB
        out("stdout", chunk)
    out("stdout", b"needle\n")
    out.close()
    assert out.contains("needle")
    assert len(out.stdout.head) <= WINDOW_CHARS and len(out.stdout.tail) <= WINDOW_CHARS
    assert out.stdout.tail.endswith("needle\n") and out.stdout.lines() == 1
