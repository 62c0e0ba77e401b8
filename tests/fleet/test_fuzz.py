"""Property-based, as the workspace manifest's (tests/workspace/test_fuzz.py): any malformed
fleet manifest ends in exit 2 with one sentence naming the file, and nothing is written."""

from __future__ import annotations

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompt_runner.fleet import load_fleet
from tests.helpers.manifest_fuzz import check_manifest, manifests, scalars, values

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
leaves = values(
    scalars(
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
    INNER,
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
fleet_manifests = manifests(
    KEYS,
    leaves,
    GOOD,
    # one key of the template replaced
    st.tuples(st.sampled_from(INNER), leaves).map(
        lambda kv: {**GOOD, "template": {**GOOD["template"], kv[0]: kv[1]}}
    ),
)


def _check(content: bytes) -> None:
    check_manifest(
        content,
        name="fleet.yml",
        load=load_fleet,
        command=["fleet", "plan"],
        prefix="fleet-fuzz-",
        beside={"ws.yml": WORKSPACE},
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleet_manifests)
def test_random_manifests_load_or_fail_in_one_sentence(data: dict[str, object]) -> None:
    _check(yaml.safe_dump(data, allow_unicode=True).encode())


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_random_bytes_fail_in_one_sentence(data: bytes) -> None:
    _check(data)
