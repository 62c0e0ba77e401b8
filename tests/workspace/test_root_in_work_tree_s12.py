"""An ``operator.workspace_root`` inside a git work tree (the user's own
checkout) or a bare repository is said by ``workspace plan`` and ``prepare``
(new user s13: it was taken silently and the checkout then showed ``?? repos/``
and ``?? workspace.lock.json``). A note, not a refusal: a work tree that
ignores the directory is a choice."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.workspaces import make_workspace


def _rooted(tmp_path: Path, root: Path) -> Path:
    manifest = make_workspace(tmp_path)
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    doc.setdefault("operator", {})["workspace_root"] = str(root)
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return manifest


def test_plan_and_prepare_note_a_root_inside_a_work_tree(tmp_path: Path) -> None:
    checkout = make_git_repo(tmp_path / "checkout")
    manifest = _rooted(tmp_path, checkout / "ws")
    planned = cli("workspace", "plan", manifest)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    said = f"operator.workspace_root ({checkout / 'ws'}) lies inside the git work tree {checkout}"
    assert f"Note: {said}" in planned.stdout, planned.stdout
    assert said in json.loads(cli("workspace", "plan", manifest, "--json").stdout)["notes"][0]
    prepared = cli("workspace", "prepare", manifest)
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    assert f"Note: {said}" in prepared.stdout, prepared.stdout


def test_a_root_outside_any_repository_gets_no_note(tmp_path: Path) -> None:
    manifest = _rooted(tmp_path, tmp_path / "plain" / "ws")
    planned = cli("workspace", "plan", manifest, "--json")
    assert json.loads(planned.stdout)["notes"] == []
