"""A member whose ``start`` wait ends while its runner is still starting
(``StillStartingError``): its run goes on, so the local engine follows it as
it follows a started one -- ``started`` in the queue, then the outcome its own
state says once it has ended (``completed``) -- never ``error``/``failed``
while it runs (fleet/local.py).

Real detached runs (``process_group``) of a simulated packet in a real fleet
(bare remotes, clones); each runner is slowed by 1.5 s before it starts (a
``sitecustomize`` on its ``PYTHONPATH`` that sleeps only in a process carrying
the launch's marker, so this process is not slowed), and the engine waits
only 0.3 s for a run to be live.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.fleet.local import submit_local
from prompt_runner.state.jsonl import read_records
from prompt_runner.supervise.members import MARKER_ENV
from tests.helpers.fleets import make_fleet, sleepy_prompts

SLOW_START = f"""\
import os, time
if os.environ.get({MARKER_ENV!r}):
    time.sleep(1.5)
"""


def test_a_member_still_starting_when_the_wait_ends_is_followed_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = make_fleet(
        tmp_path, 2, prompts=sleepy_prompts(2, delay_ms=100), fleet={"concurrency": 2}
    )
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_START, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(site))  # the runners' environment, not a mock
    fleet = prompt_runner.load_fleet(path)
    lines: list[str] = []
    result = submit_local(fleet, poll_s=0.05, live_timeout_s=0.3, say=lines.append)
    assert [(m.workspace, m.state, m.action, m.reason) for m in result.members] == [
        ("mig-t0", "completed", "started", None),
        ("mig-t1", "completed", "started", None),
    ], (result.members, lines)
    assert result.outcome == "completed" and result.exit_code == 0
    assert any("mig-t0: started" in line and "still starting" in line for line in lines), lines
    records = read_records(fleet.layout.queue, strict=False)
    started = [r for r in records if r.get("event") == "started"]
    assert Counter(r["member"] for r in started) == Counter({"mig-t0": 1, "mig-t1": 1})
    assert all(isinstance(r["pid"], int) and r["pid"] > 0 for r in started), started
    finished = {r["member"]: r["state"] for r in records if r.get("event") == "finished"}
    assert finished == {"mig-t0": "completed", "mig-t1": "completed"}
    # what it said is true: each run did its whole packet, once
    for m in fleet.members:
        log = m.workspace.layout.state.progress_log.read_text().splitlines()
        done = Counter(line.split(":")[0] for line in log if ":completed" in line)
        assert done == Counter({"01": 1, "02": 1}), (m.id, log)
    rows = {r.workspace: r.state for r in prompt_runner.fleet_status(fleet).rows}
    assert rows == {"mig-t0": "completed", "mig-t1": "completed"}


def test_a_member_that_ends_while_still_starting_names_its_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner ends (exit 2) after the wait, before it was live: the member is
    followed to that end, and its reason names the runner's log."""
    path = make_fleet(tmp_path, 1, prompts=sleepy_prompts(1, delay_ms=50))
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        SLOW_START + "    print('refused: bad input', flush=True)\n    os._exit(2)\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    fleet = prompt_runner.load_fleet(path)
    result = submit_local(fleet, poll_s=0.05, live_timeout_s=0.3)
    (member,) = result.members
    assert (member.state, member.action) == ("stopped", "started"), member
    stderr = fleet.members[0].workspace.layout.supervisor.stderr
    assert member.reason == (
        f"its run ended without a record (it was still starting; see {stderr})"
    ), member.reason
    assert result.outcome == "failed"
