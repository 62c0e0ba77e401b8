"""prepare_run: providers and repos checked, the store and committer made."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prompt_runner.committer import CallbackCommitter, GitCommitter, NoopCommitter
from prompt_runner.errors import UserError
from prompt_runner.runner.prepare import prepare_run
from prompt_runner.state.memstore import MemoryStore
from prompt_runner.state.store import FileStore
from tests.helpers.run_context import planned


def test_a_file_store_run_gets_its_state_directory_and_the_git_committer(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}}, runtime_store="file", committer="git")
    store, committer = prepare_run(p, None)
    assert isinstance(store, FileStore) and isinstance(committer, GitCommitter)
    state = p.packet.root / ".prompt_runner"
    assert store.root == state and (state / ".gitignore").is_file()


def test_an_api_run_defaults_to_memory_and_no_commits(tmp_path: Path) -> None:
    store, committer = prepare_run(planned(tmp_path, {"01": {}}), None)
    assert isinstance(store, MemoryStore) and isinstance(committer, NoopCommitter)
    assert not (tmp_path / "demo" / ".prompt_runner").exists()


def test_a_commit_callback_is_the_committer(tmp_path: Path) -> None:
    _, committer = prepare_run(planned(tmp_path, {"01": {}}), lambda *args: None)
    assert isinstance(committer, CallbackCommitter)


def test_a_missing_repo_fails_preflight_naming_its_path_key(tmp_path: Path) -> None:
    p = planned(tmp_path, {"01": {}}, committer="git")
    shutil.rmtree(tmp_path / "repo")
    with pytest.raises(UserError) as caught:
        prepare_run(p, None)
    assert caught.value.key == "repos.app.path"
    assert "preflight failed: repo 'app'" in str(caught.value)
    assert "or pass --skip-preflight" in str(caught.value)
    skipped = planned(tmp_path / "b", {"01": {}}, committer="git", skip_preflight=True)
    shutil.rmtree(tmp_path / "b" / "repo")
    prepare_run(skipped, None)  # skip_preflight: no check
