"""workspace doctor: read-only readiness; a dirty clone is resumable work, not an error."""

from __future__ import annotations

import os
from pathlib import Path

import prompt_runner
from prompt_runner.workspace.toolchain import Pin, check_pin, containment_available
from tests.helpers.cli import cli
from tests.helpers.workspaces import git, make_workspace, tree_digest


def _fake_tool(bin_dir: Path, name: str, says: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    tool = bin_dir / name
    tool.write_text(f"#!/bin/sh\necho '{says}'\n")
    tool.chmod(0o755)


def test_a_prepared_workspace_is_ready_and_doctor_writes_nothing(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path, app_files={".tool-versions": "fakepy 3.11.7 # pinned\n"})
    _fake_tool(tmp_path / "bin", "fakepy", "Fakepy 3.11.7")
    os.environ["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    before = [tree_digest(ws.workspace_root), tree_digest(ws.runtime_root)]
    report = prompt_runner.doctor_workspace(ws)
    levels = {c.name: c.level for c in report.checks}
    assert report.ready, report.to_dict()
    assert levels["clone:app"] == levels["clone:lib"] == "ok"
    assert levels["pin:fakepy"] == levels["runtime"] == levels["containment"] == "ok"
    assert levels["agent:simulated"] == levels["tool:git"] == "ok"
    assert [tree_digest(ws.workspace_root), tree_digest(ws.runtime_root)] == before
    done = cli("workspace", "doctor", manifest)
    assert done.returncode == 0 and done.stdout.strip().endswith("Ready.")


def test_dirty_clones_are_resumable_work_not_errors(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    (ws.clone("app") / "half.txt").write_text("unfinished\n")
    report = prompt_runner.doctor_workspace(ws)
    assert report.ready and report.resumable == ("app",)
    dirty = next(c for c in report.checks if c.name == "dirty:app")
    assert (
        dirty.level == "warning"
        and "resumable work" in dirty.message
        and "half.txt" in dirty.message
    )
    # work committed on top of the ref is fine too
    git(ws.clone("app"), "add", "half.txt")
    git(ws.clone("app"), "commit", "-q", "-m", "work")
    again = prompt_runner.doctor_workspace(ws)
    assert again.ready and "1 commit(s) of work on top" in next(
        c.message for c in again.checks if c.name == "clone:app"
    )


def test_what_is_not_ready_is_named(tmp_path: Path) -> None:
    manifest = make_workspace(
        tmp_path, app_files={".tool-versions": "fakepy 3.12.1\nnosuchtool 1\n"}
    )
    _fake_tool(tmp_path / "bin", "fakepy", "Fakepy 3.11.7")
    os.environ["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}"
    before = prompt_runner.doctor_workspace(manifest)  # nothing prepared yet
    assert not before.ready
    assert "does not exist; run prepare" in next(
        c.message for c in before.checks if c.name == "clone:app"
    )
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    git(ws.clone("lib"), "checkout", "-q", "main")  # off the work branch
    report = prompt_runner.doctor_workspace(ws)
    errors = {c.name: c.message for c in report.checks if c.level == "error"}
    assert "not the work branch prompt-runner/work" in errors["clone:lib"]
    assert "pins fakepy 3.12.1, but" in errors["pin:fakepy"] and "3.11.7" in errors["pin:fakepy"]
    assert "no nosuchtool is on PATH" in errors["pin:nosuchtool"]
    done = cli("workspace", "doctor", manifest, "--json")
    assert done.returncode == 1


def test_a_pin_without_a_version_flag_and_system_pins_need_only_the_executable(
    tmp_path: Path,
) -> None:
    _fake_tool(tmp_path / "bin", "erl", "no --version here")
    path = str(tmp_path / "bin")
    assert check_pin(Pin("erlang", "26.2", tmp_path / ".tool-versions", 1), path) is None
    assert check_pin(Pin("erl", "system", tmp_path / ".tool-versions", 1), path) is None
    assert "no node is on PATH" in str(check_pin(Pin("nodejs", "20", tmp_path / "t", 1), path))


def test_containment_process_group_is_always_there() -> None:
    assert containment_available("process_group")[0] is True
    ok, what = containment_available("auto")
    assert ok and what.startswith("auto: ")
