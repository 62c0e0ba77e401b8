"""``packet lint`` warns about regexes shaped like ``(a+)+`` (issue 12.10)."""

from __future__ import annotations

from pathlib import Path

from prompt_runner import lint_packet
from prompt_runner.packet.lint import WARNING_KINDS
from tests.packet._packets import GOOD_VERIFY, make_packet, prompt


def test_nested_quantifiers_are_warned_about_in_every_regex_clause(tmp_path: Path) -> None:
    verify = {
        **GOOD_VERIFY,
        "matches": [{"path": "NOTES.md", "pattern": "^(a+)+$"}],
        "source_absent": [{"path": ".", "patterns": ["TODO", r"(\w+\s?)*;"]}],
        "commands": [
            {"exec": "true", "timeout_ms": 1000, "stdout_matches": [r"\d+ passed", "(x*)*y"]}
        ],
    }
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": prompt(verify=verify)})
    found = [f for f in lint_packet(root).findings if f.kind == "regex_nested_quantifier"]
    assert "regex_nested_quantifier" in WARNING_KINDS
    assert [f.severity for f in found] == ["warning"] * 3
    keys = [f.message.split("`")[1] for f in found]
    assert sorted(keys) == [
        "verify.commands[0].stdout_matches[1]",
        "verify.matches[0].pattern",
        "verify.source_absent[0].patterns[1]",
    ]
    assert "/^(a+)+$/" in found[[k.endswith("pattern") for k in keys].index(True)].message


def test_plain_and_possessive_repeats_are_not_warned_about(tmp_path: Path) -> None:
    verify = {
        **GOOD_VERIFY,
        "matches": [
            {"path": "NOTES.md", "pattern": r"^\d+ passed"},
            {"path": "NOTES.md", "pattern": "(a++)+"},
            {"path": "NOTES.md", "pattern": "(?>a+)+"},
            {"path": "NOTES.md", "pattern": "(ab{2})+"},
        ],
    }
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": prompt(verify=verify)})
    assert not [f for f in lint_packet(root).findings if f.kind == "regex_nested_quantifier"]
