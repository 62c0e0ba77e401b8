"""The source_absent clause (catalog E6)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.verifier.conftest import Check

ENTRY = {"path": "lib", "patterns": [r"def\s+cancel\(_ref.*:ok"], "extensions": [".ex"]}


def write(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text, encoding="utf-8")


def test_e6_pattern_absent_passes(check: Check, git_repo: Path) -> None:
    write(git_repo, "lib/real.ex", "def cancel(ref), do: stop(ref)\n")
    write(git_repo, "lib/other.txt", "def cancel(_ref), do: :ok\n")  # wrong extension
    item = check({"source_absent": [ENTRY]}).items[0]
    assert item.passed and item.extra["files_scanned"] == 1
    assert item.details == r"no match for /def\s+cancel\(_ref.*:ok/ in 1 file(s) under lib"


def test_hits_are_reported_with_line_numbers(check: Check, git_repo: Path) -> None:
    write(git_repo, "lib/a.ex", "defmodule A do\n  def cancel(_ref), do: :ok\nend\n")
    write(git_repo, "lib/deep/b.ex", "x\ny\ndef cancel(_ref), do: :ok # again\n")
    item = check({"source_absent": [ENTRY]}).items[0]
    assert not item.passed and item.verdict == "failure"
    assert item.extra["hits"] == [
        {"path": "lib/a.ex", "line": 2, "text": "def cancel(_ref), do: :ok"},
        {"path": "lib/deep/b.ex", "line": 3, "text": "def cancel(_ref), do: :ok # again"},
    ]
    assert item.details == (
        r"forbidden pattern /def\s+cancel\(_ref.*:ok/ found: "
        "lib/a.ex:2: def cancel(_ref), do: :ok; "
        "lib/deep/b.ex:3: def cancel(_ref), do: :ok # again; remove these occurrences"
    )


def test_missing_path_fails(check: Check) -> None:
    item = check({"source_absent": [{**ENTRY, "path": "missing"}]}).items[0]
    assert not item.passed and item.details.startswith(
        "missing: missing does not exist in repo 'app'"
    )


def test_globs_several_patterns_default_root_and_skips_git(check: Check, git_repo: Path) -> None:
    write(git_repo, "src/x.py", "import os\nprint('debug')\n")
    write(git_repo, "tests/t.py", "breakpoint()\n")
    report = check(
        {
            "source_absent": [
                {"pattern": r"^\s*breakpoint\(\)", "paths": ["src/**/*.py"]},
                {"patterns": ["print\\(", "breakpoint\\("]},
                {"pattern": "initial"},  # only in .git (the commit message); .git is skipped
            ]
        }
    )
    scoped, everywhere, git_only = report.items
    assert scoped.passed
    assert sorted(h["path"] for h in everywhere.extra["hits"]) == ["src/x.py", "tests/t.py"]
    assert git_only.passed


def test_symlinked_file_outside_is_not_read(check: Check, git_repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("FORBIDDEN\n", encoding="utf-8")
    os.symlink(secret, git_repo / "link.py")
    os.symlink(tmp_path, git_repo / "updir")
    item = check({"source_absent": [{"pattern": "FORBIDDEN"}]}).items[0]
    assert item.passed
    named = check({"source_absent": [{"pattern": "FORBIDDEN", "paths": ["updir"]}]}).items[0]
    assert not named.passed and "escapes the repo" in named.details


def test_a_case_insensitive_pattern_with_a_non_ascii_letter_folds_it(
    check: Check, git_repo: Path
) -> None:
    """Session 15, tester finding 2: ``(?i)café`` searched as bytes folded ASCII
    only, so CAFÉ read as absent (a forbidden text let through) while ``matches``
    found it. Such a pattern is searched in the text; a hit's line number and
    text are the same as a bytes search would give."""
    (git_repo / "menu.txt").write_bytes(
        b"tea\n\xff\xfe not utf-8\nCAF\xc3\x89 au lait, caf\xc3\xa9 noir\n"
    )
    for pattern in ("(?i)caf\u00e9", "x(?i:Caf\u00e9)|(?i)CAF\u00c9", "(?im)^caf\u00e9"):
        item = check({"source_absent": [{"pattern": pattern, "paths": ["menu.txt"]}]}).items[0]
        assert not item.passed, pattern
        assert item.extra["hits"] == [
            {"path": "menu.txt", "line": 3, "text": "CAF\u00c9 au lait, caf\u00e9 noir"}
        ], pattern
    # matches says the same of the same file
    assert check({"matches": [{"path": "menu.txt", "pattern": "(?i)caf\u00e9"}]}).items[0].passed
    # without (?i) the case still counts
    item = check({"source_absent": [{"pattern": "CAF\u00e9", "paths": ["menu.txt"]}]}).items[0]
    assert item.passed


def test_a_line_is_one_hit_however_many_matches_it_holds(check: Check, git_repo: Path) -> None:
    """Session 15, tester finding 7: ``forbidden|`` matched the empty string at
    every position, and the same line was listed ten times."""
    write(git_repo, "a.txt", "Hello World\nforbidden here, forbidden there\n")
    entry = {"patterns": ["forbidden", "here"], "paths": ["a.txt"]}
    item = check({"source_absent": [entry]}).items[0]
    assert item.extra["hits"] == [
        {"path": "a.txt", "line": 2, "text": "forbidden here, forbidden there"}
    ]
