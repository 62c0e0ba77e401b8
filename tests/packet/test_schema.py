"""JSON Schema of the manifest and prompt front matter (``prompt-runner schema``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from prompt_runner.errors import UserError
from prompt_runner.packet.models import Manifest, PromptFrontMatter
from prompt_runner.packet.schema import json_schema
from prompt_runner.verifier import contract_keys
from tests.packet._packets import cli

jsonschema = pytest.importorskip("jsonschema")

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "reference-packets"


def validator(which: str) -> Any:
    schema = json_schema(which)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_schemas_cover_every_model_field() -> None:
    assert set(json_schema("manifest")["properties"]) == set(Manifest.model_fields)
    assert set(json_schema("prompt")["properties"]) == set(PromptFrontMatter.model_fields)


def test_verify_lists_exactly_the_verifier_clauses() -> None:
    verify = json_schema("prompt")["properties"]["verify"]
    assert list(verify["properties"]) == list(contract_keys())
    assert verify["additionalProperties"] is False


def test_prompt_schema_accepts_real_front_matter_and_rejects_typos() -> None:
    v = validator("prompt")
    good = {
        "id": 1,
        "phase": 2,
        "name": "x",
        "targets": "app",
        "timeout": "infinity",
        "verify": {"files_exist": ["a"], "commands": [{"exec": "true"}]},
        "simulate": {"attempts": [{"messages": ["hi"], "delay_ms": 5}]},
    }
    assert list(v.iter_errors(good)) == []
    assert list(v.iter_errors({**good, "verfy": {}}))  # unknown top-level key
    assert list(v.iter_errors({**good, "verify": {"file_exists": ["a"]}}))  # unknown clause
    assert list(v.iter_errors({**good, "permission_mode": "sometimes"}))


def test_manifest_schema_accepts_string_repos_and_rejects_unknown_keys() -> None:
    v = validator("manifest")
    good = {
        "name": "x",
        "repos": {"app": "./app", "docs": {"path": "d", "default": True}},
        "phases": {"1": "Boot"},
        "timeout": 60000,
        "agent_control": {"enabled": True, "completion_verify": {"files_exist": ["DONE"]}},
    }
    assert list(v.iter_errors(good)) == []
    assert list(v.iter_errors({**good, "log_mod": "compact"}))
    bad_control = {"enabled": True, "completion_verify": {"file_exist": ["DONE"]}}
    assert list(v.iter_errors({**good, "agent_control": bad_control}))


@pytest.mark.compat
def test_reference_packets_validate_against_the_schemas() -> None:
    if not SHARED.is_dir():
        pytest.skip(f"skipped: {SHARED} is not present (../shared absent)")
    manifest_v, prompt_v = validator("manifest"), validator("prompt")
    checked = 0
    for file in sorted(SHARED.glob("*/prompt_runner_packet.md")) + sorted(
        SHARED.glob("*/prompts/*.prompt.md")
    ):
        if file.name.endswith(".checklist.md"):
            continue
        front = yaml.safe_load(file.read_text().split("---\n")[1])
        v = manifest_v if file.name == "prompt_runner_packet.md" else prompt_v
        assert [e.message for e in v.iter_errors(front)] == [], file
        checked += 1
    assert checked >= 3


def test_cli_prints_the_schema_and_rejects_unknown_names() -> None:
    res = cli("schema", "manifest")
    assert res.returncode == 0
    doc = json.loads(res.stdout)
    assert doc["$schema"].endswith("2020-12/schema") and "repos" in doc["properties"]
    assert cli("schema", "checklist").returncode == 2
    with pytest.raises(UserError):
        json_schema("checklist")
