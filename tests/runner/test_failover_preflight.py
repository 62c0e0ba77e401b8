"""A failover target's CLI is checked before the run, as the prompt's own is:
a missing one is found at the start (exit 3, one sentence naming the
``recovery.failover`` entry), not hours later when the first provider is
refused (runner/prepare.py)."""

from __future__ import annotations

from pathlib import Path

from tests.runner.test_usage_limits import FAST, PROMPT, Run, claude_success


def test_a_missing_failover_cli_stops_the_run_before_any_session(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        [claude_success()],
        {"01": {**PROMPT["01"]}},
        {"recovery": {**FAST, "failover": [{"provider": "codex", "model": "gpt-5.5"}]}},
    )
    (tmp_path / "bin" / "codex").unlink()
    run.env["PATH"] = f"{tmp_path / 'bin'}:/usr/bin:/bin"  # no other codex either
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    message = proc.stderr.strip().splitlines()
    assert len(message) == 1, proc.stderr
    assert "recovery.failover[0]" in message[0] and "codex" in message[0]
    assert "Traceback" not in proc.stderr
    assert run.invocations() == []  # claude never started: nothing was spent
    assert not (tmp_path / "repo" / "hello.txt").exists()


def test_a_present_failover_cli_lets_the_run_go(tmp_path: Path) -> None:
    run = Run(
        tmp_path,
        [claude_success()],
        {"01": {**PROMPT["01"]}},
        {"recovery": {**FAST, "failover": [{"provider": "codex", "model": "gpt-5.5"}]}},
    )
    run.env["PATH"] = f"{tmp_path / 'bin'}:/usr/bin:/bin"
    proc = run.cli("run", str(run.packet))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(run.invocations()) == 1  # claude only: the failover was never needed
    assert (tmp_path / "repo" / "hello.txt").read_text() == "hi\n"
