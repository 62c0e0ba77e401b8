"""The judgement of one watch sample: state, progress age, waits and violations."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from prompt_runner.state.layout import StateLayout
from prompt_runner.state.lock import current_identity
from prompt_runner.watch import health
from prompt_runner.watch.health import Requirements, violations

STRICT = Requirements(require_running=True, require_progress=True, progress_timeout_s=10.0)


def sample(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "state": "running",
        "run_id": "R1",
        "progress_age_s": 1.0,
        "last_progress_at": "2026-12-01T12:00:00.000Z",
        "repo_details": [{"name": "app", "error": None}],
        "state_error": None,
    }
    return {**base, **fields}


def codes(found: list[dict[str, Any]]) -> list[str]:
    return [v["code"] for v in found]


def test_a_running_advancing_run_is_healthy() -> None:
    assert violations(sample(), STRICT) == []


def test_a_killed_runner_is_not_running_and_unhealthy() -> None:
    found = violations(sample(state="unknown", progress_age_s=50.0), STRICT)
    assert codes(found) == ["runtime_unhealthy", "not_running"]
    assert found[0]["reason"] == "runner_gone" and "R1" in found[0]["detail"]
    assert found[1] == {"code": "not_running", "state": "unknown"}


def test_progress_stale_carries_the_age_and_the_limit() -> None:
    found = violations(sample(progress_age_s=12.5), STRICT)
    assert found == [
        {
            "code": "progress_stale",
            "progress_age_s": 12.5,
            "progress_limit_s": 10.0,
            "last_progress_at": "2026-12-01T12:00:00.000Z",
        }
    ]
    assert health.describe(found[0]) == "progress_stale (no progress for 12s, limit 10s)"


def test_what_is_required_is_all_that_is_judged() -> None:
    lax = Requirements()
    assert violations(sample(state="completed", progress_age_s=999.0), lax) == []
    assert codes(violations(sample(state="completed"), STRICT)) == ["not_running"]
    # a finished run has nothing to advance: never stale
    only_progress = Requirements(require_progress=True, progress_timeout_s=1.0)
    assert violations(sample(state="completed", progress_age_s=999.0), only_progress) == []


def test_a_failed_run_a_corrupt_state_and_an_unreadable_repo_are_unhealthy() -> None:
    lax = Requirements()
    assert violations(sample(state="failed"), lax)[0]["reason"] == "run_failed"
    assert violations(sample(state="halted"), lax)[0]["reason"] == "run_failed"
    bad = violations(sample(state_error="runs/current.json: is not valid JSON"), lax)
    assert bad[0]["reason"] == "state_unreadable"
    gone = violations(sample(repo_details=[{"name": "app", "error": "path_not_found"}]), lax)
    assert gone[0]["reason"] == "repo_unreadable" and "app (path_not_found)" in gone[0]["detail"]
    assert violations(sample(state="interrupted"), lax) == []  # an operator's stop


def test_nothing_measurable_while_running_is_stale() -> None:
    found = violations(sample(progress_age_s=None), STRICT)
    assert codes(found) == ["progress_stale"] and found[0]["progress_age_s"] is None


def test_run_state() -> None:
    assert health.run_state(True, "completed") == "running"  # finished between two reads
    assert health.run_state(False, "running") == "unknown"
    assert health.run_state(False, None) == "not_started"
    assert health.run_state(False, "completed") == "completed"


def test_a_wait_counts_as_progress_until_it_ends() -> None:
    now = 10_000.0
    until = health.iso_of(now + 3600)
    last, age = health.progress_age(
        newest=[now - 7200], started_at=None, waiting_until=until, now=now
    )
    assert age == 0.0 and last == now
    # the reset passed and the run did not wake: the age runs from the reset
    past = health.iso_of(now - 30)
    last, age = health.progress_age(
        newest=[now - 7200], started_at=None, waiting_until=past, now=now
    )
    assert age == 30.0
    assert health.progress_age(newest=[None], started_at=None, waiting_until=None, now=now) == (
        None,
        None,
    )
    # a run that just started counts from its start
    start = health.iso_of(now - 2)
    assert health.progress_age(newest=[None], started_at=start, waiting_until=None, now=now)[1] == (
        2.0
    )


def _state_root(tmp_path: Path) -> StateLayout:
    layout = StateLayout(tmp_path / "state")
    layout.runs_dir.mkdir(parents=True)
    layout.control_dir.mkdir()
    layout.current_run.write_text(
        json.dumps({"run_id": "R1", "status": "running", "started_at": "2026-01-01T00:00:00Z"})
    )
    layout.run_dir("R1").mkdir()
    layout.journal("R1").write_text(
        '{"seq":1,"type":"run_started"}\n{"seq":2,"type":"prompt_started"}\n{"seq":3,'
    )  # a torn last record
    return layout


def test_run_facts_read_the_state_root_without_writing(tmp_path: Path) -> None:
    layout = _state_root(tmp_path)
    before = sorted(p.name for p in layout.root.rglob("*"))
    facts = health.run_facts(layout, alive=False, now=time.time())
    assert facts["run_id"] == "R1" and facts["state"] == "unknown"
    assert facts["journal_seq"] == 2
    assert facts["state_error"] is None and facts["push"] is None
    assert sorted(p.name for p in layout.root.rglob("*")) == before


def test_a_live_waiting_run_reads_its_wait_from_the_snapshot(tmp_path: Path) -> None:
    """H-usage's ``waiting_until`` (control snapshot): a live run silent for two
    hours while it waits for a known reset is healthy, never progress_stale."""
    layout = _state_root(tmp_path)
    layout.run_pid.write_text(current_identity().render())
    old = time.time() - 7200
    for path in (layout.current_run, layout.journal("R1")):
        os.utime(path, (old, old))
    now = time.time()
    layout.snapshot.write_text(
        json.dumps({"run_id": "R1", "waiting_until": health.iso_of(now + 600)})
    )
    facts = health.run_facts(layout, alive=True, now=now)
    assert facts["state"] == "running" and facts["waiting_until"] is not None
    _, age = health.progress_age(
        newest=[facts["state_progress"]],
        started_at=facts["started_at"],
        waiting_until=facts["waiting_until"],
        now=now,
    )
    assert age == 0.0
    assert violations(sample(progress_age_s=age), STRICT) == []
    # not waiting: the same silence is stale
    layout.snapshot.write_text(json.dumps({"run_id": "R1", "waiting_until": None}))
    facts = health.run_facts(layout, alive=True, now=now)
    _, age = health.progress_age(
        newest=[facts["state_progress"]],
        started_at=facts["started_at"],
        waiting_until=facts["waiting_until"],
        now=now,
    )
    assert age is not None and age > 7000
    assert codes(violations(sample(progress_age_s=age), STRICT)) == ["progress_stale"]


def test_a_dead_runners_stale_wait_is_no_wait(tmp_path: Path) -> None:
    layout = _state_root(tmp_path)
    layout.snapshot.write_text(json.dumps({"waiting_until": health.iso_of(time.time() + 600)}))
    assert health.run_facts(layout, alive=False, now=time.time())["waiting_until"] is None


def test_a_corrupt_current_run_is_state_unreadable(tmp_path: Path) -> None:
    layout = _state_root(tmp_path)
    layout.current_run.write_text("{not json")
    facts = health.run_facts(layout, alive=False, now=time.time())
    assert facts["state_error"] and "current.json" in facts["state_error"]
    assert facts["state"] == "not_started"
