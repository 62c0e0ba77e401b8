"""The clause registry says which clauses name a prompt's outputs (what its commit may take)."""

from __future__ import annotations

import subprocess
import sys

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


def test_the_index_is_what_the_modules_register() -> None:
    """``INDEX`` (known without importing the clause modules) says each clause's
    module, order and flags as its registered spec does."""
    specs = registry.specs()  # imports every clause module
    assert tuple(spec.name for spec in specs) == registry.names() == tuple(registry.INDEX)
    for spec in specs:
        module, structural, outputs = registry.INDEX[spec.name]
        assert spec.parse.__module__ == f"prompt_runner.verifier.clauses.{module}" or (
            spec.check.__module__ == f"prompt_runner.verifier.clauses.{module}"
        ), spec.name
        assert (spec.structural, spec.names_outputs) == (structural, outputs), spec.name
    assert registry.structural_names() == {s.name for s in specs if s.structural}
    assert registry.output_clauses() == {s.name for s in specs if s.names_outputs}


LAZY_PROBE = """
import sys
from prompt_runner.verifier import STRUCTURAL_CLAUSES, contract_keys, parse_contract, verify
from prompt_runner.verifier.registry import output_clauses
prefix = "prompt_runner.verifier.clauses."
def loaded():
    return sorted(m[len(prefix):] for m in sys.modules if m.startswith(prefix))
contract_keys(), output_clauses(), STRUCTURAL_CLAUSES
print(loaded())
raw = {"files_exist": ["a"], "json": [{"path": "b.json", "required_paths": ["k"]}]}
parse_contract(raw, file="p.md")
print(loaded())
"""


def test_a_contract_imports_only_its_clauses_modules() -> None:
    out = subprocess.run(
        [sys.executable, "-c", LAZY_PROBE], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]", "['data', 'files']"]
