"""The commands clause: argv without a shell, @repo paths, verdicts, timeouts, regenerates."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import psutil
import pytest

from prompt_runner.verifier.command_entry import DEFAULT_TIMEOUT_MS
from tests.verifier.conftest import Check

PY = sys.executable


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    path.chmod(0o755)
    return path


def test_e2_literal_argv_child_cwd_and_repo_paths(check: Check, git_repo: Path) -> None:
    (git_repo / "path with spaces").mkdir()
    (git_repo / "nested").mkdir()
    (git_repo / "nested" / "evidence.txt").write_text("e", encoding="utf-8")
    script(git_repo / "scripts" / "verify", "#!/bin/sh\nexit 0\n")
    marker = f"literal; touch {git_repo}/SHOULD_NOT_EXIST"
    report = check(
        {
            "commands": [
                {
                    "repo": "app",
                    "cwd": "path with spaces",
                    "exec": "/usr/bin/printf",
                    "args": ["%s", marker],
                    "timeout_ms": 2000,
                },
                {"exec": "/usr/bin/test", "args": ["-f", "@repo:app/nested/evidence.txt"]},
                {"exec": "@repo:app/scripts/verify", "args": []},
                "if shopt -q login_shell; then echo unexpected-login-shell; exit 9; fi",
            ]
        }
    )
    assert report.passed, report.to_dict()
    printf, test, verify_script, legacy = report.items
    assert printf.extra["mode"] == "structured" and legacy.extra["mode"] == "legacy"
    assert printf.cwd == str(git_repo / "path with spaces")
    assert printf.details == marker
    assert printf.command == ("/usr/bin/printf", "%s", marker)
    assert not (git_repo / "SHOULD_NOT_EXIST").exists()
    assert test.details == "exited 0 in " + str(test.extra["duration_ms"]) + " ms"
    assert verify_script.repo == "app"
    assert legacy.command == "if shopt -q login_shell; then echo unexpected-login-shell; exit 9; fi"


def test_environment_is_inherited_plus_entry_env_without_login_shell(check: Check) -> None:
    code = "import os; print(os.environ['FROM_CTX'], os.environ['FROM_ENTRY'])"
    env = {**os.environ, "FROM_CTX": "ctx"}
    report = check(
        {"commands": [{"exec": PY, "args": ["-c", code], "env": {"FROM_ENTRY": "entry"}}]}, env=env
    )
    assert report.passed and report.items[0].details == "ctx entry"


def test_nonzero_exit_is_a_repairable_failure_with_output(check: Check, git_repo: Path) -> None:
    code = "import sys; print('3 tests failed'); print('boom', file=sys.stderr); sys.exit(4)"
    report = check({"commands": [{"exec": PY, "args": ["-c", code], "timeout_ms": 5000}]})
    item = report.items[0]
    assert item.verdict == "failure" and report.fault is None and report.failures() == (item,)
    assert item.details.startswith(f"`{PY} -c ")
    assert item.details.endswith(f"in {git_repo} exited 4 (expected 0); last output: boom")
    assert item.output == "3 tests failed\n[stderr]\nboom"
    assert item.extra["exit_code"] == 4


def test_fault_exit_code_is_a_verifier_fault(check: Check, git_repo: Path) -> None:
    report = check(
        {"commands": [{"exec": PY, "args": ["-c", "raise SystemExit(3)"], "fault_exit_codes": [3]}]}
    )
    item = report.items[0]
    assert item.verdict == "verifier_fault" and report.fault is item and report.failures() == ()
    assert "exited 3, listed in fault_exit_codes [3]" in item.details
    assert str(git_repo) in item.details


def test_missing_bare_command_is_a_fault_naming_command_and_cwd(
    check: Check, git_repo: Path
) -> None:
    report = check({"commands": [{"exec": "definitely-not-installed-xyz", "args": []}]})
    item = report.items[0]
    assert item.verdict == "verifier_fault" and not item.passed
    assert item.details == (
        "verifier_fault: command 'definitely-not-installed-xyz' not found on PATH "
        f"(cwd {git_repo}); install it or put its directory on PATH"
    )
    assert item.cwd == str(git_repo)


def test_missing_absolute_executable_is_a_fault(check: Check) -> None:
    report = check({"commands": [{"exec": "/nonexistent/bin/tool"}]})
    assert report.items[0].verdict == "verifier_fault"
    assert "absolute executable /nonexistent/bin/tool does not exist" in report.items[0].details


@pytest.mark.parametrize(
    "exe", ["./generated.sh", "bin/generated.sh", "@repo:app/bin/generated.sh"]
)
def test_missing_relative_executable_is_an_ordinary_failure(check: Check, exe: str) -> None:
    report = check({"commands": [{"exec": exe}]})
    item = report.items[0]
    assert item.verdict == "failure" and report.fault is None
    assert f"executable {exe} does not exist" in item.details
    assert "the prompt may need to create it" in item.details


def test_relative_executable_resolves_against_cwd(check: Check, git_repo: Path) -> None:
    script(git_repo / "sub" / "run.sh", "#!/bin/sh\necho in-$(basename $(pwd))\n")
    report = check({"commands": [{"exec": "./run.sh", "cwd": "sub"}]})
    assert report.passed and report.items[0].details == "in-sub"


def test_unstartable_command_is_a_fault(check: Check, git_repo: Path) -> None:
    bad = script(git_repo.parent / "tools" / "broken", "#!/nonexistent/interpreter\n")
    report = check({"commands": [{"exec": str(bad)}]})
    item = report.items[0]
    assert item.verdict == "verifier_fault"
    assert item.details.startswith("verifier_fault: could not start")


def test_legacy_missing_command_is_a_fault_f1(check: Check) -> None:
    report = check({"commands": ["./missing-verifier"]})
    item = report.items[0]
    assert item.verdict == "verifier_fault" and report.fault is item
    assert "the shell could not find or run a command (exit 127)" in item.details


def test_legacy_commands_run_in_a_shell_with_the_default_timeout(
    check: Check, git_repo: Path
) -> None:
    report = check({"commands": ["test -f README.md && echo yes", {"run": "exit 2"}]})
    ok, bad = report.items
    assert ok.passed and ok.details == "yes" and ok.cwd == str(git_repo)
    assert ok.extra["timeout_ms"] == DEFAULT_TIMEOUT_MS
    assert bad.verdict == "failure" and "exited 2 (expected 0)" in bad.details


def test_stdout_assertions(check: Check) -> None:
    args = ["-c", "print('5 passed in 0.1s')"]
    report = check(
        {
            "commands": [
                {
                    "exec": PY,
                    "args": args,
                    "stdout_contains": "passed",
                    "stdout_matches": [r"\d+ passed"],
                },
                {
                    "exec": PY,
                    "args": args,
                    "stdout_contains": ["failed"],
                    "stdout_matches": [r"^ok$"],
                },
            ]
        }
    )
    good, bad = report.items
    assert good.passed
    assert bad.verdict == "failure"
    assert bad.details.endswith(
        "exited 0 but stdout does not contain 'failed'; stdout has no match for /^ok$/"
    )


def test_timeout_kills_the_whole_group_including_a_sigterm_ignoring_grandchild(
    check: Check, tmp_path: Path
) -> None:
    pidfile = tmp_path / "grandchild.pid"
    code = (
        "import signal, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "time.sleep(60)\n"
    )
    started = time.monotonic()
    report = check({"commands": [{"exec": PY, "args": ["-c", code], "timeout_ms": 1500}]})
    assert time.monotonic() - started < 15
    item = report.items[0]
    assert item.verdict == "verifier_timeout" and report.fault is item and not report.passed
    assert "did not finish within 1500 ms; its whole process group was killed" in item.details
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if (
            not psutil.pid_exists(grandchild)
            or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
        ):
            break
        time.sleep(0.05)
    assert (
        not psutil.pid_exists(grandchild)
        or psutil.Process(grandchild).status() == psutil.STATUS_ZOMBIE
    )


def test_output_is_capped_with_an_explicit_marker(check: Check) -> None:
    code = "import sys\nfor i in range(1000): print(f'line {i}')\nsys.exit(1)"
    item = check({"commands": [{"exec": PY, "args": ["-c", code]}]}).items[0]
    assert item.output is not None
    lines = item.output.splitlines()
    assert lines[0] == "line 0" and lines[-1] == "line 999"
    assert "[truncated: 840 more lines]" in lines


def test_missing_cwd_is_a_failure(check: Check) -> None:
    item = check({"commands": [{"exec": "true", "cwd": "build"}]}).items[0]
    assert (
        item.verdict == "failure"
        and item.details == "cwd build does not exist in repo 'app'; create it"
    )


def test_structural_only_never_executes_commands(check: Check, git_repo: Path) -> None:
    report = check(
        {"files_exist": ["README.md"], "commands": [{"exec": "touch", "args": ["RAN"]}]},
        structural_only=True,
    )
    assert [i.kind for i in report.items] == ["files_exist"]
    assert not (git_repo / "RAN").exists()


def test_e3_regenerates_cannot_pass_on_a_stale_artifact_and_restores_it(
    check: Check, git_repo: Path
) -> None:
    fig = git_repo / "figure.png"
    fig.write_text("old", encoding="utf-8")
    report = check(
        {
            "commands": [
                {
                    "exec": "/usr/bin/true",
                    "args": [],
                    "regenerates": ["figure.png"],
                    "timeout_ms": 2000,
                }
            ]
        }
    )
    item = report.items[0]
    assert item.verdict == "failure"
    assert item.details == (
        "regenerates: not newly written by the command: figure.png (missing after the "
        "command; the previous version was restored)"
    )
    assert fig.read_text(encoding="utf-8") == "old"
    assert not (git_repo / "figure.png.prompt-runner-verifier-backup").exists()


def test_e3_regenerates_keeps_the_fresh_artifact(check: Check, git_repo: Path) -> None:
    fig = git_repo / "figure.png"
    fig.write_text("old", encoding="utf-8")
    code = "from pathlib import Path; Path('figure.png').write_text('new')"
    report = check(
        {"commands": [{"exec": PY, "args": ["-c", code], "regenerates": ["figure.png"]}]}
    )
    assert report.passed, report.to_dict()
    assert fig.read_text(encoding="utf-8") == "new"
    assert not (git_repo / "figure.png.prompt-runner-verifier-backup").exists()


def test_regenerates_restores_when_the_command_fails(check: Check, git_repo: Path) -> None:
    fig = git_repo / "figure.png"
    fig.write_text("old", encoding="utf-8")
    code = "from pathlib import Path; Path('figure.png').write_text('half'); raise SystemExit(1)"
    report = check(
        {"commands": [{"exec": PY, "args": ["-c", code], "regenerates": ["figure.png"]}]}
    )
    assert report.items[0].verdict == "failure"
    assert fig.read_text(encoding="utf-8") == "old"
    assert not (git_repo / "figure.png.prompt-runner-verifier-backup").exists()


def test_report_to_dict_shapes(check: Check) -> None:
    report = check({"commands": [{"exec": "true"}, {"exec": "false"}]})
    data = report.to_dict()
    assert data["pass"] is False and len(data["items"]) == 2 and len(data["failures"]) == 1
    assert data["faults"] == []
    assert data["items"][1]["command"] == ["false"] and data["items"][1]["mode"] == "structured"


def test_a_cwd_that_is_a_file_is_said_to_be_a_file(check: Check, git_repo: Path) -> None:
    (git_repo / "build").write_text("x", encoding="utf-8")
    item = check({"commands": [{"exec": "true", "cwd": "build"}]}).items[0]
    assert item.details == "cwd build is a file, not a directory in repo 'app'; make it a directory"
