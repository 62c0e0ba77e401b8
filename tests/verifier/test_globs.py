"""Glob syntax, the contained walk, and the source_absent literal prefilter."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.verifier.clauses.source import required_literal, scan
from prompt_runner.verifier.globs import literal_prefix, matches, walk_files


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.txt", "a.txt", True),
        ("*.txt", "d/a.txt", False),
        ("**/*.txt", "a.txt", True),
        ("**/*.txt", "d/e/a.txt", True),
        ("out/**", "out/a/b", True),
        ("out/**/x.json", "out/x.json", True),
        ("out/**/x.json", "outx/x.json", False),
        ("f?.md", "f1.md", True),
        ("f[!0-9].md", "f1.md", False),
        ("f[ab].md", "fa.md", True),
        ("*.{png,jpg}", "a.jpg", True),
        ("a.b", "axb", False),
    ],
)
def test_glob_matching(pattern: str, path: str, expected: bool) -> None:
    assert matches(pattern, path) is expected


def test_literal_prefix() -> None:
    assert literal_prefix("a/b/*.txt") == "a/b"
    assert literal_prefix("**/x") == ""
    assert literal_prefix("a/*/c/d") == "a"


def test_walk_skips_git_and_dir_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "r"
    for rel in ("b/2.txt", "a/1.txt", "c.txt", ".git/HEAD"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x", encoding="utf-8")
    (root / "loop").symlink_to(root)
    (root / "alias.txt").symlink_to(root / "c.txt")
    assert sorted(walk_files(root)) == ["a/1.txt", "alias.txt", "b/2.txt", "c.txt"]
    assert list(walk_files(root, "b")) == ["b/2.txt"]
    assert list(walk_files(root, "missing")) == []


def test_walk_skips_a_file_symlink_into_git(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("x", encoding="utf-8")
    (root / "config.txt").symlink_to(root / ".git" / "config")
    assert list(walk_files(root)) == []


def test_required_literal() -> None:
    assert required_literal(r"def\s+cancel\(_ref.*:ok") == b"cancel(_ref"
    assert required_literal("FIXME") == b"FIXME"
    assert required_literal("a|bc") is None
    assert required_literal("(?i)todo") is None
    assert required_literal("x") is None


def test_scan_finds_the_same_hits_with_and_without_prefilter(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("ok\nprint('x')\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("PRINT\n", encoding="utf-8")
    files = ["a.py", "b.py"]
    assert scan(tmp_path, files, [r"print\("]) == [("a.py", 2, "print('x')")]
    assert scan(tmp_path, files, [r"(?i)print"]) == [
        ("a.py", 2, "print('x')"),
        ("b.py", 1, "PRINT"),
    ]
