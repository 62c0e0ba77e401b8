"""yaml / json clauses with path assertions, and glob (catalog E6)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.verifier import parse_contract
from prompt_runner.verifier.datapath import PathSyntaxError, lookup, parse_path, render
from tests.verifier.conftest import Check

MATRIX = {
    "json": [
        {
            "path": "matrix.json",
            "root": "map",
            "non_empty_paths": ["projects"],
            "array_items_require": {"projects": ["project", "status"]},
            "array_none_match": [{"path": "projects", "field": "status", "equals": "fail"}],
        }
    ]
}


def write(repo: Path, rel: str, text: str) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(text, encoding="utf-8")


def test_e6_yaml_json_glob_pass_in_order(check: Check, git_repo: Path) -> None:
    write(git_repo, "config.yml", "name: demo\nitems: [1, 2]\n")
    write(git_repo, "matrix.json", json.dumps({"projects": [{"project": "a", "status": "ok"}]}))
    write(git_repo, "artifacts/one.txt", "x")
    report = check(
        {
            **MATRIX,
            "yaml": [{"path": "config.yml", "root": "map"}],
            "glob": [{"path": "artifacts/*.txt", "min_matches": 1, "non_empty": True}],
        }
    )
    assert report.passed, report.to_dict()
    assert [i.kind for i in report.items] == ["yaml", "json", "glob"]
    assert report.items[0].details == "config.yml parses as YAML; root map; 1 shape check(s) hold"
    assert report.items[2].details == "1 file(s) match artifacts/*.txt (min 1): artifacts/one.txt"


def test_e6_missing_required_keys_is_a_failure_not_a_fault(check: Check, git_repo: Path) -> None:
    write(git_repo, "matrix.json", json.dumps({"projects": [{"status": "fail"}]}))
    report = check(MATRIX)
    assert report.fault is None and not report.passed
    assert report.items[0].details == (
        "missing required keys: projects[0] lacks project; "
        "projects[0].status equals 'fail', which no item may match"
    )


def test_unparseable_and_wrong_root(check: Check, git_repo: Path) -> None:
    write(git_repo, "bad.json", "{nope")
    write(git_repo, "list.yml", "- a\n- b\n")
    root, bad = check({"json": ["bad.json"], "yaml": [{"path": "list.yml", "root": "map"}]}).items
    assert bad.kind == "json" and bad.details.startswith(
        "bad.json does not parse as JSON: Expecting"
    )
    assert root.details == "root is a list, expected map"


def test_path_assertions(check: Check, git_repo: Path) -> None:
    write(
        git_repo,
        "c.yaml",
        "server:\n  port: 8080\n  hosts: [a, b]\n  'web.1': {up: true}\n"
        "limits: {cpu: 2.5}\nname: x\n",
    )
    asserts = [
        {"path": "server.port", "equals": 8080, "type": "integer"},
        {"path": "server.hosts", "type": "list", "length": 2},
        {"path": "server.hosts[-1]", "equals": "b"},
        {"path": 'server["web.1"].up', "type": "boolean", "equals": True},
        {"path": "limits.cpu", "type": "number", "min": 1, "max": 4},
        {"path": "debug", "exists": False},
        {"path": "name", "min": 1, "max": 3},
    ]
    assert check({"yaml": [{"path": "c.yaml", "assert": asserts}]}).passed
    bad = [
        {"path": "server.port", "equals": 80},
        {"path": "server.hosts", "length": 3},
        {"path": "server.hosts[5]"},
        {"path": "limits.cpu", "max": 2},
        {"path": "name", "type": "map"},
        {"path": "server", "exists": False},
    ]
    item = check({"yaml": [{"path": "c.yaml", "assert": bad}]}).items[0]
    assert item.extra["problems"] == [
        "server.port is 8080, expected 80",
        "server.hosts has length 2, expected 3",
        "server.hosts[5] is missing",
        "limits.cpu is 2.5, above max 2",
        "name is a string, expected map",
        "server exists but must be absent",
    ]


def test_datapath_syntax() -> None:
    assert parse_path("a.b[0].c") == ("a", "b", 0, "c")
    assert parse_path("") == () and parse_path("$") == ()
    assert parse_path("""x["a.b"]['c d'][-1]""") == ("x", "a.b", "c d", -1)
    assert render(("x", "a.b", 0)) == 'x["a.b"][0]'
    assert lookup({"a": [1, {"b": 2}]}, ("a", 1, "b")) == (True, 2)
    assert lookup({"a": [1]}, ("a", 3)) == (False, None)
    for bad in ("a..b", "a.", "a[0", "[0]x"):
        with pytest.raises(PathSyntaxError):
            parse_path(bad)


def test_bad_data_entries_are_user_errors() -> None:
    with pytest.raises(UserError) as info:
        parse_contract({"json": [{"path": "m.json", "assert": [{"path": "a..b"}]}]}, file="p.md")
    assert info.value.key == "verify.json[0].assert[0].path"
    with pytest.raises(UserError) as info:
        parse_contract({"yaml": [{"path": "m.yml", "root": "tree"}]}, file="p.md")
    assert info.value.key == "verify.yaml[0].root"


def test_glob_bounds_non_empty_and_recursive(check: Check, git_repo: Path) -> None:
    write(git_repo, "out/a/1.json", "{}")
    write(git_repo, "out/b/c/2.json", "")
    write(git_repo, "out/3.txt", "x")
    report = check(
        {
            "glob": [
                {"pattern": "out/**/*.json", "min": 2, "max": 2},
                {"pattern": "out/**/*.json", "non_empty": True},
                {"pattern": "out/*.md"},
                {"pattern": "out/**", "max": 1},
                "**/*.txt",
            ]
        }
    )
    both, nonempty, none, too_many, txt = report.items
    assert both.passed and both.extra["matches"] == ["out/a/1.json", "out/b/c/2.json"]
    assert not nonempty.passed and nonempty.details == "empty files: out/b/c/2.json"
    assert not none.passed and none.details == "0 file(s) match out/*.md, need at least 1"
    assert not too_many.passed and too_many.details == "3 files match out/**, more than max 1"
    assert txt.passed and txt.extra["count"] == 1


def test_glob_skips_git_and_outside_symlinks(check: Check, git_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s", encoding="utf-8")
    (git_repo / "linked").symlink_to(outside)
    (git_repo / "leak.txt").symlink_to(outside / "secret.txt")
    item = check({"glob": ["**/*"]}).items[0]
    assert item.extra["matches"] == ["README.md"]


def test_a_yaml_file_that_repeats_a_key_does_not_parse(check: Check, git_repo: Path) -> None:
    """A checked YAML file with a key given twice passed on its last value."""
    write(git_repo, "config.yml", "status: fail\nstatus: ok\n")
    contract = {"yaml": [{"path": "config.yml", "assert": [{"path": "status", "equals": "ok"}]}]}
    item = check(contract).items[0]
    assert not item.passed
    assert item.details == (
        "config.yml does not parse as YAML: duplicate key 'status' at line 2 (first at line 1)"
    )


def test_problems_spell_values_as_the_file_does_never_as_python(
    check: Check, git_repo: Path
) -> None:
    # session 12: details said `private is True (boolean), expected 1 (integer)`,
    # `... is None, below min 3` and `is a integer` -- Python reprs a repair
    # session reads as the file's own words.
    (git_repo / "c.json").write_text(
        '{"private": true, "owner": null, "replicas": 3, "tags": [null, true]}', encoding="utf-8"
    )
    asserts = [
        {"path": "private", "equals": 1},
        {"path": "owner", "min": 3},
        {"path": "replicas", "type": "string"},
        {"path": "tags", "equals": [None, False]},
    ]
    item = check({"json": [{"path": "c.json", "assert": asserts}]}).items[0]
    assert item.extra["problems"] == [
        "private is true (boolean), expected 1 (integer)",
        "owner is null, which has no number or size to compare with min 3",
        "replicas is an integer, expected string",
        "tags is [null, true], expected [null, false]",
    ]
    assert "True" not in item.details and "None" not in item.details


def test_a_bad_array_none_match_names_its_own_key(tmp_path: Path) -> None:
    import pytest

    from prompt_runner.errors import UserError
    from prompt_runner.verifier import parse_contract

    with pytest.raises(UserError, match=r"verify\.json\[0\]\.array_none_match: must be a list"):
        parse_contract({"json": [{"path": "c.json", "array_none_match": 5}]}, file="p.md")
