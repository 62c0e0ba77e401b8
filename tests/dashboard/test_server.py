"""The dashboard's data over HTTP and SSE, on real runs: the run page, actions and
their receipts, and the faults it must render (torn lines, a damaged or deleted
snapshot, a rollover to a new run id, a dead runner)."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from prompt_runner.control.store import ControlStore
from tests.dashboard.conftest import (
    NOREPAIR,
    Dashboard,
    make_packet,
    serve,
    start_run,
    wait_for,
)
from tests.helpers.cli import cli

PASSES = {
    "simulate": {
        "attempts": [{"messages": ["wrote a"], "writes": [{"path": "a.txt", "text": "a\n"}]}]
    },
    "verify": {"files_exist": ["a.txt"]},
}
UNMET = {
    "simulate": {"attempts": [{"writes": [{"path": "b.txt", "text": "b\n"}]}]},
    "verify": {"files_exist": ["b.txt", "c.txt"], "files_absent": ["a.txt"]},
    "recovery": {**NOREPAIR},
}
SLOW = {"simulate": {"attempts": [{"delay_ms": 60_000, "messages": ["never"]}]}}


class Events:
    """A server-sent event stream read on a thread: ``next(name)`` returns the oldest
    ``name`` event not returned yet, waiting for one. Events of other names that
    arrive meanwhile are kept for their own ``next``: the server sends what each
    file change shows, so two kinds (a control-log line, then the receipt's answer)
    may come in either order."""

    def __init__(self, url: str) -> None:
        self.items: queue.Queue[tuple[str, Any]] = queue.Queue()
        self._skipped: list[tuple[str, Any]] = []
        self._client = httpx.Client(timeout=None)
        self._thread = threading.Thread(target=self._read, args=(url,), daemon=True)
        self._thread.start()

    def _read(self, url: str) -> None:
        event = "message"
        try:
            with self._client.stream("GET", url) as response:
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:"):
                        self.items.put((event, json.loads(line[5:].strip())))
        except httpx.HTTPError:
            pass

    def next(self, name: str, *, timeout: float = 15.0) -> Any:
        for i, (event, data) in enumerate(self._skipped):
            if event == name:
                del self._skipped[i]
                return data
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no {name!r} event in {timeout} s"
            try:
                event, data = self.items.get(timeout=left)
            except queue.Empty:
                continue
            if event == name:
                return data
            self._skipped.append((event, data))

    def close(self) -> None:
        self._client.close()


@contextmanager
def events(url: str) -> Iterator[Events]:
    reader = Events(url)
    try:
        yield reader
    finally:
        reader.close()


def _row_of(row: dict[str, Any]) -> tuple[Any, Any, Any]:
    return row["state"], row["prompt_id"], row["attempt"]


def _post(dash: Dashboard, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    csrf = re.search(r'name="pr-csrf" content="([^"]+)"', httpx.get(dash.base + "/").text)
    assert csrf
    headers = {"Origin": f"http://127.0.0.1:{dash.port}", "X-CSRF-Token": csrf.group(1)}
    response = httpx.post(dash.base + path, json=body, headers=headers)
    assert response.status_code == status, response.text
    return response.json()  # type: ignore[no-any-return]


def test_the_run_page_shows_prompts_attempts_reports_and_commits(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": PASSES, "02": UNMET})
    assert cli("run", packet).returncode == 1  # 02's contract has unmet items
    with serve(packet) as dash:
        doc = httpx.get(dash.base + "/api/runs/demo").json()
        row = doc["row"]
        assert (row["state"], row["prompt_id"], row["prompt_index"], row["prompt_total"]) == (
            "failed",
            "02",
            2,
            2,
        )
        first, second = doc["prompts"]
        assert (first["id"], first["status"], second["status"]) == (
            "01",
            "completed",
            "verification_failed",
        )
        attempt = second["attempts"][0]
        assert (attempt["mode"], attempt["status"], attempt["decision"]) == (
            "run",
            "verification_failed",
            "fail",
        )
        items = attempt["verifier"]["items"]
        assert [i["pass"] for i in items] == [False, False, True]  # unmet first
        assert {i["path"] for i in items[:2]} == {"c.txt", "a.txt"}
        assert "c.txt does not exist" in " ".join(i["details"] for i in items)
        assert attempt["verifier"]["unmet"] == 2
        ((repo, sha),) = first["commits"].items()
        diff = httpx.get(f"{dash.base}/api/runs/demo/commits/{repo}/{sha}").json()["text"]
        assert sha in diff and "+a" in diff and "a.txt" in diff
        # the stream, as studio renders it
        page = httpx.get(dash.base + "/api/runs/demo/events").json()
        lines = [i["line"] for i in page["items"]]
        assert "» wrote a" in lines
        assert any(line.startswith("✎ create a.txt") for line in lines)
        assert lines[-1].startswith("■ run ") and lines[-1].endswith("finished: failed")
        patch = next(i for i in page["items"] if i["kind"] == "file_change")
        assert patch["patch"].endswith("+a") and patch["patch_source"] == "tool"
        older = httpx.get(
            dash.base + "/api/runs/demo/events",
            params={"before": page["items"][3]["off"], "limit": 2},
        ).json()
        assert [i["off"] for i in older["items"]] == [i["off"] for i in page["items"][1:3]]


def test_actions_answer_pending_then_the_receipt_and_relax_needs_confirmation(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {"01": PASSES})
    assert cli("run", packet).returncode == 0
    with serve(packet) as dash:
        refused = _post(
            dash,
            "/api/runs/demo/actions/relax",
            {"prompt_id": "01", "drop": ["files_exist"], "reason": "flaky"},
        )
        assert refused["state"] == "refused" and "confirm" in refused["reason"]
        also_refused = _post(
            dash,
            "/api/runs/demo/actions/relax",
            {"prompt_id": "01", "drop": ["files_exist"], "reason": "x", "confirm": "yes"},
            400,
        )
        assert also_refused["state"] == "refused"  # only the JSON value true confirms
        amended = _post(
            dash,
            "/api/runs/demo/actions/amend",
            {
                "prompt_id": "01",
                "add": {"files_exist": ["more.txt"]},
                "reason": "needed",
                "author": "ada",
            },
        )
        assert amended["state"] == "applied" and "more.txt" in amended["detail"]
        steer = _post(dash, "/api/runs/demo/actions/steer", {"text": "go on"})
        assert steer["state"] == "refused" and "no live or unfinished run" in steer["reason"]
        view = _post(dash, "/api/runs/demo/actions/view", {"diff": "full"})
        assert view["state"] == "pending" and view["request"]
        answer = httpx.get(f"{dash.base}/api/runs/demo/requests/{view['request']}").json()
        assert answer["state"] == "pending"  # no runner lives: the next run decides it
    log = ControlStore(packet / ".prompt_runner").read_log()
    rejected = [e for e in log if e.get("outcome") == "rejected"]
    assert {e["command"] for e in rejected} >= {"relax", "steer"}  # refusals are in the log too
    amendment = json.loads(
        (packet / ".prompt_runner" / "amendments" / "01.jsonl").read_text().splitlines()[-1]
    )
    assert amendment["author"] == "ada"


def test_a_live_run_receipts_a_view_change_and_the_stream_follows(
    tmp_path: Path, stop_later: Any
) -> None:
    packet = make_packet(tmp_path, {"01": SLOW})
    with serve(packet) as dash:
        run = stop_later(start_run(packet, "--no-commit"))
        wait_for(
            lambda: httpx.get(dash.base + "/api/overview").json()["runs"][0]["state"] == "running"
        )
        first = httpx.get(dash.base + "/api/runs/demo/events").json()
        log = httpx.get(dash.base + "/api/runs/demo/log").json()
        url = (
            f"{dash.base}/api/runs/demo/stream"
            f"?events={first['end']}&log={log['end']}&stream={first['stream']}"
        )
        with events(url) as stream:
            sent = _post(
                dash, "/api/runs/demo/actions/view", {"diff": "full", "log_mode": "verbose"}
            )
            assert sent["state"] == "pending"
            answer = stream.next("answer")
            assert (answer["request"], answer["state"]) == (sent["request"], "applied")
            entries = stream.next("log")["items"]
            assert entries[-1]["command"] == "set_view" and entries[-1]["outcome"] == "applied"
        store = ControlStore(packet / ".prompt_runner")
        view = wait_for(
            lambda: (
                (store.read_snapshot() or {}).get("view", {}).get("diff") == "full"
                and store.read_snapshot()
            )
        )["view"]
        assert view["log_mode"] == "verbose"  # the runner wrote it at its next heartbeat
        assert (
            httpx.get(f"{dash.base}/api/runs/demo/requests/{sent['request']}").json()["state"]
            == "applied"
        )
        run.send_signal(signal.SIGINT)
        run.wait(timeout=20)


def test_a_killed_runner_reads_down_and_the_server_keeps_serving(
    tmp_path: Path, stop_later: Any
) -> None:
    packet = make_packet(tmp_path, {"01": SLOW})
    with serve(packet) as dash:
        run = stop_later(start_run(packet, "--no-commit"))
        with events(dash.base + "/api/stream") as stream:
            # running is read from run.pid, the prompt and attempt from the snapshot after it
            wait_for(lambda: _row_of(stream.next("row")) == ("running", "01", 1))
            os.kill(run.pid, signal.SIGKILL)
            killed = time.monotonic()
            run.wait()
            while (row := stream.next("row", timeout=5))["state"] != "down":
                pass
            assert time.monotonic() - killed < 2.0
        assert (row["prompt_id"], row["attempt"]) == ("01", 1)  # the last known state
        assert (
            httpx.get(dash.base + "/api/runs/demo").json()["prompts"][0]["status"] == "interrupted"
        )
        assert httpx.get(dash.base + "/api/overview").json()["runs"][0]["state"] == "down"


def test_damaged_files_render_sensibly(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": PASSES})
    assert cli("run", packet, "--no-commit").returncode == 0
    control = packet / ".prompt_runner" / "control"
    with serve(packet) as dash:
        overview = dash.base + "/api/overview"
        (control / "snapshot.json").write_text('{"run_id": "trunc')  # a power loss
        row = httpx.get(overview).json()["runs"][0]
        assert row["state"] == "completed" and any("damaged" in n for n in row["notes"])
        (control / "snapshot.json").unlink()
        assert (
            httpx.get(overview).json()["runs"][0]["state"] == "completed"
        )  # from runs/current.json
        with (control / "events.jsonl").open("ab") as f:
            f.write(b'{"kind": "assistant_text", "text": "half')  # torn
        page = httpx.get(dash.base + "/api/runs/demo/events").json()
        assert page["items"][-1]["kind"] == "run_finished"
        (packet / ".prompt_runner" / "runs" / "current.json").write_text("not json")
        row = httpx.get(overview).json()["runs"][0]
        assert row["state"] == "no run" and row["notes"]
        (packet / ".prompt_runner" / "prompts" / "01.jsonl").write_text("garbage\n")
        prompts = httpx.get(dash.base + "/api/runs/demo").json()["prompts"]
        assert prompts == [] or "corrupt" in (prompts[0]["error"] or "")
        subprocess.run(["rm", "-rf", str(packet / ".prompt_runner")], check=True)
        assert httpx.get(overview).json()["runs"][0]["state"] == "no run"
        assert httpx.get(dash.base + "/api/runs/demo/events").json()["items"] == []
        assert dash.proc.poll() is None


def test_a_new_run_id_resets_the_followers_stream(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": PASSES})
    assert cli("run", packet, "--no-commit").returncode == 0
    with serve(packet) as dash:
        first = httpx.get(dash.base + "/api/runs/demo/events").json()
        url = (
            f"{dash.base}/api/runs/demo/stream?events={first['end']}&log=0&stream={first['stream']}"
        )
        with events(url) as stream:
            assert cli("run", packet, "--no-commit", "--new-run", "01").returncode == 0
            reset = stream.next("reset")
        assert reset["run_id"] != first["run_id"]
        again = httpx.get(dash.base + "/api/runs/demo/events").json()
        assert again["run_id"] == reset["run_id"] and again["stream"] != first["stream"]
        assert again["items"][0]["kind"] == "session_started"


def test_a_packet_with_no_run_yet_and_two_runs_of_one_name(tmp_path: Path) -> None:
    one = make_packet(tmp_path / "a", {"01": {}})
    two = make_packet(tmp_path / "b", {"01": {}})
    with serve(one, two) as dash:
        runs = httpx.get(dash.base + "/api/overview").json()["runs"]
        assert [(r["key"], r["name"], r["state"]) for r in runs] == [
            ("demo", "demo (demo)", "no run"),
            ("demo-2", "demo (demo-2)", "no run"),
        ]
    bad = cli("dashboard", tmp_path / "nowhere", "--port", "0")
    assert bad.returncode == 2 and "is not a directory" in bad.stderr
    twice = cli("dashboard", one, one, "--port", "0")
    assert twice.returncode == 2 and "given twice" in twice.stderr


def test_a_workspace_run_is_read_and_steered_in_its_own_state_root(
    tmp_path: Path, stop_later: Any
) -> None:
    import prompt_runner
    from prompt_runner.workspace.runspec import run_command
    from tests.helpers.workspaces import default_prompts, make_workspace

    prompts = default_prompts()
    prompts["01"]["simulate"] = {"attempts": [{"delay_ms": 60_000, "messages": ["slow"]}]}
    manifest = make_workspace(tmp_path / "ws", prompts=prompts)
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    packet = make_packet(tmp_path / "p", {"01": PASSES})
    assert cli("run", packet, "--no-commit").returncode == 0
    with serve(packet, args=("--workspace", str(manifest))) as dash:
        cmd = run_command(ws)
        runner = stop_later(
            subprocess.Popen(
                cmd.argv,
                cwd=cmd.cwd,
                env=cmd.full_env(os.environ),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )

        def rows() -> dict[str, Any]:
            return {r["key"]: r for r in httpx.get(dash.base + "/api/overview").json()["runs"]}

        # running is read from run.pid, the prompt from the snapshot written just after
        wait_for(lambda: rows()["demo-ws"]["state"] == "running" and rows()["demo-ws"]["prompt_id"])
        row = rows()["demo-ws"]
        assert (row["kind"], row["prompt_id"], row["prompt_total"]) == ("workspace", "01", 2)
        assert rows()["demo"]["state"] == "completed"  # the packet beside it
        sent = _post(dash, "/api/runs/demo-ws/actions/view", {"thinking": "show"})
        assert sent["state"] == "pending"
        store = ControlStore(ws.state_dir)
        wait_for(lambda: (store.read_outcome(sent["request"]) or {}).get("outcome") == "applied")
        assert not (ws.packet_dir / ".prompt_runner").exists()  # state stays outside the clone
        assert list((packet / ".prompt_runner" / "control" / "requests").iterdir()) == []
        page = httpx.get(dash.base + "/api/runs/demo-ws/events").json()
        assert page["items"][0]["line"].startswith("┌ session sim-01")
        runner.send_signal(signal.SIGINT)
        runner.wait(timeout=20)


def test_stop_from_the_page_ends_the_live_run_cleanly(tmp_path: Path, stop_later: Any) -> None:
    packet = make_packet(tmp_path, {"01": SLOW, "02": PASSES})
    with serve(packet) as dash:
        run = stop_later(start_run(packet, "--no-commit"))
        wait_for(
            lambda: httpx.get(dash.base + "/api/overview").json()["runs"][0]["state"] == "running"
        )
        with events(f"{dash.base}/api/runs/demo/stream?events=0&log=0&stream=none") as stream:
            sent = _post(dash, "/api/runs/demo/actions/stop", {"author": "ops"})
            assert (sent["action"], sent["state"]) == ("stop", "pending")
            answer = stream.next("answer")
            assert (answer["request"], answer["state"]) == (sent["request"], "applied")
        run.wait(timeout=30)
        doc = httpx.get(dash.base + "/api/runs/demo").json()
        assert doc["row"]["state"] != "running"
        statuses = {p["id"]: p["status"] for p in doc["prompts"]}
        assert statuses["01"] == "interrupted" and statuses.get("02", "pending") == "pending"
    (entry,) = [
        e for e in ControlStore(packet / ".prompt_runner").read_log() if e.get("command") == "stop"
    ]
    assert (entry["outcome"], entry["author"]) == ("applied", "ops")


def test_every_request_the_page_sends_is_a_kind_the_control_plane_knows() -> None:
    """The page's buttons and forms name actions the server has; each action is logged
    as a control command the control plane knows (a wake wired before the plane had it
    would be refused as an unknown command)."""
    from importlib import resources

    from prompt_runner.control.requests import COMMANDS as PLANE_COMMANDS
    from prompt_runner.dashboard.actions import ACTIONS, COMMANDS

    static = resources.files("prompt_runner.dashboard").joinpath("static")
    script = static.joinpath("dashboard.js").read_text(encoding="utf-8")
    page = static.joinpath("run.html").read_text(encoding="utf-8")
    sent = set(re.findall(r'\bsend\(\s*"([a-z_]+)"', script))
    sent |= set(re.findall(r'data-action="([a-z_]+)"', page))
    assert sent == set(ACTIONS), sent ^ set(ACTIONS)
    assert set(COMMANDS) == set(ACTIONS)
    assert {"wake", "stop"} <= set(COMMANDS.values())
    assert set(COMMANDS.values()) <= set(PLANE_COMMANDS)


def test_wake_is_refused_with_the_reason_when_the_run_does_not_wait(
    tmp_path: Path, stop_later: Any
) -> None:
    packet = make_packet(tmp_path, {"01": SLOW})
    with serve(packet) as dash:
        run = stop_later(start_run(packet, "--no-commit"))
        wait_for(
            lambda: httpx.get(dash.base + "/api/overview").json()["runs"][0]["state"] == "running"
        )
        with events(f"{dash.base}/api/runs/demo/stream?events=0&log=0&stream=none") as stream:
            sent = _post(dash, "/api/runs/demo/actions/wake", {"author": "ops"})
            assert (sent["action"], sent["state"]) == ("wake", "pending")
            answer = stream.next("answer")
        assert (answer["request"], answer["state"]) == (sent["request"], "refused")
        assert answer["reason"] == "the run is not waiting for a usage window"
        run.send_signal(signal.SIGINT)
        run.wait(timeout=30)
        wait_for(lambda: httpx.get(dash.base + "/api/overview").json()["runs"][0]["live"] is False)
        # no live run: refused at once, nothing written for a later run to find
        late = _post(dash, "/api/runs/demo/actions/wake", {"author": "ops"})
        assert (late["state"], late["request"]) == ("refused", None)
        assert "there is no live run to wake" in late["reason"]
        requests = packet / ".prompt_runner" / "control" / "requests"
        assert list(requests.iterdir()) == []
    logged = [
        (e["outcome"], e["author"])
        for e in ControlStore(packet / ".prompt_runner").read_log()
        if e.get("command") == "wake"
    ]
    assert logged == [("rejected", "ops"), ("rejected", "ops")]


def test_a_fleet_member_the_fleet_could_not_start_reads_error_with_the_reason(
    tmp_path: Path,
) -> None:
    """Two members over bare remotes, one remote gone: `fleet submit` completes one and
    cannot start the other; the overview lists both under the fleet, the second as
    error with the queue's reason, and its run page still opens."""
    import shutil

    import yaml

    from tests.helpers.fleets import make_fleet, sleepy_prompts

    path = make_fleet(tmp_path, 2, prompts=sleepy_prompts(1, delay_ms=0))
    shutil.rmtree(tmp_path / "remotes" / "t1.git")
    submitted = cli("fleet", "submit", path, timeout=120)
    assert submitted.returncode == 1, submitted.stdout + submitted.stderr
    with serve(args=("--fleet", str(path))) as dash:
        doc = httpx.get(dash.base + "/api/overview").json()
        assert doc["fleets"] == [
            {"id": "mig", "manifest": str(path), "members": ["mig-t0", "mig-t1"]}
        ]
        rows = {r["key"]: r for r in doc["runs"]}
        assert (rows["mig-t0"]["fleet"], rows["mig-t0"]["state"]) == ("mig", "completed")
        assert (rows["mig-t1"]["fleet"], rows["mig-t1"]["state"]) == ("mig", "error")
        (note,) = rows["mig-t1"]["notes"]
        assert note.startswith("the fleet could not start it: ")
        assert "t1.git" in note
        page = httpx.get(dash.base + "/api/runs/mig-t1")
        assert page.status_code == 200 and page.json()["prompts"] == []
    # a Temporal fleet's members live in the workers' roots: refused, naming the key
    doc = yaml.safe_load(path.read_text())
    temporal = path.with_name("temporal.yml")
    temporal.write_text(yaml.safe_dump({**doc, "id": "far", "engine": "temporal"}))
    refused = cli("dashboard", "--fleet", temporal, "--port", "0")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "temporal fleet" in refused.stderr and "engine" in refused.stderr
    assert "Traceback" not in refused.stderr
    missing = cli("dashboard", "--fleet", tmp_path / "nope.yml", "--port", "0")
    assert missing.returncode == 2 and "nope.yml" in missing.stderr
    twice = cli("dashboard", "--fleet", path, "--fleet", path, "--port", "0")
    assert twice.returncode == 2 and "given twice" in twice.stderr
