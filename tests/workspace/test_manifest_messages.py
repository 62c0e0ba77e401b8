"""A workspace manifest's mistakes read as written: ``schema`` among the known keys
(not the attribute ``schema_``), an argv given as a string is told to be a list."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.workspace.load import load_workspace
from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace

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


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_plan_and_prepare_agree_an_unmet_requirement_is_exit_2(
    tmp_path: Path, json_flag: tuple[str, ...]
) -> None:
    manifest = make_workspace(tmp_path, manifest={"requires": {"prompt_runner": ">=99"}})
    planned = cli("workspace", "plan", manifest, *json_flag)
    assert planned.returncode == 2, (planned.stdout, planned.stderr)
    assert "requires.prompt_runner '>=99' does not match this build" in planned.stdout
    prepared = cli("workspace", "prepare", manifest, *json_flag)
    assert prepared.returncode == 2, (prepared.stdout, prepared.stderr)


def test_plan_with_another_problem_stays_exit_1(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    assert cli("workspace", "prepare", manifest).returncode == 0
    clone = json.loads(cli("workspace", "plan", manifest, "--json").stdout)["repositories"][1]
    (Path(clone["clone"]) / "dirty.txt").write_text("x\n", encoding="utf-8")
    planned = cli("workspace", "plan", manifest)
    assert planned.returncode == 1, (planned.stdout, planned.stderr)
