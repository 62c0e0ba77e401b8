"""What `stop` says matches what happened: a runner that exited without
reading the request ended by itself, and `stop` does not claim it stopped "on
the request" (a new user's finding: a run that had just finished)."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.supervise.report import Ended, StopReport


def _report(outcome: str | None, ended: tuple[Ended, ...]) -> StopReport:
    return StopReport(
        label="demo",
        state_dir=Path("/tmp/state"),
        containment="process_group",
        run_id="R1",
        request="20261201-000000-000000-1.json",
        request_outcome=outcome,
        stopped_by="request",
        ended=ended,
        left=(),
        duration_ms=10,
    )


def test_a_runner_that_never_read_the_request_ended_by_itself() -> None:
    exited = (Ended(pid=1, command="prompt-runner run demo", how="exited", why="marker"),)
    lines = _report(None, exited).lines()
    assert lines[0] == "Asked the runner to stop (not read)."
    assert lines[-1] == (
        "Stopped demo (it ended before it read the request); no process of the run is left."
    )


def test_a_runner_that_applied_the_request_stopped_on_it() -> None:
    exited = (Ended(pid=1, command="prompt-runner run demo", how="exited", why="marker"),)
    lines = _report("applied", exited).lines()
    assert lines[-1] == "Stopped demo (on the request); no process of the run is left."


def test_a_kill_is_named_whatever_the_request_did() -> None:
    killed = (Ended(pid=1, command="prompt-runner run demo", how="SIGTERM", why="marker"),)
    assert "1 process(es) had to be killed" in _report(None, killed).lines()[-1]
