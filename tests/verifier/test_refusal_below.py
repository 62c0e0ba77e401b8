"""verifier/paths.refusal works out a path's real location with one lstat per part
below the repo, and falls back to os.path.realpath at the first symlink: the
answer is the one realpath gives for every path, symlinks inside and outside,
loops, dangling links, files in the way and .git parts included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompt_runner.verifier.paths import GIT_DIR, IN_GIT_DIR, refusal


def by_realpath(root: Path, rel: str) -> str | None:
    """The rule as written before: realpath of the root and of the whole path."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(root / rel)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        return f"escapes the repo through a symlink (resolves to {real})"
    below = os.path.relpath(real, real_root).split(os.sep)
    if GIT_DIR in rel.replace("\\", "/").split("/") or GIT_DIR in below:
        return IN_GIT_DIR
    return None


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("tree")
    (base / "outside").mkdir()
    (base / "outside" / "f").write_text("x")
    (base / "real-repo").mkdir()
    root = base / "repo"
    root.symlink_to(base / "real-repo")  # the repo itself through a symlink
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "f").write_text("x")
    (root / ".git").mkdir()
    (root / "in").symlink_to(root / "d")
    (root / "out").symlink_to(base / "outside")
    (root / "outfile").symlink_to(base / "outside" / "f")
    (root / "git").symlink_to(root / ".git")
    (root / "dangling").symlink_to(base / "nowhere")
    (root / "loop").symlink_to(root / "loop")
    (root / "up").symlink_to("..")
    return root


PARTS = [
    "d",
    "e",
    "f",
    "in",
    "out",
    "outfile",
    "git",
    ".git",
    "dangling",
    "loop",
    "up",
    "x",
    ".",
    "",
]


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(PARTS), min_size=0, max_size=4))
def test_every_path_is_judged_as_realpath_judges_it(tree: Path, parts: list[str]) -> None:
    rel = "/".join(parts)
    assert refusal(tree, rel) == by_realpath(tree, rel)


@pytest.mark.parametrize(
    "rel", ["d/f", "in/f", "out/f", "outfile", "git/x", "d/.git/x", "loop/x", "up/repo/d", ""]
)
def test_known_cases(tree: Path, rel: str) -> None:
    assert refusal(tree, rel) == by_realpath(tree, rel)
