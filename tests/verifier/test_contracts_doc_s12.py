"""docs/contracts.md stays the reference of every registered verifier clause.

Each clause the registry knows has a ``### `NAME``` section, and every YAML
block marked ``<!-- contract-example -->`` (the line right before its
fence) is a ``verify:`` mapping the real :func:`parse_contract` accepts; each
clause section carries at least one such example that uses its clause.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prompt_runner import strict_yaml
from prompt_runner.verifier import parse_contract, registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "contracts.md"
MARKER = "<!-- contract-example -->"
_CLAUSE_HEADING = re.compile(r"^### `([a-z_]+)`[ \t]*$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,3} ", re.MULTILINE)
_EXAMPLE = re.compile(
    r"^" + re.escape(MARKER) + r"[ \t]*\n```yaml\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL
)


def registered_clauses() -> tuple[str, ...]:
    """Every clause name: what the clause modules register and what the index lists."""
    names = [spec.name for spec in registry.specs()]
    return tuple(dict.fromkeys([*names, *registry.names()]))


def clause_sections(text: str) -> dict[str, str]:
    """Clause name -> the text of its ``### `NAME``` section (up to the next heading
    of level 1-3)."""
    sections: dict[str, str] = {}
    for m in _CLAUSE_HEADING.finditer(text):
        end = _HEADING.search(text, m.end())
        sections[m.group(1)] = text[m.end() : end.start() if end else len(text)]
    return sections


def missing_sections(text: str, names: tuple[str, ...]) -> list[str]:
    """The clause names of ``names`` without a section in ``text``."""
    present = clause_sections(text)
    return [name for name in names if name not in present]


def marked_examples(text: str) -> list[str]:
    """The YAML text of every block marked as a contract example.

    Raises:
        AssertionError: a marker is not directly followed by a ```yaml block.
    """
    found = _EXAMPLE.findall(text)
    markers = sum(1 for line in text.splitlines() if line.strip() == MARKER)
    assert markers == len(found), f"a {MARKER} line must be directly followed by a ```yaml block"
    return found


def parsed_example(block: str, where: str) -> dict[str, object]:
    """The example's ``verify:`` mapping, after :func:`parse_contract` accepted it."""
    raw = strict_yaml.load(block)
    assert isinstance(raw, dict) and list(raw) == ["verify"], (
        f"{where}: a contract example is a mapping with the one key `verify:`"
    )
    verify = raw["verify"]
    assert isinstance(verify, dict)
    contract = parse_contract(verify, file=where)  # raises UserError when it is wrong
    assert not contract.is_empty(), f"{where}: the example asserts nothing"
    return verify


def test_every_registered_clause_has_a_section() -> None:
    assert missing_sections(DOC.read_text(encoding="utf-8"), registered_clauses()) == []


def test_no_section_documents_a_clause_that_is_not_registered() -> None:
    documented = set(clause_sections(DOC.read_text(encoding="utf-8")))
    assert documented - set(registered_clauses()) == set()


def test_a_removed_clause_section_is_found_missing() -> None:
    """The check above fails when a clause section goes (here: ``doc``'s heading)."""
    text = DOC.read_text(encoding="utf-8")
    assert "### `doc`\n" in text
    assert missing_sections(text.replace("### `doc`\n", "### The doc clause\n"), ("doc",)) == [
        "doc"
    ]


@pytest.mark.parametrize("name", registered_clauses())
def test_each_clause_section_has_an_example_that_parses(name: str) -> None:
    section = clause_sections(DOC.read_text(encoding="utf-8")).get(name)
    assert section is not None, f"docs/contracts.md has no ### `{name}` section"
    examples = marked_examples(section)
    assert examples, f"### `{name}` has no {MARKER} yaml block"
    for i, block in enumerate(examples):
        verify = parsed_example(block, f"docs/contracts.md ### `{name}` example {i + 1}")
        assert name in verify, f"### `{name}` example {i + 1} does not use `{name}`"


def test_every_marked_example_in_the_page_parses() -> None:
    examples = marked_examples(DOC.read_text(encoding="utf-8"))
    assert len(examples) >= len(registered_clauses())
    for i, block in enumerate(examples):
        parsed_example(block, f"docs/contracts.md example {i + 1}")


def test_a_wrong_example_is_refused_by_the_real_parser() -> None:
    """The examples are judged by the verifier's own parser: a wrong key fails."""
    from prompt_runner.errors import UserError

    with pytest.raises(UserError, match="unknown key"):
        parsed_example("verify:\n  contains: [{path: a, txt: b}]\n", "bad example")
