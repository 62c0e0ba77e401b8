"""The JSON Schema of a fleet manifest (``prompt-runner schema fleet``)."""

from __future__ import annotations

from typing import Any

from .manifest import SCHEMA, FleetManifest

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://prompt-runner.invalid/schema/fleet.json"


def fleet_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``schema: prompt_runner.fleet/v1`` manifests,
    generated from the pydantic models."""
    schema = FleetManifest.model_json_schema(mode="validation", by_alias=True)
    return {
        "$schema": SCHEMA_DIALECT,
        "$id": SCHEMA_ID,
        **schema,
        "title": f"Prompt Runner fleet manifest ({SCHEMA})",
    }
