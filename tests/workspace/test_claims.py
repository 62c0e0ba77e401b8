"""``workspace prepare`` leaves a workspace alone while someone else holds it: a live
run of it (exit 3, naming the run and ``stop``), another manifest registered under
its id (exit 2, naming both); and a run started while prepare writes waits for it.
Real git over bare remotes, real detached runs, real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import yaml

import prompt_runner
from prompt_runner.workspace.registry import registration_path
from tests.helpers.cli import cli
from tests.helpers.workspaces import default_prompts, git, make_workspace


def _slow(delay_ms: int) -> dict[str, dict[str, object]]:
    prompts = default_prompts()
    for pid, name in (("01", "one"), ("02", "two")):
        prompts[pid]["simulate"] = {
            "attempts": [{"delay_ms": delay_ms, "writes": [{"path": f"{name}.txt", "text": "1\n"}]}]
        }
    return prompts


def _wait(predicate: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _set_branch(manifest: Path, branch: str) -> None:
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    doc["commits"]["branch"] = branch
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def test_prepare_refuses_while_the_workspaces_run_is_live(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path, prompts=_slow(2500))
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    started = prompt_runner.start(manifest)
    try:
        assert started.live
        _set_branch(manifest, "prompt-runner/two")  # what prepare would check out
        refused = cli("workspace", "prepare", manifest)
        assert refused.returncode == 3, (refused.stdout, refused.stderr)
        assert refused.stderr.count("\n") == 1 and "Traceback" not in refused.stderr
        assert f"a run of demo-ws is live: pid {started.pid} (process_group" in refused.stderr
        assert "`prompt-runner stop --workspace demo-ws`" in refused.stderr
        for name in ("app", "lib"):  # nothing rewritten under the runner
            clone = ws.clone(name)
            assert git(clone, "branch", "--show-current").strip() == "prompt-runner/work"
            assert "prompt-runner/two" not in git(clone, "branch", "--list")
        planned = cli("workspace", "plan", manifest)
        assert planned.returncode == 1 and "is live: pid" in planned.stdout, planned.stdout
        _wait(lambda: not ws.layout.state.run_pid.exists(), 90, "the run to end")
        status = prompt_runner.workspace_status(manifest)
        assert status["state"] == "completed", status  # no prompt failed on repo_branch
        after = cli("workspace", "prepare", manifest)  # the run over: prepare goes ahead
        assert after.returncode == 0, after.stderr
        assert git(ws.clone("app"), "branch", "--show-current").strip() == "prompt-runner/two"
    finally:
        prompt_runner.stop(manifest, grace_s=5)


def test_an_id_registered_from_another_manifest_is_refused_naming_both(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    assert cli("workspace", "prepare", manifest).returncode == 0
    registration = registration_path("demo-ws")
    registered = registration.read_bytes()
    second = manifest.with_name("copy.yml")
    second.write_text(manifest.read_text(encoding="utf-8"), encoding="utf-8")
    _set_branch(second, "prompt-runner/other")
    ws = prompt_runner.load_workspace(manifest)
    heads = {n: git(ws.clone(n), "rev-parse", "HEAD") for n in ("app", "lib")}

    refused = cli("workspace", "prepare", second)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert str(manifest) in refused.stderr and "copy.yml: id:" in refused.stderr
    assert f"delete {registration}" in refused.stderr
    assert registration.read_bytes() == registered  # the registry still names the first
    for name in ("app", "lib"):  # its clones untouched
        assert git(ws.clone(name), "branch", "--show-current").strip() == "prompt-runner/work"
        assert git(ws.clone(name), "rev-parse", "HEAD") == heads[name]
    planned = cli("workspace", "plan", second, "--json")
    assert planned.returncode == 1
    assert any("already registered" in p for p in json.loads(planned.stdout)["problems"])
    doctored = cli("workspace", "doctor", second, "--json")
    checks = {c["name"]: c["level"] for c in json.loads(doctored.stdout)["checks"]}
    assert doctored.returncode == 1 and checks["registry"] == "error"
    assert cli("workspace", "prepare", manifest).returncode == 0  # its own manifest: fine

    manifest.unlink()  # the first manifest gone: the id is free to take
    taken = cli("workspace", "prepare", second)
    assert taken.returncode == 0, taken.stderr
    assert json.loads(registration.read_text())["manifest"] == str(second)


def test_a_manifest_of_the_id_with_roots_of_its_own_takes_the_registration_over(
    tmp_path: Path,
) -> None:
    manifest = make_workspace(tmp_path)  # auto roots
    assert cli("workspace", "prepare", manifest).returncode == 0
    first = prompt_runner.load_workspace(manifest)
    heads = {n: git(first.clone(n), "rev-parse", "HEAD") for n in ("app", "lib")}
    second = manifest.with_name("elsewhere.yml")  # a fleet worker's copy: its own roots
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    doc["operator"].update(
        workspace_root=str(tmp_path / "w2" / "data"), runtime_root=str(tmp_path / "w2" / "state")
    )
    doc["commits"]["branch"] = "prompt-runner/other"
    second.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")

    taken = cli("workspace", "prepare", second)
    assert taken.returncode == 0, taken.stderr
    assert f"-> {second} (it named {manifest})" in taken.stdout  # said, not silent
    assert json.loads(registration_path("demo-ws").read_text())["manifest"] == str(second)
    for name in ("app", "lib"):  # the first manifest's clones are not touched
        assert git(first.clone(name), "rev-parse", "HEAD") == heads[name]
        assert git(first.clone(name), "branch", "--show-current").strip() == "prompt-runner/work"
    assert (tmp_path / "w2" / "data" / "repos" / "app" / ".git").is_dir()


BUILD = (
    "import os, time\n"
    "time.sleep(3)\n"
    "open('tool', 'w').write('#!/bin/sh\\n')\n"
    "os.chmod('tool', 0o755)\n"
)


def test_a_run_started_while_prepare_writes_waits_for_it(tmp_path: Path) -> None:
    manifest = make_workspace(
        tmp_path,
        app_files={"tools/build.py": BUILD, "tools/.gitignore": "tool\n"},
        manifest={
            "contracts": {
                "artifacts": [
                    {
                        "id": "slow",
                        "repo": "app",
                        "project": "tools",
                        "build": [sys.executable, "build.py"],
                        "output": "tool",
                    }
                ]
            }
        },
    )
    ws = prompt_runner.load_workspace(manifest)
    taker: subprocess.Popen[bytes] | None = None
    preparing = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "workspace", "prepare", str(manifest)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # the clones are made with runs held off; the artifact's build then takes 3 s
        _wait(lambda: (ws.clone("app") / "tools" / "build.py").is_file(), 60, "the clone")
        taker = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys, pathlib\n"
                "from prompt_runner.state.lock import RunLock\n"
                "lock = RunLock(pathlib.Path(sys.argv[1])); lock.acquire(); lock.release()\n",
                str(ws.layout.state.run_pid),
            ],
            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        )
        time.sleep(1.0)
        assert preparing.poll() is None, "prepare ended before the check"
        assert taker.poll() is None, "a run took run.pid while prepare was writing"
        out, err = preparing.communicate(timeout=60)
        assert preparing.returncode == 0, (out, err)
        assert taker.wait(timeout=30) == 0  # once prepare is done, the run goes ahead
    finally:
        for child in (preparing, taker):
            if child is not None and child.poll() is None:
                child.kill()
                child.wait()


def test_start_of_a_manifest_whose_id_another_registered_is_refused(tmp_path: Path) -> None:
    # F-ws's gap: a copy never prepared, with the same id and auto roots, started
    # on the first manifest's clones and state
    manifest = make_workspace(tmp_path)
    assert cli("workspace", "prepare", manifest).returncode == 0
    second = manifest.with_name("copy.yml")
    second.write_text(manifest.read_text(encoding="utf-8"), encoding="utf-8")
    ws = prompt_runner.load_workspace(manifest)
    heads = {n: git(ws.clone(n), "rev-parse", "HEAD") for n in ("app", "lib")}

    refused = cli("start", second)
    assert refused.returncode == 2, (refused.stdout, refused.stderr)
    assert "starting this one would take them over" in refused.stderr
    assert str(manifest) in refused.stderr and "Traceback" not in refused.stderr
    assert not ws.layout.state.run_pid.exists()
    for name in ("app", "lib"):
        assert git(ws.clone(name), "rev-parse", "HEAD") == heads[name]
