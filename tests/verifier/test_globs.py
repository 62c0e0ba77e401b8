"""Glob syntax, the contained walk, and the source_absent literal prefilter."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prompt_runner.verifier.clauses.source import prefilter_literals, scan
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


def test_prefilter_literals() -> None:
    assert prefilter_literals(r"def\s+cancel\(_ref.*:ok") == ((b"cancel(_ref", False),)
    assert prefilter_literals("FIXME") == ((b"FIXME", False),)
    assert prefilter_literals("x") is None
    # issue 19: one literal per alternative, case-folded literals
    assert prefilter_literals("cancel_ref|frobnicate") == (
        (b"cancel_ref", False),
        (b"frobnicate", False),
    )
    assert prefilter_literals("a|bc") is None  # an alternative without two bytes
    assert prefilter_literals(r"(?i)def\s+Cancel") == ((b"cancel", True),)
    assert prefilter_literals(r"x(?i:TODO)y") == ((b"todo", True),)
    assert prefilter_literals(r"(?:foo|bar)+\d") == ((b"foo", False), (b"bar", False))
    assert prefilter_literals(r"(?:foo)?bar") == ((b"bar", False),)
    assert prefilter_literals(r"(?:foo)*") is None  # may match nothing
    assert prefilter_literals(r"caf\xe9") == ((b"caf\xe9", False),)  # the byte, as compiled
    # syntax the regex module reads differently than re: no prefilter
    assert prefilter_literals(r"(?:cancel){e<=1}") is None  # fuzzy matching
    assert prefilter_literals(r"[[:alpha:]]xy") is None  # a POSIX class
    assert prefilter_literals(r"(?x) foo bar") is None
    assert prefilter_literals(r"\p{L}oo") is None


@pytest.mark.parametrize(
    "pattern",
    [
        "cancel_ref|frobnicate",
        "(?i)CANCEL_REF",
        r"(?i)caf\xc3\xa9|\bFROB",
        "x(?i:Todo)y|zz(?-i:QQ)",
        r"(?:cancel){e<=1}",
        r"[[:alpha:]]xy",
        "(?:ab|cd)+ef",
    ],
)
def test_scan_with_a_prefilter_finds_what_the_engine_finds(tmp_path: Path, pattern: str) -> None:
    import regex

    texts = [
        "cancel_ref here\n",
        "CANCEL_REF\n",
        "caf\u00e9 and caf\u00c9\n",
        "frob\n",
        "xTODOy zzQQ zzqq\n",
        "cancal\n",
        "axy ]xy\n",
        "cdabef\n",
        "nothing at all\n",
    ]
    files = []
    for i, text in enumerate(texts):
        (tmp_path / f"f{i}.txt").write_text(text, encoding="utf-8")
        files.append(f"f{i}.txt")
    compiled = regex.compile(pattern.encode(), regex.MULTILINE)
    expected = sorted(f for f in files if compiled.search((tmp_path / f).read_bytes()) is not None)
    assert expected, pattern  # each pattern matches something
    assert sorted({path for path, _, _ in scan(tmp_path, files, [pattern])}) == expected


def test_scan_finds_the_same_hits_with_and_without_prefilter(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("ok\nprint('x')\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("PRINT\n", encoding="utf-8")
    files = ["a.py", "b.py"]
    assert scan(tmp_path, files, [r"print\("]) == [("a.py", 2, "print('x')")]
    assert scan(tmp_path, files, [r"(?i)print"]) == [
        ("a.py", 2, "print('x')"),
        ("b.py", 1, "PRINT"),
    ]


@pytest.mark.parametrize("size", [65535, 65536, 65537, 300_000])
def test_scan_reads_a_file_past_its_first_chunk(tmp_path: Path, size: int) -> None:
    # issue 19: files are read by os.read in chunks; a hit in the last bytes
    # of a file of any size is found, with its line counted from the start.
    body = ("y" * 99 + "\n") * ((size - 5) // 100)
    body += "z" * (size - len(body) - len("HIT\n")) + "HIT\n"
    assert len(body) == size
    (tmp_path / "big.txt").write_text(body, encoding="ascii")
    lines = body.count("\n")
    for pattern in ("HIT", "(?i)hit"):
        [(path, line, text)] = scan(tmp_path, ["big.txt"], [pattern])
        assert (path, line) == ("big.txt", lines) and text.endswith("zHIT")


def test_scan_skips_a_vanished_file_and_does_not_wait_on_a_fifo(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("TODO\n", encoding="utf-8")
    os.mkfifo(tmp_path / "pipe")
    # a FIFO has no writer: a blocking open would hang the verifier
    assert scan(tmp_path, ["gone.txt", "pipe", "a.txt"], ["TODO"]) == [("a.txt", 1, "TODO")]
