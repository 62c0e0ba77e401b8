"""``workspace prepare`` of a ``ref`` that names nothing in the repository is bad
input: exit 2, one sentence naming the manifest, ``repositories.NAME.ref`` and
the fix (the branches the remote has), and the clone left as it was; a git
failure that is not about the ref (a remote that is not there) stays exit 3
(workspace/clones.py, ``refuse_missing_ref``).

Real ``prompt-runner`` subprocesses, real git, bare remotes on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import prompt_runner
from tests.helpers.cli import cli
from tests.helpers.workspaces import git, make_workspace, tree_digest


def _set(manifest: Path, repo: str, **keys: Any) -> None:
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    doc["repositories"][repo].update(keys)
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def _error_line(proc: Any, code: int) -> str:
    assert proc.returncode == code, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return str(lines[0])


@pytest.mark.parametrize("repo", ["app", "lib"])  # app is cloned from a source, lib from its remote
def test_a_new_clone_of_a_ref_that_does_not_exist_is_exit_2_naming_the_key(
    tmp_path: Path, repo: str
) -> None:
    manifest = make_workspace(tmp_path)
    _set(manifest, repo, ref="no-such-branch")
    line = _error_line(cli("workspace", "prepare", manifest), 2)
    assert line.startswith(f"error: {manifest}: repositories.{repo}.ref: "), line
    assert "'no-such-branch' names no branch, tag or commit" in line, line
    assert "its branches: main" in line and "set ref to" in line, line
    assert not prompt_runner.load_workspace(manifest).clone(repo).exists()


def test_an_existing_clone_whose_ref_is_gone_is_exit_2_and_left_as_it_was(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    assert cli("workspace", "prepare", manifest).returncode == 0
    clone = prompt_runner.load_workspace(manifest).clone("lib")
    before = tree_digest(clone)
    head = git(clone, "rev-parse", "HEAD")
    _set(manifest, "lib", ref="v9")
    line = _error_line(cli("workspace", "prepare", manifest), 2)
    assert line.startswith(f"error: {manifest}: repositories.lib.ref: "), line
    assert "'v9' names no branch, tag or commit" in line, line
    assert git(clone, "rev-parse", "HEAD") == head
    assert tree_digest(clone) == before
    git(tmp_path / "author" / "lib", "tag", "v9")  # the fix: the ref exists upstream
    git(tmp_path / "author" / "lib", "push", "-q", "origin", "v9")
    done = cli("workspace", "prepare", manifest)
    assert done.returncode == 0, done.stderr


def test_a_tag_and_a_commit_are_refs_too(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    lib = tmp_path / "author" / "lib"
    git(lib, "tag", "v1")
    git(lib, "push", "-q", "origin", "v1")
    _set(manifest, "lib", ref="v1")
    sha = git(tmp_path / "author" / "app", "rev-parse", "HEAD").strip()
    _set(manifest, "app", ref=sha)
    done = cli("workspace", "prepare", manifest)
    assert done.returncode == 0, done.stderr


def test_a_remote_that_is_not_there_stays_an_infrastructure_fault(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    _set(manifest, "lib", remote=str(tmp_path / "remotes" / "missing.git"))
    line = _error_line(cli("workspace", "prepare", manifest), 3)
    assert "repositories.lib.ref" not in line, line
