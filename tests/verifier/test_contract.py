"""parse_contract / check_contract_paths / Contract: validation names file, key path and fix."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.verifier import (
    STRUCTURAL_CLAUSES,
    Contract,
    check_contract_paths,
    contract_keys,
    parse_contract,
)

FILE = "prompts/01_x.prompt.md"

ALL_CLAUSES = (
    "files_exist",
    "files_absent",
    "contains",
    "matches",
    "doc",
    "yaml",
    "json",
    "glob",
    "source_absent",
    "commands",
    "changed_paths_only",
    "repos_clean",
)


def error(raw: object) -> UserError:
    with pytest.raises(UserError) as info:
        parse_contract(raw, file=FILE)
    return info.value


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"files_exist": [1, 2]}, "must be a path string or a mapping with `path:` (got 1)"),
        ({"files_absent": [True]}, "must be a path string or a mapping with `path:` (got True)"),
        ({"doc": [[1]]}, "must be a path string or a mapping with `path:` (got a list)"),
        ({"yaml": [5]}, "must be a path string or a mapping with `path:` (got 5)"),
        ({"glob": [5]}, "must be a glob pattern string or a mapping with `pattern:` (got 5)"),
        ({"repos_clean": [5]}, "must be a repo name or a mapping with `repo:` (got 5)"),
    ],
)
def test_an_entry_that_may_be_a_string_names_both_forms(
    raw: dict[str, object], message: str
) -> None:
    err = error(raw)
    assert err.key == f"verify.{next(iter(raw))}[0]"
    assert err.reason == message
    assert err.fix is not None and "quote" in err.fix


def test_contract_keys_are_every_clause_in_evaluation_order() -> None:
    assert contract_keys() == ALL_CLAUSES
    assert frozenset(ALL_CLAUSES) - {"commands"} == STRUCTURAL_CLAUSES


def test_empty_contracts() -> None:
    for raw in (None, {}, {"files_exist": []}):
        c = parse_contract(raw, file=FILE)
        assert c.is_empty() and c.clauses() == () and c.to_raw() == {}


def test_unknown_clause_is_named_with_the_known_list() -> None:
    err = error({"file_exists": ["a"]})
    assert err.file == FILE and err.key == "verify.file_exists"
    assert str(err).startswith(
        f"{FILE}: verify.file_exists: unknown verify clause 'file_exists'; use one of: files_exist,"
    )
    assert err.exit_code == 2


@pytest.mark.parametrize(
    ("raw", "key", "reason"),
    [
        (
            {"commands": [{"exec": "x", "timeout_ms": 0}]},
            "verify.commands[0].timeout_ms",
            "must be a positive integer",
        ),
        (
            {"commands": [{"exec": "x", "timeout_ms": "5s"}]},
            "verify.commands[0].timeout_ms",
            "must be a positive integer",
        ),
        ({"commands": ["ok", {"args": ["a"]}]}, "verify.commands[1].exec", "is required"),
        ({"commands": [{"exec": "x", "shell": True}]}, "verify.commands[0].shell", "unknown key"),
        (
            {"commands": [{"exec": "make test"}]},
            "verify.commands[0].exec",
            "'make test' is not one executable (no shell runs it)",
        ),
        (
            {"commands": [{"exec": "x", "fault_exit_codes": [0]}]},
            "verify.commands[0].fault_exit_codes[0]",
            "must be an exit code from 1 to 255",
        ),
        (
            {"commands": [{"exec": "x", "stdout_matches": ["("]}]},
            "verify.commands[0].stdout_matches[0]",
            "is not a valid regular expression",
        ),
        ({"contains": [{"path": "a"}]}, "verify.contains[0].text", "is required"),
        (
            {"contains": [{"path": "a", "text": "b", "extra": 1}]},
            "verify.contains[0].extra",
            "unknown key",
        ),
        ({"files_exist": [3]}, "verify.files_exist[0]", "must be a path string or a mapping"),
        (
            {"files_exist": ["../up.txt"]},
            "verify.files_exist[0]",
            "path '../up.txt' escapes the repo through `..`",
        ),
        ({"files_exist": ["a/../../b"]}, "verify.files_exist[0]", "escapes the repo through `..`"),
        (
            {"files_exist": ["/etc/passwd"]},
            "verify.files_exist[0]",
            "absolute path '/etc/passwd' escapes the repo",
        ),
        (
            {"contains": [{"path": "/tmp/x", "text": "b"}]},
            "verify.contains[0].path",
            "absolute path '/tmp/x' escapes the repo",
        ),
        (
            {"commands": [{"exec": "./../x"}]},
            "verify.commands[0].exec",
            "escapes the repo through `..`",
        ),
        (
            {"commands": [{"exec": "x", "cwd": "../elsewhere"}]},
            "verify.commands[0].cwd",
            "escapes the repo",
        ),
        (
            {"commands": [{"exec": "x", "regenerates": ["/abs.png"]}]},
            "verify.commands[0].regenerates[0]",
            "escapes the repo",
        ),
        (
            {"matches": [{"path": "a", "pattern": "[a"}]},
            "verify.matches[0].pattern",
            "is not a valid regular expression",
        ),
        ("files_exist", "verify", "must be a mapping of clause names"),
    ],
)
def test_bad_entries_name_file_key_and_fix(raw: object, key: str, reason: str) -> None:
    err = error(raw)
    assert err.file == FILE and err.key == key
    assert reason in err.reason
    assert err.fix
    assert str(err).startswith(f"{FILE}: {key}: ")


def test_legacy_commands_load_flagged() -> None:
    c = parse_contract(
        {"commands": ["test -f README.md", {"run": "true", "timeout_ms": 50}]}, file=FILE
    )
    a, b = c.entries["commands"]
    assert a.legacy and b.legacy  # type: ignore[attr-defined]
    assert c.to_raw() == {"commands": ["test -f README.md", {"run": "true", "timeout_ms": 50}]}


def test_to_raw_is_canonical_json_and_reparses_to_the_same_contract() -> None:
    raw = {
        "changed_paths_only": ["hello.txt"],
        "files_exist": ["./hello.txt", {"repo": "docs", "path": "a//b.md"}],
        "commands": [
            {"exec": "/usr/bin/test", "args": ["-f", "x"], "timeout_ms": 100, "env": {"A": 1}}
        ],
    }
    c = parse_contract(raw, file=FILE)
    canonical = c.to_raw()
    assert list(canonical) == ["files_exist", "commands", "changed_paths_only"]
    assert canonical["files_exist"] == [{"path": "hello.txt"}, {"path": "a/b.md", "repo": "docs"}]
    assert canonical["commands"] == [
        {"exec": "/usr/bin/test", "args": ["-f", "x"], "timeout_ms": 100, "env": {"A": "1"}}
    ]
    json.dumps(canonical)
    again = parse_contract(json.loads(json.dumps(canonical)), file=FILE)
    assert again == c and again.to_raw() == canonical


def test_restricted_keeps_only_named_clauses() -> None:
    c = parse_contract({"files_exist": ["a"], "commands": [{"exec": "true"}]}, file=FILE)
    s = c.restricted(STRUCTURAL_CLAUSES)
    assert s.clauses() == ("files_exist",) and c.has("commands") and not s.has("commands")
    assert isinstance(s, Contract)


def test_check_paths_unknown_repo(tmp_path: Path) -> None:
    c = parse_contract(
        {"files_exist": ["a"], "commands": [{"exec": "@repo:ghost/bin/x"}]}, file=FILE
    )
    with pytest.raises(UserError) as info:
        check_contract_paths(c, repos={"app": tmp_path}, default_repo="app", file=FILE)
    assert info.value.key == "verify.commands[0].repo"
    assert "unknown repo 'ghost'" in str(info.value) and "use one of: app, packet" in str(
        info.value
    )
    ok = parse_contract({"files_exist": [{"repo": "packet", "path": "x"}]}, file=FILE)
    check_contract_paths(ok, repos={"app": tmp_path}, default_repo="app", file=FILE)


def test_check_paths_symlink_escape_is_refused_at_load_time(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(tmp_path, repo / "up")
    c = parse_contract({"files_exist": [{"path": "up/notes.md"}]}, file=FILE)
    with pytest.raises(UserError) as info:
        check_contract_paths(c, repos={"app": repo}, default_repo="app", file=FILE)
    assert info.value.key == "verify.files_exist[0]"
    assert "escapes repo 'app' through a symlink" in str(info.value)
    inside = parse_contract({"files_exist": ["sub/x.txt"]}, file=FILE)
    check_contract_paths(inside, repos={"app": repo}, default_repo="app", file=FILE)
