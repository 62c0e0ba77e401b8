"""The JSON Schema of a workspace manifest (``prompt-runner schema workspace``)."""

from __future__ import annotations

from typing import Any

from .capabilities import CAPABILITIES
from .manifest import SCHEMA, WorkspaceManifest

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://prompt-runner.invalid/schema/workspace.json"


def workspace_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``schema: prompt_runner.workspace/v1`` manifests,
    generated from the pydantic models (the capability ids listed as an enum)."""
    schema = WorkspaceManifest.model_json_schema(mode="validation", by_alias=True)
    caps = schema["$defs"]["Requires"]["properties"]["capabilities"]
    caps["items"] = {"enum": list(CAPABILITIES), "type": "string"}
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        **schema,
        "title": f"Prompt Runner workspace manifest ({SCHEMA})",
    }
