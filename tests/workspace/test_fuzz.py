"""Property-based, as the packet loader's (tests/packet/test_fuzz.py): any malformed
workspace manifest ends in exit 2 with one sentence naming the file, and nothing is written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompt_runner.errors import UserError
from prompt_runner.workspace import load_workspace
from tests.helpers.manifest_fuzz import check_manifest, manifests, scalars, values

KEYS = [
    "schema",
    "id",
    "requires",
    "repositories",
    "packet",
    "operator",
    "commits",
    "failure_policy",
    "contracts",
    "notify",
    "bogus",
]
INNER = [
    "remote",
    "ref",
    "source",
    "repo",
    "path",
    "workspace_root",
    "runtime_root",
    "containment",
    "mode",
    "push",
    "branch",
    "artifacts",
    "id",
    "build",
    "output",
    "project",
    "prompt_runner",
    "capabilities",
    "app",
]
leaves = values(
    scalars(["prompt_runner.workspace/v1", "auto", "/abs", "../up", "main", "runner", "app"]),
    INNER,
)
GOOD = {
    "schema": "prompt_runner.workspace/v1",
    "id": "fuzz",
    "repositories": {"app": {"remote": "/remote/app.git"}},
    "packet": {"repo": "app", "path": "packets/p"},
}
workspace_manifests = manifests(KEYS, leaves, GOOD)


def _check(content: bytes) -> None:
    check_manifest(
        content,
        name="workspace.yml",
        load=load_workspace,
        command=["workspace", "prepare"],
        prefix="ws-fuzz-",
        error_names_manifest=True,
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workspace_manifests)
def test_random_manifests_load_or_fail_in_one_sentence(data: dict[str, object]) -> None:
    _check(yaml.safe_dump(data, allow_unicode=True).encode())


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes_fail_in_one_sentence(data: bytes) -> None:
    _check(data)


@pytest.mark.parametrize(
    ("text", "key", "words"),
    [
        ("id: x\n", "schema", "is missing"),
        ("schema: prompt_runner.workspace/v2\n", "schema", "is not a workspace schema"),
        ("- a\n", None, "must be a YAML mapping"),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {}\n"
            "packet: {repo: a, path: p}\n",
            "repositories",
            "must not be empty",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: 'bad id'\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: a, path: p}\n",
            "id",
            "does not match",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: b, path: p}\n",
            "packet.repo",
            "'b' is not one of the repositories",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: a, path: ../p}\n",
            "packet.path",
            "relative path inside",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: a, path: p}\noperator: {runtime_root: rel}\n",
            "operator.runtime_root",
            "must be 'auto' or an absolute path",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: a, path: p}\ncommits: {mode: agent}\n",
            "commits.mode",
            "'agent'",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: a, path: p}\nrequires: {capabilities: [teleport]}\n",
            "requires.capabilities",
            "'teleport' is not a published capability",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: a, path: p}\nrequires: {prompt_runner: 'about 1'}\n",
            "requires.prompt_runner",
            "is not a version clause",
        ),
        (
            "schema: prompt_runner.workspace/v1\nid: x\nrepositories: {a: {remote: r}}\n"
            "packet: {repo: a, path: p}\nrepositoris: {}\n",
            "repositoris",
            "did you mean",
        ),
        ("schema: prompt_runner.workspace/v1\nid: x\nid: y\n", None, "duplicate key 'id'"),
    ],
)
def test_each_mistake_is_named(tmp_path: Path, text: str, key: str | None, words: str) -> None:
    manifest = tmp_path / "workspace.yml"
    manifest.write_text(text)
    with pytest.raises(UserError) as caught:
        load_workspace(manifest)
    assert caught.value.key == key, str(caught.value)
    assert words in str(caught.value) and caught.value.fix
