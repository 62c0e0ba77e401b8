"""The doc clause (catalog E4)."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.verifier import checklist_items, parse_contract
from tests.verifier.conftest import Check

BODY = "\n".join(f"Body line {i}." for i in range(40))


def write_report(repo: Path, verdict: str = "## Verdict", extra: str = "") -> Path:
    path = repo / "docs" / "report.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"# Report\n## Method\n{BODY}\n{extra}{verdict}\nThe measurement held.\n"
    path.write_text(text, encoding="utf-8")
    return path


SECTIONS = {
    "path": "docs/report.md",
    "min_lines": 20,
    "requires_sections": ["## Method", "## Verdict"],
}


def test_real_document_passes(check: Check, git_repo: Path) -> None:
    write_report(git_repo)
    item = check({"doc": [SECTIONS]}).items[0]
    assert item.passed and item.repo == "app" and item.path == "docs/report.md"
    assert item.details == "ok: 44 non-blank lines"
    assert item.extra["markers"] == [] and item.extra["missing_sections"] == []


def test_min_lines_is_advisory(check: Check, git_repo: Path) -> None:
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "report.md").write_text(
        "# Report\n\n## Method\n\n## Verdict\n", encoding="utf-8"
    )
    item = check({"doc": [{"path": "docs/report.md", "min_lines": 100}]}).items[0]
    assert item.passed
    assert item.extra["lines"] == 3 and item.extra["min_lines"] == 100
    assert item.extra["below_recommendation"] is True
    assert item.details == "ok: 3 non-blank lines (below the advisory min_lines 100)"


def test_missing_section_is_named(check: Check, git_repo: Path) -> None:
    write_report(git_repo, verdict="## Conclusion")
    item = check({"doc": [SECTIONS]}).items[0]
    assert not item.passed and item.extra["missing_sections"] == ["## Verdict"]
    assert item.details == "missing sections: ## Verdict"


def test_markers_with_line_numbers(check: Check, git_repo: Path) -> None:
    write_report(git_repo, extra="TODO write this up\n- FIXME: later\n")
    item = check({"doc": [SECTIONS]}).items[0]
    assert not item.passed
    assert item.extra["markers"] == [
        {"marker": "TODO", "line": 43},
        {"marker": "FIXME", "line": 44},
    ]
    assert item.details == "forbidden markers: TODO (line 43), FIXME (line 44); finish those parts"


def test_markers_disabled_mid_line_and_custom(check: Check, git_repo: Path) -> None:
    write_report(git_repo, extra="TODO write this up\n")
    assert check({"doc": [{**SECTIONS, "forbids_markers": []}]}).passed
    write_report(git_repo, extra="We removed the TODO marker.\nTODOS are fine\n")
    item = check({"doc": ["docs/report.md"]}).items[0]
    assert item.passed and item.extra["markers"] == []
    write_report(git_repo, extra="PLACEHOLDER and TODO\nTODO: x\n")
    item = check({"doc": [{**SECTIONS, "forbids_markers": ["PLACEHOLDER"]}]}).items[0]
    assert item.extra["markers"] == [{"marker": "PLACEHOLDER", "line": 43}]


def test_missing_and_blank_documents(check: Check, git_repo: Path) -> None:
    (git_repo / "EMPTY.md").write_text("\n\n\n", encoding="utf-8")
    missing, blank = check({"doc": ["docs/report.md", "EMPTY.md"]}).items
    assert not missing.passed and missing.extra["lines"] == 0
    assert (
        missing.details.startswith("missing: docs/report.md does not exist")
        and "lines=0" in missing.details
    )
    assert not blank.passed and blank.extra["min_lines"] == 1
    assert blank.details == "document is blank: EMPTY.md has no non-blank lines; write it"


def test_doc_in_another_repo(check: Check, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "NOTES.md").write_text("notes\n", encoding="utf-8")
    item = check({"doc": [{"repo": "other", "path": "NOTES.md"}]}, repos={"other": other}).items[0]
    assert item.passed and item.extra["resolved_path"] == str(other / "NOTES.md")


def test_checklist_labels() -> None:
    c = parse_contract(
        {
            "doc": [
                {"path": "docs/report.md", "min_lines": 100},
                {"repo": "app", "path": "docs/other.md"},
            ]
        },
        file="p.md",
    )
    assert checklist_items(c, default_repo="docs") == [
        "doc: docs/report.md (non-blank; 100 lines advisory)",
        "doc: app:docs/other.md (non-blank; 1 lines advisory)",
    ]
