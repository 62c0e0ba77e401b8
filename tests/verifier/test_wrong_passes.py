"""Verdicts that said "passes" where the work had not done what the contract asks.

Each case failed on the code before its fix: json/yaml ``equals`` with Python's
``True == 1``; ``source_absent`` reading CRLF lines unlike ``matches``; a
``glob`` with only ``max: 0`` that could never pass; ``json`` taking ``NaN``
and a repeated key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.verifier import parse_contract
from prompt_runner.verifier.clauses.data import json_equal
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.verifier.conftest import Check


def write(repo: Path, rel: str, data: str | bytes) -> None:
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        (repo / rel).write_bytes(data)
    else:
        (repo / rel).write_text(data, encoding="utf-8")


def equals(path: str, value: object, fmt: str = "json", file: str = "c.json") -> dict[str, object]:
    return {fmt: [{"path": file, "assert": [{"path": path, "equals": value}]}]}


# -- 1. equality is JSON's: a bool is never a number ---------------------------


@pytest.mark.parametrize(
    ("path", "expected", "detail"),
    [
        ("debug", False, "debug is 0 (integer), expected false (boolean)"),
        ("retries", 1, "retries is true (boolean), expected 1 (integer)"),
        ("flags", [1, False], "flags is [true, 0], expected [1, false]"),
        ("nested", {"on": 1}, 'nested is {"on": true}, expected {"on": 1}'),
        ("ratio", 1.0 + 1e-9, "ratio is 1, expected 1.000000001"),
    ],
)
def test_json_equals_tells_a_bool_from_a_number(
    check: Check, git_repo: Path, path: str, expected: object, detail: str
) -> None:
    doc = {"debug": 0, "retries": True, "flags": [True, 0], "nested": {"on": True}, "ratio": 1}
    write(git_repo, "c.json", json.dumps(doc))
    item = check(equals(path, expected)).items[0]
    assert not item.passed and item.details == detail


def test_json_equals_still_passes_equal_values(check: Check, git_repo: Path) -> None:
    doc = {"debug": False, "ratio": 1, "half": 0.5, "flags": [True, 0, None], "m": {"a": [1.0]}}
    write(git_repo, "c.json", json.dumps(doc))
    contract = {
        "json": [
            {
                "path": "c.json",
                "assert": [
                    {"path": "debug", "equals": False},
                    {"path": "ratio", "equals": 1.0},  # 1 and 1.0 are one JSON number
                    {"path": "half", "equals": 0.5},
                    {"path": "flags", "equals": [True, 0, None]},
                    {"path": "m", "equals": {"a": [1]}},
                ],
            }
        ]
    }
    item = check(contract).items[0]
    assert item.passed, item.details


def test_yaml_equals_tells_a_bool_from_a_number(check: Check, git_repo: Path) -> None:
    write(git_repo, "c.yaml", "enabled: 1\nquiet: false\n")
    on = check(equals("enabled", True, "yaml", "c.yaml")).items[0]
    assert not on.passed and on.details == "enabled is 1 (integer), expected true (boolean)"
    off = check(equals("quiet", 0, "yaml", "c.yaml")).items[0]
    assert not off.passed and off.details == "quiet is false (boolean), expected 0 (integer)"


def test_array_none_match_tells_a_bool_from_a_number(check: Check, git_repo: Path) -> None:
    write(git_repo, "c.json", json.dumps({"jobs": [{"failed": 0}, {"failed": 1}]}))
    rule = {"path": "jobs", "field": "failed", "equals": True}
    clean = check({"json": [{"path": "c.json", "array_none_match": [rule]}]}).items[0]
    assert clean.passed, clean.details
    write(git_repo, "c.json", json.dumps({"jobs": [{"failed": 0}, {"failed": True}]}))
    hit = check({"json": [{"path": "c.json", "array_none_match": [rule]}]}).items[0]
    assert not hit.passed
    assert hit.details == "jobs[1].failed equals true, which no item may match"


def test_json_equal_keys_and_shapes() -> None:
    assert json_equal({True: 1}, {True: 1.0})
    assert not json_equal({True: 1}, {1: 1})  # YAML keys: a bool key is not an int key
    assert not json_equal([0], [False]) and not json_equal([0], (0,))
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}) and not json_equal("1", 1)
    assert json_equal(None, None) and not json_equal(None, False)


# -- 2. source_absent reads lines as matches and contains do -------------------


def test_source_absent_dollar_matches_before_crlf_like_matches(
    check: Check, git_repo: Path
) -> None:
    write(git_repo, "w.txt", b'line1\r\nsecret = "abc"\r\nold\rmac = "abc"\n')
    report = check(
        {
            "matches": [{"path": "w.txt", "pattern": '"abc"$'}],
            "source_absent": [{"pattern": '"abc"$', "paths": ["w.txt"]}],
        }
    )
    matched, absent = report.items
    assert matched.passed and matched.details == 'w.txt matches /"abc"$/ at line 2'
    assert not absent.passed
    # a lone CR is a line break too (universal newlines), as `matches` counts lines
    assert [(h["line"], h["text"]) for h in absent.extra["hits"]] == [
        (2, 'secret = "abc"'),
        (4, 'mac = "abc"'),
    ]


def test_source_absent_sees_crlf_text_across_lines_like_contains(
    check: Check, git_repo: Path
) -> None:
    """A pattern holding a line break (its literal goes to the prefilter) finds a CRLF file."""
    write(git_repo, "w.txt", b"line1\r\nsecret\r\n")
    report = check(
        {
            "contains": [{"path": "w.txt", "text": "line1\nsecret"}],
            "source_absent": [{"pattern": "line1\nsecret", "paths": ["w.txt"]}],
        }
    )
    contains, absent = report.items
    assert contains.passed
    assert not absent.passed and absent.extra["hits"][0]["line"] == 1


@pytest.mark.parametrize(
    ("clause", "key"),
    [
        ({"source_absent": [{"pattern": "\\r$", "paths": ["w.txt"]}]}, "source_absent[0].pattern"),
        ({"source_absent": [{"patterns": ["x", "(a\r|b\\x0d)"]}]}, "source_absent[0].patterns[1]"),
        ({"matches": [{"path": "w.txt", "pattern": "one\\r\\ntwo"}]}, "matches[0].pattern"),
        ({"matches": [{"path": "w.txt", "pattern": "one[\\r]"}]}, "matches[0].pattern"),
    ],
)
def test_a_pattern_that_needs_a_cr_is_a_load_error(clause: dict[str, object], key: str) -> None:
    """Read with universal newlines, no file holds a CR: `source_absent: '\\r$'` (meant to
    forbid CRLF files) would pass on every file, so it is refused where it is written."""
    with pytest.raises(UserError) as info:
        parse_contract(clause, file="p.md")
    assert info.value.key == f"verify.{key}"
    assert "needs a carriage return" in str(info.value)


def test_an_optional_cr_or_a_class_with_cr_still_loads(check: Check, git_repo: Path) -> None:
    write(git_repo, "w.txt", b"one\r\ntwo\n")
    report = check(
        {
            "matches": [{"path": "w.txt", "pattern": "one\\r?\\ntwo"}],
            "source_absent": [{"pattern": "one[\\r\\n]two"}],
        }
    )
    matched, absent = report.items
    assert matched.passed and not absent.passed


# -- 3. glob max: 0 -----------------------------------------------------------


def test_glob_max_zero_alone_means_none_may_exist(check: Check, git_repo: Path) -> None:
    contract = {"glob": [{"pattern": "*.log", "max": 0}, {"pattern": "*.log", "max_matches": 0}]}
    report = check(contract)
    assert report.passed, report.to_dict()
    assert report.items[0].details == "0 file(s) match *.log (min 0, max 0)"
    write(git_repo, "debug.log", "x")
    report = check(contract)
    assert not report.passed
    assert report.items[0].details == "1 files match *.log, more than max 0"


def test_glob_default_min_stays_one_with_a_max_above_it(check: Check) -> None:
    item = check({"glob": [{"pattern": "*.log", "max": 3}]}).items[0]
    assert not item.passed and item.details == "0 file(s) match *.log, need at least 1"


def test_glob_explicit_min_above_max_is_a_load_error() -> None:
    with pytest.raises(UserError) as info:
        parse_contract({"glob": [{"pattern": "*.log", "min": 1, "max": 0}]}, file="p.md")
    assert info.value.key == "verify.glob[0].max"


# -- 4. json is strict RFC 8259 -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"ratio": NaN}', "NaN is not a JSON value (RFC 8259 has no NaN or Infinity)"),
        ('{"max": Infinity}', "Infinity is not a JSON value (RFC 8259 has no NaN or Infinity)"),
        ("[-Infinity]", "-Infinity is not a JSON value (RFC 8259 has no NaN or Infinity)"),
        (
            '{"a": {"status": "fail", "status": "ok"}}',
            "repeated key 'status' in one object (RFC 8259: which one counts is unpredictable)",
        ),
    ],
)
def test_json_that_is_not_strict_does_not_parse(
    check: Check, git_repo: Path, text: str, reason: str
) -> None:
    write(git_repo, "c.json", text)
    item = check({"json": [{"path": "c.json"}]}).items[0]
    assert not item.passed and item.details == f"c.json does not parse as JSON: {reason}"


def test_json_that_is_not_utf8_does_not_pass(check: Check, git_repo: Path) -> None:
    write(git_repo, "c.json", b'{"name": "caf\xe9"}')
    item = check({"json": [{"path": "c.json"}]}).items[0]
    assert not item.passed
    assert item.details == "c.json is not UTF-8: byte 0xe9 at offset 13 (invalid continuation byte)"


def test_json_keys_repeated_in_different_objects_are_fine(check: Check, git_repo: Path) -> None:
    write(git_repo, "c.json", '[{"id": 1}, {"id": 2}]\r\n')
    item = check({"json": [{"path": "c.json", "root": "list"}]}).items[0]
    assert item.passed, item.details


# -- through the CLI: verify --json on a real packet ---------------------------


def test_verify_cli_reports_the_four_faults_as_failures(tmp_path: Path) -> None:
    prompts = {
        "01": {"verify": equals("debug", False)},
        "02": {"verify": {"source_absent": [{"pattern": '"abc"$', "paths": ["w.txt"]}]}},
        "03": {"verify": {"glob": [{"pattern": "*.log", "max": 0}]}},
        "04": {"verify": {"json": [{"path": "nan.json", "root": "map"}]}},
    }
    packet = make_packet(tmp_path, prompts)
    repo = tmp_path / "repo"
    write(repo, "c.json", '{"debug": 0}')
    write(repo, "w.txt", b'secret = "abc"\r\n')
    write(repo, "nan.json", '{"ratio": NaN}')
    result = cli("verify", packet, "--json")
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    verdicts = {r["prompt_id"]: r["pass"] for r in doc["reports"]}
    assert verdicts == {"01": False, "02": False, "03": True, "04": False}, doc


def test_cli_glob_min_above_max_exits_2_naming_file_and_key(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"glob": [{"pattern": "*.log", "min": 2, "max": 1}]}}}
    )
    result = cli("verify", packet)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "01_step.prompt.md: verify.glob[0].max: is below min (1 < 2)" in result.stderr
