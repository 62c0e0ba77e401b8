"""verify(): clause order, the report shape, and faults as values (catalog E6, F1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.verifier import VerifyContext, parse_contract, registry, verify
from tests.verifier.conftest import Check


def test_e6_basic_contract_passes_in_clause_order(check: Check, git_repo: Path) -> None:
    (git_repo / "hello.txt").write_text("hi", encoding="utf-8")
    (git_repo / "docs").mkdir()
    (git_repo / "docs" / "r.md").write_text("# R\n", encoding="utf-8")
    (git_repo / "c.yml").write_text("a: 1\n", encoding="utf-8")
    (git_repo / "m.json").write_text("[1]", encoding="utf-8")
    report = check(
        {
            "repos_clean": [],
            "changed_paths_only": ["hello.txt", "docs/", "c.yml", "m.json"],
            "commands": ["test -f README.md"],
            "source_absent": [{"pattern": "FIXME"}],
            "glob": ["*.md"],
            "json": ["m.json"],
            "yaml": ["c.yml"],
            "doc": ["docs/r.md"],
            "matches": [{"path": "README.md", "pattern": "Repo"}],
            "contains": [{"path": "README.md", "text": "# Repo"}],
            "files_absent": ["missing.txt"],
            "files_exist": ["README.md"],
        }
    )
    assert report.passed and report.fault is None and report.failures() == ()
    assert [i.kind for i in report.items] == [
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
    ]
    assert all(i.details for i in report.items)
    json.dumps(report.to_dict())


def test_empty_contract_passes_with_no_items(check: Check) -> None:
    report = check({})
    assert (
        report.passed
        and report.items == ()
        and report.to_dict()
        == {
            "pass": True,
            "items": [],
            "failures": [],
            "faults": [],
        }
    )


def test_fault_is_reported_separately_from_failures(check: Check) -> None:
    report = check(
        {"files_exist": ["nope.txt"], "commands": ["./missing-verifier", {"exec": "false"}]}
    )
    assert not report.passed
    assert report.fault is not None and report.fault.kind == "commands"
    assert [i.kind for i in report.failures()] == ["files_exist", "commands"]
    data = report.to_dict()
    assert len(data["faults"]) == 1 and data["faults"][0]["verdict"] == "verifier_fault"
    assert len(data["failures"]) == 2


def test_an_exception_inside_a_clause_becomes_a_fault(
    git_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = registry.get("files_exist")
    assert spec is not None

    def broken(entries: object, ctx: object) -> list[object]:
        raise RuntimeError("disk on fire")

    monkeypatch.setitem(
        registry._SPECS, "files_exist", spec.__class__(**{**spec.__dict__, "check": broken})
    )
    contract = parse_contract({"files_exist": ["README.md"]}, file="p.md")
    report = verify(contract, VerifyContext(repos={"app": git_repo}, default_repo="app"))
    assert report.fault is not None and report.fault.verdict == "verifier_fault"
    assert (
        report.fault.details
        == "verifier error while checking files_exist: RuntimeError: disk on fire"
    )


def test_no_default_repo_is_a_clear_failure(git_repo: Path) -> None:
    contract = parse_contract({"files_exist": ["README.md"]}, file="p.md")
    report = verify(contract, VerifyContext(repos={"app": git_repo}, default_repo=None))
    assert (
        report.items[0].details == "no repo: the entry has no `repo:` and the prompt has no targets"
    )
