"""Shared fixtures: every test runs with a private home, git identity and config dir."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.gitrepo import make_git_repo


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Pin git identity, an empty git template dir and temporary XDG config/state/data/cache
    homes."""
    base = tmp_path_factory.mktemp("env")
    template = base / "git-template"
    template.mkdir()
    saved = dict(os.environ)
    os.environ.update(
        {
            "GIT_AUTHOR_NAME": "Test Author",
            "GIT_AUTHOR_EMAIL": "author@example.invalid",
            "GIT_COMMITTER_NAME": "Test Committer",
            "GIT_COMMITTER_EMAIL": "committer@example.invalid",
            "GIT_TEMPLATE_DIR": str(template),
            "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "XDG_CONFIG_HOME": str(base / "xdg"),
            "XDG_STATE_HOME": str(base / "xdg-state"),
            "XDG_DATA_HOME": str(base / "xdg-data"),
            "XDG_CACHE_HOME": str(base / "xdg-cache"),  # the parsed-packet cache
            "HOME": str(base / "home"),
        }
    )
    (base / "home").mkdir()
    (base / "gitconfig").write_text("[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    os.environ.pop("PROMPT_RUNNER_CONFIG_HOME", None)
    os.environ.pop("PROMPT_RUNNER_CACHE_DIR", None)  # the cache under XDG_CACHE_HOME above
    os.environ.pop("PROMPT_RUNNER_STATE_DIR", None)  # state in the packet unless a test says
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture
def started() -> Iterator[list[int]]:
    """The pids a test's hooks or commands started (read from their pid files, and
    a git the test found), each killed at the end whatever happened: a test of
    orphaned processes leaves none behind when it fails."""
    import contextlib

    import psutil

    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).kill()


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A git repo with one commit holding ``README.md`` = ``# Repo\\n``."""
    return make_git_repo(tmp_path / "repo")


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` and return stdout (raises on failure)."""
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout
