"""Property-based, as the packet loader's (tests/packet/test_fuzz.py): any malformed
workspace manifest ends in exit 2 with one sentence naming the file, and nothing is written."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompt_runner.cli.main import main
from prompt_runner.errors import UserError
from prompt_runner.workspace import load_workspace

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
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        ["prompt_runner.workspace/v1", "auto", "/abs", "../up", "main", "runner", "app"]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(INNER), inner, max_size=3),
    ),
    max_leaves=8,
)
GOOD = {
    "schema": "prompt_runner.workspace/v1",
    "id": "fuzz",
    "repositories": {"app": {"remote": "/remote/app.git"}},
    "packet": {"repo": "app", "path": "packets/p"},
}
manifests = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), values, max_size=6),
    # one key of a valid manifest replaced: the errors deep inside
    st.tuples(st.sampled_from(KEYS), values).map(lambda kv: {**GOOD, kv[0]: kv[1]}),
)


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _check(content: bytes) -> None:
    work = Path(tempfile.mkdtemp(prefix="ws-fuzz-"))
    try:
        manifest = work / "workspace.yml"
        manifest.write_bytes(content)
        for home in ("XDG_STATE_HOME", "XDG_DATA_HOME"):
            os.environ[home] = str(work / home.lower())
        try:
            load_workspace(manifest)
        except UserError as exc:
            text = str(exc)
            assert text.startswith(str(manifest)), text
            assert "\n" not in text.strip() and "Traceback" not in text
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["workspace", "prepare", str(manifest)])
            assert code == 2, err.getvalue()
            assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: ")
            assert str(manifest) in err.getvalue()
        assert _tree(work) == ["workspace.yml"]  # loading (or refusing) writes nothing
    finally:
        shutil.rmtree(work, ignore_errors=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests)
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
