"""Clause keys the reference system documents: ``json``/``yaml`` ``required_paths``,
``source_absent`` ``prune`` (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.verifier import parse_contract
from tests.verifier.conftest import Check


def write(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text, encoding="utf-8")


def test_required_paths_must_exist_even_when_null(check: Check, git_repo: Path) -> None:
    write(git_repo, "m.json", json.dumps({"meta": {"owner": None}, "items": []}))
    ok = check({"json": [{"path": "m.json", "required_paths": ["meta.owner", "items"]}]})
    assert ok.passed, ok.to_dict()
    bad = check({"json": [{"path": "m.json", "required_paths": ["meta.owner", "meta.name"]}]})
    assert not bad.passed
    assert bad.items[0].details == "meta.name is missing"
    write(git_repo, "c.yml", "a:\n  b: 1\n")
    assert check({"yaml": [{"path": "c.yml", "required_paths": ["a.b"]}]}).passed


def test_required_paths_round_trip_and_bad_path() -> None:
    raw = {"json": [{"path": "m.json", "required_paths": ["a.b"]}]}
    assert parse_contract(raw, file="f").to_raw() == raw
    with pytest.raises(UserError, match="required_paths"):
        parse_contract({"json": [{"path": "m.json", "required_paths": ["a..b"]}]}, file="f")


def test_source_absent_prunes_named_entries_and_the_reference_defaults(
    check: Check, git_repo: Path
) -> None:
    write(git_repo, "lib/a.ex", "clean\n")
    write(git_repo, "lib/vendor/b.ex", "IO.inspect(x)\n")
    write(git_repo, "deps/c.ex", "IO.inspect(x)\n")  # pruned by default, as the reference does
    write(git_repo, "node_modules/d.js", "IO.inspect(x)\n")
    entry = {"patterns": [r"IO\.inspect"], "prune": ["vendor"]}
    item = check({"source_absent": [entry]}).items[0]
    assert item.passed, item.details
    assert item.extra["files_scanned"] == 2  # README.md and lib/a.ex
    unpruned = check({"source_absent": [{"patterns": [r"IO\.inspect"]}]}).items[0]
    assert not unpruned.passed
    assert [h["path"] for h in unpruned.extra["hits"]] == ["lib/vendor/b.ex"]


def test_source_absent_prune_round_trips() -> None:
    raw = {"source_absent": [{"patterns": ["x"], "paths": ["."], "prune": ["vendor"]}]}
    assert parse_contract(raw, file="f").to_raw() == raw
    with pytest.raises(UserError, match="prune"):
        parse_contract({"source_absent": [{"patterns": ["x"], "prune": ["a/b"]}]}, file="f")
