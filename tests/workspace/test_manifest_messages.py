"""A workspace manifest's mistakes read as written: ``schema`` among the known keys
(not the attribute ``schema_``), an argv given as a string is told to be a list."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.workspace.load import load_workspace

BASE = """\
schema: prompt_runner.workspace/v1
id: demo
repositories: {app: {remote: ../remotes/app.git}}
packet: {repo: app, path: packets/demo}
"""


def _refused(tmp_path: Path, text: str) -> UserError:
    manifest = tmp_path / "workspace.yml"
    manifest.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as caught:
        load_workspace(manifest)
    return caught.value


def test_an_unknown_key_lists_schema_as_written(tmp_path: Path) -> None:
    error = _refused(tmp_path, BASE + "bogus: 1\n")
    assert error.key == "bogus" and error.fix is not None
    assert "requires, schema)" in error.fix and "schema_" not in error.fix


def test_a_string_build_is_told_to_be_an_argv_list(tmp_path: Path) -> None:
    error = _refused(
        tmp_path,
        BASE + "contracts:\n  artifacts:\n    - {id: a, repo: app, output: o, build: make}\n",
    )
    assert error.key == "contracts.artifacts[0].build"
    assert "'make' is a string, not a list" in str(error) and "tuple" not in str(error)
    assert error.fix == "write it as a YAML list, e.g. [make]"
