"""Property-based, as the workspace manifest's (tests/workspace/test_fuzz.py): any malformed
fleet manifest ends in exit 2 with one sentence naming the file, and nothing is written."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompt_runner.cli.main import main
from prompt_runner.errors import UserError
from prompt_runner.fleet import load_fleet

KEYS = [
    "schema",
    "id",
    "engine",
    "concurrency",
    "failure_policy",
    "workspaces",
    "template",
    "temporal",
    "bogus",
]
INNER = [
    "workspace",
    "repository",
    "repositories",
    "id",
    "branch",
    "name",
    "remote",
    "ref",
    "address",
    "namespace",
    "task_queue",
    "target",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(
        [
            "prompt_runner.fleet/v1",
            "local",
            "temporal",
            "ws.yml",
            "template.yml",
            "target",
            "{name}",
            "{fleet}-{name}",
            "{bad}",
            "../up",
        ]
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
    "schema": "prompt_runner.fleet/v1",
    "id": "fuzz",
    "workspaces": ["ws.yml"],
    "template": {
        "workspace": "ws.yml",
        "repository": "target",
        "repositories": [{"name": "a", "remote": "/remote/a.git"}],
    },
}
WORKSPACE = {
    "schema": "prompt_runner.workspace/v1",
    "id": "member",
    "repositories": {"target": {"remote": "/remote/t.git"}},
    "packet": {"repo": "target", "path": "packets/p"},
}
manifests = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), values, max_size=6),
    # one key of a valid manifest replaced: the errors deep inside
    st.tuples(st.sampled_from(KEYS), values).map(lambda kv: {**GOOD, kv[0]: kv[1]}),
    # one key of the template replaced
    st.tuples(st.sampled_from(INNER), values).map(
        lambda kv: {**GOOD, "template": {**GOOD["template"], kv[0]: kv[1]}}
    ),
)


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def _check(content: bytes) -> None:
    work = Path(tempfile.mkdtemp(prefix="fleet-fuzz-"))
    try:
        (work / "ws.yml").write_text(yaml.safe_dump(WORKSPACE))
        manifest = work / "fleet.yml"
        manifest.write_bytes(content)
        for home in ("XDG_STATE_HOME", "XDG_DATA_HOME"):
            os.environ[home] = str(work / home.lower())
        try:
            load_fleet(manifest)
        except UserError as exc:
            text = str(exc)
            assert text.startswith((str(manifest), str(work / "ws.yml"))), text
            assert "\n" not in text.strip() and "Traceback" not in text
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["fleet", "plan", str(manifest)])
            assert code == 2, err.getvalue()
            assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: ")
        assert _tree(work) == ["fleet.yml", "ws.yml"]  # loading (or refusing) writes nothing
    finally:
        shutil.rmtree(work, ignore_errors=True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests)
def test_random_manifests_load_or_fail_in_one_sentence(data: dict[str, object]) -> None:
    _check(yaml.safe_dump(data, allow_unicode=True).encode())


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_fail_in_one_sentence(data: bytes) -> None:
    _check(data)
