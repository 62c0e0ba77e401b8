"""Which processes are a run's: the /proc scan behind ``stop`` (real processes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompt_runner.state.lock import PidIdentity, process_start_time
from prompt_runner.supervise.members import MARKER_ENV, run_members
from tests.supervise._helpers import wait_for

# A parent that starts: a child that clears its environment, and a grandchild
# (via a second child) that leaves the session with setsid; it writes their pids.
TREE = r"""
import json, os, subprocess, sys, time
plain = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], env={})
escaper = subprocess.Popen([sys.executable, "-c",
    "import os, time; os.setsid(); time.sleep(60)"])
with open(sys.argv[1], "w") as fh:
    json.dump({"cleared": plain.pid, "escaped": escaper.pid}, fh)
time.sleep(60)
"""


@pytest.fixture
def started() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for p in procs:
        p.kill()
        p.wait()


def _tree(tmp_path: Path, started: list[subprocess.Popen[bytes]], **kw: object) -> dict[str, int]:
    out = tmp_path / "pids.json"
    env = {**os.environ, MARKER_ENV: "tok-1"}
    proc = subprocess.Popen([sys.executable, "-c", TREE, str(out)], env=env, **kw)  # type: ignore[call-overload]
    started.append(proc)
    pids: dict[str, int] = wait_for(
        lambda: out.exists() and json.loads(out.read_text()), 20, "the tree"
    )
    return {"parent": proc.pid, **pids}


def test_the_marker_finds_a_process_that_left_the_session_and_children_that_cleared_it(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    pids = _tree(tmp_path, started)
    outsider = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    started.append(outsider)
    time.sleep(0.2)
    found = {m.process.pid: m.why for m in run_members(tokens=["tok-1"])}
    assert found[pids["parent"]] == "marker"
    assert found[pids["escaped"]] == "marker"  # own session, the marker inherited
    assert found[pids["cleared"]] == "child"  # no marker, but the parent is the run's
    assert outsider.pid not in found
    other = {m.process.pid for m in run_members(tokens=["another-token"])}
    assert not other & set(pids.values())


def test_a_leaders_session_counts_only_for_processes_started_after_it(
    tmp_path: Path, started: list[subprocess.Popen[bytes]]
) -> None:
    leader = subprocess.Popen(
        [sys.executable, "-c", "import subprocess, sys, time; "
         "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], env={}); "
         "time.sleep(60)"],
        env={"PATH": os.environ.get("PATH", "")},
        start_new_session=True,
    )  # fmt: skip
    started.append(leader)
    start = process_start_time(leader.pid)
    assert start is not None

    def in_session() -> list[int]:
        found = run_members(leaders=[PidIdentity(leader.pid, start)])
        return [m.process.pid for m in found if m.why == "session"]

    # the leader and its child, neither carrying a marker
    members = wait_for(lambda: len(in_session()) == 2 and in_session(), 10, "the session")
    assert leader.pid in members
    # a leader identity from the future (a recycled pid) owns nothing here
    assert run_members(leaders=[PidIdentity(leader.pid, start + 10**9)]) == []
