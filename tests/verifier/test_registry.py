"""The clause registry says which clauses name a prompt's outputs (what its commit may take)."""

from __future__ import annotations

from prompt_runner.verifier import registry


def test_the_clauses_whose_paths_are_outputs() -> None:
    assert registry.output_clauses() == {
        "files_exist",
        "files_absent",
        "contains",
        "matches",
        "doc",
        "yaml",
        "json",
        "glob",
        "changed_paths_only",
    }


def test_clauses_that_only_read_or_scan_paths_name_no_outputs() -> None:
    names = {spec.name for spec in registry.specs()}
    assert {"commands", "source_absent", "repos_clean"} <= names
    assert not {"commands", "source_absent", "repos_clean"} & registry.output_clauses()
    assert all(
        spec.names_outputs == (spec.name in registry.output_clauses()) for spec in registry.specs()
    )
