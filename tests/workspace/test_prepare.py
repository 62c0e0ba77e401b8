"""workspace plan / prepare over two remotes (bare repositories on disk), with real git."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from tests.helpers.cli import cli
from tests.helpers.workspaces import git, make_workspace, tree_digest


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def _objects_links(clone: Path) -> list[int]:
    """The link count of every object file of ``clone``."""
    return [p.stat().st_nlink for p in (clone / ".git" / "objects").rglob("*") if p.is_file()]


def test_plan_says_what_prepare_will_do_and_writes_nothing(manifest: Path, tmp_path: Path) -> None:
    before = tree_digest(tmp_path)
    done = cli("workspace", "plan", manifest, "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["schema"] == "prompt_runner.workspace.plan/v1" and doc["ok"] is True
    actions = {r["name"]: (r["action"], r["detail"]) for r in doc["repositories"]}
    assert actions["app"][0] == "clone" and str(tmp_path / "author" / "app") in actions["app"][1]
    assert (
        actions["lib"][0] == "clone" and str(tmp_path / "remotes" / "lib.git") in actions["lib"][1]
    )
    assert doc["packet"]["dir"].endswith("repos/app/packets/demo")
    assert "--state-dir" in doc["run"]
    assert tree_digest(tmp_path) == before  # nothing written anywhere, not even the XDG homes
    assert not Path(os.environ["XDG_DATA_HOME"]).exists()


def test_prepare_makes_independent_clones_then_changes_nothing(
    manifest: Path, tmp_path: Path
) -> None:
    author = tmp_path / "author"
    author_before = tree_digest(author)
    first = prompt_runner.prepare_workspace(manifest)
    assert first.changed and any("app: cloned" in a for a in first.actions)
    ws = prompt_runner.load_workspace(manifest)
    for name in ("app", "lib"):
        clone = ws.clone(name)
        assert (clone / ".git").is_dir()
        assert not (clone / ".git" / "objects" / "info" / "alternates").exists()
        assert set(_objects_links(clone)) == {1}  # no hardlinks into the author's objects
        assert git(clone, "remote", "get-url", "origin").strip() == str(
            tmp_path / "remotes" / f"{name}.git"
        )
        assert git(clone, "branch", "--show-current").strip() == "prompt-runner/work"
    assert (ws.packet_dir / "prompt_runner_packet.md").is_file()
    assert ws.state_dir.is_dir()
    # the second prepare: says so, and every file (clones, lock, registry) is as it was
    watched = [ws.workspace_root, ws.runtime_root, Path(os.environ["XDG_STATE_HOME"])]
    digests = [tree_digest(p) for p in watched]
    done = cli("workspace", "prepare", manifest)
    assert done.returncode == 0, done.stderr
    assert "nothing changed" in done.stdout
    assert [tree_digest(p) for p in watched] == digests
    assert tree_digest(author) == author_before  # the author's checkout untouched


def test_prepare_fast_forwards_what_the_remote_gained(manifest: Path, tmp_path: Path) -> None:
    prompt_runner.prepare_workspace(manifest)
    author = tmp_path / "author" / "lib"
    (author / "new.txt").write_text("new\n")
    git(author, "add", "new.txt")
    git(author, "commit", "-q", "-m", "new")
    git(author, "push", "-q", "origin", "main")
    again = prompt_runner.prepare_workspace(manifest)
    assert any("lib: fetched" in a for a in again.actions)
    assert any("lib: fast-forwarded" in a for a in again.actions)
    ws = prompt_runner.load_workspace(manifest)
    assert (ws.clone("lib") / "new.txt").is_file()


def test_prepare_refuses_a_dirty_clone_naming_its_paths_and_changes_nothing(
    manifest: Path, tmp_path: Path
) -> None:
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    (ws.clone("lib") / "half-done.txt").write_text("work in progress\n")
    (ws.clone("lib") / "README.md").write_text("changed\n")
    author = tmp_path / "author" / "lib"
    (author / "upstream.txt").write_text("u\n")
    git(author, "add", "upstream.txt")
    git(author, "commit", "-q", "-m", "upstream")
    git(author, "push", "-q", "origin", "main")  # something prepare would otherwise fetch
    watched = [ws.workspace_root, ws.runtime_root]
    digests = [tree_digest(p) for p in watched]
    with pytest.raises(UserError) as caught:
        prompt_runner.prepare_workspace(ws)
    text = str(caught.value)
    assert "repository 'lib'" in text and "half-done.txt" in text and "README.md" in text
    assert "resumable work" in text
    done = cli("workspace", "prepare", manifest)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert [tree_digest(p) for p in watched] == digests
    plan = prompt_runner.plan_workspace(ws)
    assert not plan.ok and "half-done.txt" in plan.problems[0]


def test_prepare_refuses_a_clone_with_another_origin(manifest: Path) -> None:
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    git(ws.clone("app"), "remote", "set-url", "origin", "/elsewhere.git")
    with pytest.raises(UserError, match=r"its origin is '/elsewhere\.git'"):
        prompt_runner.prepare_workspace(ws)


def test_a_packet_repo_outside_the_clones_is_a_plan_problem(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    # the clone is repos/library, but the packet's lib (../../../lib) is repos/lib
    manifest.write_text(manifest.read_text().replace("  lib:\n", "  library:\n"))
    prepared = prompt_runner.prepare_workspace(manifest)
    assert any("the packet's repo 'lib'" in note for note in prepared.notes)
    plan = prompt_runner.plan_workspace(manifest)
    assert [p for p in plan.problems if "the packet's repo 'lib'" in p], plan.problems
    assert "outside the workspace's clones" in plan.problems[0]
    report = prompt_runner.doctor_workspace(manifest)
    assert not report.ready and any(c.name == "packet" for c in report.checks)
