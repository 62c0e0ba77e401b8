"""The fleet manifest: listed workspaces and a template over repositories load into a
frozen Fleet; every bad manifest is exit 2, one sentence naming the file and the key."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.workspace.load import parse_manifest
from tests.helpers.cli import cli
from tests.helpers.fleets import make_fleet
from tests.helpers.workspaces import make_workspace


def _write(path: Path, doc: Any) -> Path:
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def listed(tmp_path: Path) -> Path:
    """A fleet of two workspaces with their own manifests (ws/a.yml, ws/b.yml)."""
    a = make_workspace(tmp_path / "a", manifest={"id": "ws-a"})
    b = make_workspace(tmp_path / "b", manifest={"id": "ws-b"})
    here = tmp_path / "ops"
    here.mkdir()
    doc = {
        "schema": "prompt_runner.fleet/v1",
        "id": "pair",
        "workspaces": [os.path.relpath(a, here), os.path.relpath(b, here)],
    }
    return _write(here / "fleet.yml", doc)


def test_listed_workspaces_load_in_order_with_the_defaults(listed: Path) -> None:
    fleet = prompt_runner.load_fleet(listed)
    assert [m.id for m in fleet.members] == ["ws-a", "ws-b"]
    assert [m.origin for m in fleet.members] == ["workspaces[0]", "workspaces[1]"]
    assert all(m.manifest_text is None for m in fleet.members)
    assert (fleet.engine, fleet.concurrency, fleet.failure_policy) == ("local", 1, "continue")
    assert fleet.workflow_id("ws-a") == "prompt-runner/pair/ws-a"
    state_home = Path(os.environ["XDG_STATE_HOME"])
    assert fleet.layout.root == state_home / "prompt_runner" / "fleets" / "pair"
    with pytest.raises(dataclasses.FrozenInstanceError):
        fleet.concurrency = 9  # type: ignore[misc]
    with pytest.raises(
        UserError, match=r"fleet 'pair' has no workspace 'nope' \(its workspaces: ws-a, ws-b\)"
    ):
        fleet.member("nope")


def test_a_template_gives_each_repository_its_own_workspace_clone_and_branch(
    tmp_path: Path,
) -> None:
    path = make_fleet(tmp_path, 3)
    fleet = prompt_runner.load_fleet(path)
    assert [m.id for m in fleet.members] == ["mig-t0", "mig-t1", "mig-t2"]
    roots = {m.workspace.workspace_root for m in fleet.members}
    assert len(roots) == 3
    for i, member in enumerate(fleet.members):
        ws = member.workspace
        assert member.origin == f"template.repositories[{i}]"
        assert ws.repositories["target"].remote == str(tmp_path / "remotes" / f"t{i}.git")
        assert ws.repositories["target"].ref == "main"
        assert ws.repositories["packets"].remote == str(tmp_path / "remotes" / "packets.git")
        assert ws.commits.branch == f"prompt-runner/mig/t{i}"
        assert ws.manifest_path == fleet.layout.member_manifest(member.id)
        assert not ws.manifest_path.exists()  # loading writes nothing
        assert member.manifest_text is not None
        again = parse_manifest(yaml.safe_load(member.manifest_text), file="x")
        assert again.id == member.id and again.commits.branch == ws.commits.branch


def test_template_patterns_refs_and_absolute_roots(tmp_path: Path) -> None:
    path = make_fleet(tmp_path, 2)
    template = yaml.safe_load((path.parent / "template.yml").read_text())
    template["operator"]["workspace_root"] = str(tmp_path / "data")
    template["operator"]["runtime_root"] = str(tmp_path / "run")
    _write(path.parent / "template.yml", template)
    doc = yaml.safe_load(path.read_text())
    doc["template"]["id"] = "x-{name}-{fleet}"
    doc["template"]["branch"] = "work/{name}"
    doc["template"]["repositories"][1]["ref"] = "v2"
    fleet = prompt_runner.load_fleet(_write(path, doc))
    first, second = (m.workspace for m in fleet.members)
    assert (first.id, second.id) == ("x-t0-mig", "x-t1-mig")
    assert first.workspace_root == tmp_path / "data" / "x-t0-mig"
    assert second.runtime_root == tmp_path / "run" / "x-t1-mig"
    assert (first.commits.branch, second.commits.branch) == ("work/t0", "work/t1")
    assert (first.repositories["target"].ref, second.repositories["target"].ref) == ("main", "v2")


BAD: list[tuple[str, Any, str]] = [
    ("schema", "prompt_runner.fleet/v9", "schema: 'prompt_runner.fleet/v9' is not a fleet schema"),
    ("concurrency", 0, "concurrency: must be 1 or more (got 0)"),
    ("concurrency", True, "concurrency:"),
    ("engine", "kubernetes", "engine: 'kubernetes' is not an accepted value"),
    ("failure_policy", "halt", "failure_policy: 'halt' is not an accepted value"),
    ("workspace", ["a.yml"], "workspace: unknown key; did you mean 'workspaces'?"),
    ("temporal", {"adress": "x:1"}, "temporal.adress: unknown key; did you mean 'address'?"),
    ("workspaces", ["missing.yml"], "workspaces[0]: 'missing.yml' does not exist"),
    ("id", "no spaces", "id: 'no spaces' does not match the pattern"),
]


@pytest.mark.parametrize(
    ("key", "value", "said"), BAD, ids=[b[0] + str(i) for i, b in enumerate(BAD)]
)
def test_a_bad_key_is_one_sentence_naming_the_file_and_key(
    listed: Path, key: str, value: Any, said: str
) -> None:
    doc = yaml.safe_load(listed.read_text())
    doc[key] = value
    _write(listed, doc)
    with pytest.raises(UserError) as caught:
        prompt_runner.load_fleet(listed)
    assert str(caught.value).startswith(f"{listed}: "), str(caught.value)
    assert said in str(caught.value)
    done = cli("fleet", "plan", listed)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr
    assert "Traceback" not in done.stderr and said in done.stderr


def _template_error(tmp_path: Path, change: dict[str, Any]) -> str:
    path = make_fleet(tmp_path, 2)
    doc = yaml.safe_load(path.read_text())
    doc["template"].update(change)
    _write(path, doc)
    with pytest.raises(UserError) as caught:
        prompt_runner.load_fleet(path)
    text = str(caught.value)
    assert text.startswith(f"{path}: template"), text
    return text


def test_template_mistakes_name_the_template_key(tmp_path: Path) -> None:
    assert "template.repository: 'tagret' is not one of the template's repositories" in (
        _template_error(tmp_path / "1", {"repository": "tagret"})
    )
    assert "{nope} is not a placeholder" in _template_error(tmp_path / "2", {"id": "{nope}"})
    assert "must contain {name}" in _template_error(tmp_path / "3", {"branch": "one/branch"})
    dup = {"repositories": [{"name": "x", "remote": "a.git"}, {"name": "x", "remote": "b.git"}]}
    assert "template.repositories[1]: the workspace id 'mig-x' is given twice" in (
        _template_error(tmp_path / "4", dup)
    )
    bad_branch = {"branch": "a..b/{name}"}
    assert "template.repositories[0]: the template applied to 't0' is not a valid workspace" in (
        _template_error(tmp_path / "5", bad_branch)
    )


def test_no_member_and_shared_roots_are_refused(listed: Path) -> None:
    doc = yaml.safe_load(listed.read_text())
    _write(listed, {**doc, "workspaces": []})
    with pytest.raises(UserError, match=r"workspaces: names no workspace"):
        prompt_runner.load_fleet(listed)
    _write(listed, {**doc, "workspaces": [doc["workspaces"][0], doc["workspaces"][0]]})
    with pytest.raises(UserError, match=r"workspaces\[1\]: the workspace id 'ws-a' is given twice"):
        prompt_runner.load_fleet(listed)


def test_a_member_manifests_own_error_names_its_own_file(listed: Path) -> None:
    member = listed.parent / yaml.safe_load(listed.read_text())["workspaces"][0]
    member = member.resolve()
    member.write_text(member.read_text().replace("repositories:", "repositorie:"))
    with pytest.raises(UserError) as caught:
        prompt_runner.load_fleet(listed)
    assert str(caught.value).startswith(str(member))


def test_schema_fleet_is_a_json_schema_the_manifests_meet(tmp_path: Path, listed: Path) -> None:
    done = cli("schema", "fleet")
    assert done.returncode == 0, done.stderr
    schema = json.loads(done.stdout)
    assert schema["$schema"].startswith("https://json-schema.org/")
    for path in (listed, make_fleet(tmp_path / "t", 2)):
        jsonschema.validate(yaml.safe_load(path.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema": "prompt_runner.fleet/v1", "id": "x", "bogus": 1}, schema)
