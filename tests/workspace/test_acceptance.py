"""Issue 15's end-to-end acceptance, through the CLI as an operator runs it.

A workspace over two bare remotes on disk (``app`` holds the packet; every
prompt targets both), bootstrapped from the author's checkouts, with
``commits.push: after_prompt``:

* ``workspace plan``, ``workspace prepare`` twice (the second says nothing
  changed and changes no file), ``workspace doctor`` (clean), ``start``, then a
  40 s ``watch --require-running --require-progress`` passes while the
  simulated packet runs; the run completes, its commits are in the clones and
  on the remotes, and the author's checkouts are as they were;
* ``kill -9`` of the detached runner during a watch: the next sample reads
  ``not_running``, the watch exits 1 naming it, and a second ``start``
  completes the run with every prompt completed once.

Every command is a subprocess of ``python -m prompt_runner``.

A bounded watch with ``--require-running`` fails on a run that *completes*
before its last sample (``not_running``, state ``completed``), so the first
scenario's last prompt cannot finish before the watch has: its verifier waits
for a gate file the test writes once the watch exited. The prompts' delays add
up to the watch's 40 s, so that wait is short (only the watch's own start-up),
well inside the 20 s progress limit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.workspace import Workspace, load_workspace
from tests.helpers.workspaces import git, make_workspace, tree_digest
from tests.supervise._helpers import kill_marked, wait_for

GATE = (
    "import os, sys, time\n"
    "deadline = time.monotonic() + 150\n"
    "while not os.path.exists(sys.argv[1]):\n"
    "    if time.monotonic() > deadline:\n"
    "        sys.exit('the test never opened the gate')\n"
    "    time.sleep(0.1)\n"
)
"""A verifier command that passes once the file ``argv[1]`` exists."""


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path: Path) -> Iterator[None]:
    """Whatever the test's detached runs left running is killed (by their markers)."""
    yield
    tokens: list[str] = []
    for path in tmp_path.rglob("record.json"):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("schema") == "prompt_runner.supervisor/v1":
            tokens += [doc.get("marker", ""), *doc.get("earlier_markers", [])]
    kill_marked([t for t in tokens if t])


def cli(*args: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``.venv/bin/python -m prompt_runner ARGS``; never raises on its exit code."""
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def ok(res: subprocess.CompletedProcess[str], code: int = 0) -> str:
    assert res.returncode == code, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res.stdout


def prompts(count: int, delay_ms: int, gate: Path | None = None) -> dict[str, Any]:
    """``count`` prompts, each ``delay_ms`` of silence then a file in both repos,
    committed in both; the last one's verifier waits for ``gate`` when given.
    A fresh session or a resume of a prompt runs the same step."""
    out: dict[str, Any] = {}
    for n in range(1, count + 1):
        pid = f"{n:02d}"
        name = f"step{pid}.txt"
        step = {
            "delay_ms": delay_ms,
            "writes": [{"path": name, "text": f"{pid}\n"}, {"repo": "lib", "path": name}],
        }
        verify: dict[str, Any] = {"files_exist": [name]}
        if gate is not None and n == count:
            verify["commands"] = [
                {"exec": sys.executable, "args": ["-c", GATE, str(gate)], "timeout_ms": 180000}
            ]
        out[pid] = {
            "targets": ["app", "lib"],
            "commit": f"feat: step {pid}",
            "simulate": {"attempts": [step, step], "resume": step},
            "verify": verify,
        }
    return out


def workspace(root: Path, prompt_set: dict[str, Any]) -> Path:
    """The manifest of a pushing workspace whose two repositories come from the
    author's checkouts (``source``) and whose remotes are the bare repos."""
    return make_workspace(
        root,
        prompts=prompt_set,
        manifest={
            "repositories": {
                "app": {"remote": "../remotes/app.git", "ref": "main", "source": "../author/app"},
                "lib": {"remote": "../remotes/lib.git", "ref": "main", "source": "../author/lib"},
            },
            "commits": {"mode": "runner", "push": "after_prompt", "branch": "prompt-runner/work"},
        },
    )


def author_view(root: Path) -> dict[str, Any]:
    """What the author's checkouts hold: every file's size, mtime and mode, and per
    repo ``git status``, HEAD and every ref (read without optional locks)."""
    view: dict[str, Any] = {"tree": tree_digest(root / "author")}
    for name in ("app", "lib"):
        repo = root / "author" / name
        view[name] = [
            git(repo, "--no-optional-locks", "status", "--porcelain=v2", "--branch"),
            git(repo, "rev-parse", "HEAD"),
            git(repo, "for-each-ref", "--format=%(refname) %(objectname)"),
        ]
    return view


def run_state(manifest: Path) -> str:
    doc = json.loads(ok(cli("status", "--workspace", manifest, "--json")))
    state: str = doc["state"]
    return state


def completed_lines(ws: Workspace) -> list[str]:
    """The prompt id of every ``completed`` line of the workspace's progress.log."""
    lines = ws.layout.state.progress_log.read_text().splitlines()
    return [line.split(":")[0] for line in lines if line.split(":")[1:2] == ["completed"]]


def test_a_prepared_workspace_runs_detached_under_a_passing_watch_and_pushes(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "watch-ended"
    manifest = workspace(tmp_path, prompts(5, 8000, gate=gate))
    before = author_view(tmp_path)

    plan = json.loads(ok(cli("workspace", "plan", manifest, "--json")))
    assert plan["ok"] is True and plan["problems"] == []
    assert {r["name"]: r["action"] for r in plan["repositories"]} == {
        "app": "clone",
        "lib": "clone",
    }
    assert "nothing changed" not in ok(cli("workspace", "prepare", manifest))
    ws = load_workspace(manifest)
    prepared = (tree_digest(ws.workspace_root), tree_digest(ws.runtime_root))
    again = ok(cli("workspace", "prepare", manifest))
    assert "nothing changed (already prepared)" in again
    assert (tree_digest(ws.workspace_root), tree_digest(ws.runtime_root)) == prepared
    doctor = json.loads(ok(cli("workspace", "doctor", manifest, "--json")))
    assert doctor["ready"] is True
    assert [c for c in doctor["checks"] if c["level"] != "ok"] == []

    ok(cli("start", "--workspace", manifest))
    watched = cli(
        "watch", "--workspace", manifest, "--for", "40s", "--every", "2s",
        "--require-running", "--require-progress", "--progress-timeout", "20s", "--json",
        timeout=150,
    )  # fmt: skip
    gate.write_text("")
    lines = ok(watched).splitlines()
    docs = [json.loads(line) for line in lines]  # every line is one JSON document
    *samples, report = docs
    assert report["schema"] == "prompt_runner.watch.report/v1"
    assert report["passed"] is True and report["ended"] == "completed", report["violations"]
    assert report["sample_count"] == len(samples) >= 20
    assert all(s["schema"] == "prompt_runner.watch.sample/v1" for s in samples)
    assert [s["seq"] for s in samples] == list(range(1, len(samples) + 1))
    assert all(s["healthy"] and s["state"] == "running" for s in samples)
    assert samples[-1]["elapsed_s"] >= 40
    evidence = Path(report["evidence"])
    assert evidence.parent == ws.layout.state.acceptance_dir
    assert [json.loads(line) for line in evidence.read_text().splitlines()] == samples

    wait_for(lambda: run_state(manifest) == "completed", 90, "the run to complete")
    subjects = [f"feat: step {n:02d}" for n in range(5, 0, -1)]
    for name in ("app", "lib"):
        clone = ws.clone(name)
        assert git(clone, "rev-parse", "--abbrev-ref", "HEAD").strip() == "prompt-runner/work"
        assert git(clone, "log", "--format=%s", "-5").splitlines() == subjects
        assert git(clone, "status", "--porcelain") == ""
        head = git(clone, "rev-parse", "HEAD")
        assert git(tmp_path / "remotes" / f"{name}.git", "rev-parse", "prompt-runner/work") == head
    assert sorted(completed_lines(ws)) == [f"{n:02d}" for n in range(1, 6)]
    assert not (ws.packet_dir / ".prompt_runner").exists()  # no state in the clone
    assert author_view(tmp_path) == before  # the author's checkouts are untouched


def test_a_killed_runner_fails_the_watch_and_a_second_start_completes_the_run(
    tmp_path: Path,
) -> None:
    manifest = workspace(tmp_path, prompts(4, 3000))
    ok(cli("workspace", "prepare", manifest))
    ws = load_workspace(manifest)
    ok(cli("start", "--workspace", manifest))
    first_pid = json.loads(ws.layout.supervisor.record.read_text())["pid"]

    watch = subprocess.Popen(
        [
            sys.executable, "-m", "prompt_runner", "watch", "--workspace", str(manifest),
            "--for", "90s", "--every", "1s", "--require-running", "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    samples: list[dict[str, Any]] = []
    killed_at: float | None = None
    try:
        assert watch.stdout is not None
        for line in watch.stdout:
            doc = json.loads(line)
            if doc["schema"] != "prompt_runner.watch.sample/v1":
                report = doc
                break
            samples.append(doc)
            if killed_at is None and doc["prompt"] == "02":  # mid-session of prompt 02
                killed_at = time.time()
                os.kill(first_pid, signal.SIGKILL)
        else:
            raise AssertionError("the watch printed no report")
        assert watch.wait(timeout=30) == 1, watch.stderr.read() if watch.stderr else ""
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait()
        for stream in (watch.stdout, watch.stderr):
            if stream is not None:
                stream.close()
    assert killed_at is not None, "prompt 02 never started during the watch"

    *before_kill, failing = samples
    assert all(s["healthy"] and s["state"] == "running" for s in before_kill)
    assert all(health_at(s) < killed_at for s in before_kill)  # the next sample failed
    assert failing["healthy"] is False and failing["runner"] == "down"
    assert {"code": "not_running", "state": "unknown"} in failing["violations"]
    assert report["passed"] is False and report["ended"] == "unhealthy"
    assert report["failed_sample"] == failing["seq"]
    assert {"code": "not_running", "state": "unknown"} in report["violations"]
    saved = json.loads(Path(report["report"]).read_text())
    assert saved["violations"] == report["violations"] and saved["passed"] is False

    assert run_state(manifest) == "unhealthy"
    ok(cli("start", "--workspace", manifest))
    assert json.loads(ws.layout.supervisor.record.read_text())["pid"] != first_pid
    wait_for(lambda: run_state(manifest) == "completed", 90, "the resumed run to complete")
    assert sorted(completed_lines(ws)) == ["01", "02", "03", "04"]  # each exactly once
    subjects = [f"feat: step {n:02d}" for n in range(4, 0, -1)]
    for name in ("app", "lib"):
        log = git(ws.clone(name), "log", "--format=%s").splitlines()
        assert log[:4] == subjects and log.count("feat: step 02") == 1
        head = git(ws.clone(name), "rev-parse", "HEAD")
        assert git(tmp_path / "remotes" / f"{name}.git", "rev-parse", "prompt-runner/work") == head


def health_at(sample: dict[str, Any]) -> float:
    """A sample's ``at`` (ISO UTC) as epoch seconds."""
    return datetime.fromisoformat(sample["at"].replace("Z", "+00:00")).timestamp()
