"""Checklist labels and rendering (catalog K4), matched against the reference packets."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from prompt_runner.verifier import Contract, checklist_items, parse_contract, render_checklist

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference-packets"


def test_every_clause_has_a_label() -> None:
    c = parse_contract(
        {
            "files_exist": ["hello.txt"],
            "files_absent": [{"repo": "docs", "path": "old.md"}],
            "contains": [{"path": "hello.txt", "text": "hi"}],
            "matches": [{"path": "hello.txt", "pattern": "h+"}],
            "doc": ["docs/r.md"],
            "yaml": ["c.yml"],
            "json": ["m.json"],
            "glob": [{"pattern": "out/*.png", "min": 2, "non_empty": True}],
            "source_absent": [{"pattern": "TODO", "paths": ["src"]}],
            "commands": [{"exec": "pytest", "args": ["-q", "a b"]}, "make test"],
            "changed_paths_only": ["hello.txt"],
            "repos_clean": ["app"],
        },
        file="p.md",
    )
    assert checklist_items(c, default_repo="app") == [
        "changed path allowed: hello.txt",
        "command passes: pytest -q 'a b'",
        "command passes: make test",
        "contains: hello.txt",
        "doc: docs/r.md (non-blank; 1 lines advisory)",
        "file absent: docs:old.md",
        "file exists: hello.txt",
        "glob: out/*.png (at least 2, non-empty)",
        "json: m.json",
        "matches: hello.txt",
        "repo committed: app",
        "source absent: TODO in src",
        "yaml: c.yml",
    ]


def test_render_with_items_and_without() -> None:
    c = parse_contract({"files_exist": ["hello.txt"]}, file="p.md")
    assert render_checklist("01", "Create hello", c, default_repo="app") == (
        "# Checklist 01: Create hello\n\nGenerated from the prompt verification contract.\n\n"
        "## Verification Items\n\n- [ ] file exists: hello.txt\n"
    )
    empty = render_checklist("02", "Nothing", Contract({}), default_repo="app")
    assert empty.startswith("# Checklist 02: Nothing\n") and "## Verification Items" in empty
    assert "No verification items yet" in empty and "- [ ]" not in empty


def _reference_prompts() -> list[Path]:
    return sorted(REFERENCE.glob("*/prompts/*.prompt.md")) if REFERENCE.is_dir() else []


@pytest.mark.compat
@pytest.mark.skipif(not REFERENCE.is_dir(), reason="../shared/reference-packets not present")
@pytest.mark.parametrize(
    "prompt", _reference_prompts(), ids=lambda p: f"{p.parent.parent.name}/{p.name}"
)
def test_reference_checklists_are_reproduced_byte_for_byte(prompt: Path) -> None:
    front = yaml.safe_load(prompt.read_text(encoding="utf-8").split("---\n")[1])
    contract = parse_contract(front.get("verify"), file=str(prompt))
    expected = prompt.with_name(prompt.name.replace(".prompt.md", ".prompt.checklist.md"))
    rendered = render_checklist(
        front["id"], front["name"], contract, default_repo=front["targets"][0]
    )
    assert rendered == expected.read_text(encoding="utf-8")
