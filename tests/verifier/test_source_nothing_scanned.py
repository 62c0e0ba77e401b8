"""`source_absent` fails when a path leaves no file to search, as it fails for a
path that does not exist: a check that reads nothing cannot show a pattern
absent (new user nu14 #7: `extensions: [".PY"]` and `paths: ["src/*.pyx"]`
passed with "no match ... in 0 file(s)" while src/main.py held the pattern)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.verifier.conftest import Check

FIX = (
    " in repo 'app' -- a check that reads no file cannot show the pattern absent; "
    "fix `paths:` or `extensions:` to name the files to search"
)


def test_verify_fails_an_extension_typo_and_an_empty_glob(tmp_path: Path) -> None:
    verify = {
        "source_absent": [
            {"pattern": r"print\(", "paths": ["src"], "extensions": [".PY"]},
            {"pattern": r"print\(", "paths": ["src/*.pyx"]},
            {"pattern": r"print\(", "paths": ["src"], "extensions": [".py"]},
        ]
    }
    packet = make_packet(tmp_path, {"01": {"verify": verify}})
    (tmp_path / "repo" / "src").mkdir()
    (tmp_path / "repo" / "src" / "main.py").write_text("x = 1\n", encoding="utf-8")
    done = cli("verify", packet, "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    typo, glob, good = json.loads(done.stdout)["reports"][0]["items"]
    assert typo["pass"] is False and typo["files_scanned"] == 0
    assert typo["details"] == (
        "nothing scanned: src holds 1 file(s), none ending with .PY (src/main.py differs "
        "only in case: extensions match case-sensitively)" + FIX
    )
    assert glob["pass"] is False and glob["unscanned_paths"] == ["src/*.pyx"]
    assert glob["details"] == "nothing scanned: src/*.pyx matches no file" + FIX
    assert good["pass"] is True and good["files_scanned"] == 1


def test_each_named_path_must_give_a_file(check: Check, git_repo: Path) -> None:
    (git_repo / "lib").mkdir()
    (git_repo / "lib" / "a.ex").write_text("ok\n", encoding="utf-8")
    (git_repo / "empty").mkdir()
    (git_repo / "vendored" / "node_modules").mkdir(parents=True)
    (git_repo / "vendored" / "node_modules" / "x.ex").write_text("bad\n", encoding="utf-8")
    (git_repo / "notes.txt").write_text("bad\n", encoding="utf-8")
    entry = {"pattern": "bad", "extensions": [".ex"]}
    report = check(
        {
            "source_absent": [
                {**entry, "paths": ["lib", "empty"]},
                {**entry, "paths": ["vendored"]},
                {**entry, "paths": ["lib", "notes.txt"]},
            ]
        }
    )
    empty, pruned, wrong_ext = report.items
    hint = " holds no file to search (pruned names and directory symlinks are skipped)"
    assert not empty.passed and empty.details == "nothing scanned: empty" + hint + FIX
    assert not pruned.passed and pruned.details == "nothing scanned: vendored" + hint + FIX
    assert not wrong_ext.passed
    assert wrong_ext.details == "nothing scanned: notes.txt does not end with .ex" + FIX


def test_a_missing_path_is_still_reported_as_missing(check: Check) -> None:
    item = check({"source_absent": [{"pattern": "x", "paths": ["gone", "src/*.pyx"]}]}).items[0]
    assert not item.passed and item.details.startswith("missing: gone does not exist")
