"""JSON Schema for the manifest and for prompt front matter (``prompt-runner schema``).

Generated at call time from the pydantic models (:class:`~.models.Manifest`,
:class:`~.models.PromptFrontMatter`), so the schema cannot drift from what the
loader accepts. The generated schema is then widened where the loader coerces
(``id: 1``, ``phase: 1``, ``timeout: infinity``, ``repos.NAME: "./dir"``) and
narrowed where the models keep a value raw: ``verify:`` (and
``agent_control.completion_verify``) list the verifier's registered clauses,
so an editor completes them and flags a misspelt one.

Use with the YAML language server, e.g. save ``prompt-runner schema manifest``
to a file and point ``yaml.schemas`` at it.
"""

from __future__ import annotations

from typing import Any, Literal

from ..errors import UserError
from ..verifier import contract_keys
from .models import Manifest, PromptFrontMatter

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_IDS = {
    "manifest": "https://prompt-runner.invalid/schema/manifest.json",
    "prompt": "https://prompt-runner.invalid/schema/prompt.json",
}

_TIMEOUT = {
    "anyOf": [
        {"type": "integer", "exclusiveMinimum": 0},
        {"enum": ["unbounded", "infinity", "infinite"]},
        {"type": "null"},
    ],
    "description": "session timeout in milliseconds, or unbounded",
}


def _contract_schema() -> dict[str, Any]:
    return {
        "type": ["object", "null"],
        "description": "completion contract: verifier clauses (SPEC 2.6)",
        "properties": {name: {} for name in contract_keys()},
        "additionalProperties": False,
    }


def _patch_options(props: dict[str, Any]) -> None:
    if "timeout" in props:
        props["timeout"] = _TIMEOUT


def json_schema(which: Literal["manifest", "prompt"] | str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the manifest or of prompt front matter.

    Args:
        which: ``"manifest"`` or ``"prompt"``.

    Raises:
        UserError: ``which`` is neither.
    """
    if which == "manifest":
        schema = Manifest.model_json_schema(mode="validation")
        props = schema["properties"]
        _patch_options(props)
        repo_ref = props["repos"]["additionalProperties"]
        props["repos"]["additionalProperties"] = {
            "anyOf": [repo_ref, {"type": "string", "description": "repo path"}]
        }
        props["phases"] = {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "phase number -> title",
        }
        defs = schema.get("$defs", {})
        if "AgentControlConfig" in defs:
            defs["AgentControlConfig"]["properties"]["completion_verify"] = _contract_schema()
        title = "Prompt Runner packet manifest (prompt_runner_packet.md front matter)"
    elif which == "prompt":
        schema = PromptFrontMatter.model_json_schema(mode="validation")
        props = schema["properties"]
        _patch_options(props)
        props["id"] = {"type": ["string", "integer"], "description": 'prompt id, e.g. "01"'}
        props["phase"] = {"type": ["string", "integer", "null"]}
        props["depends_on"] = {"type": "array", "items": {"type": ["string", "integer"]}}
        props["targets"] = {
            "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "string"}],
            "description": "repo names; the first is the session's working directory",
        }
        props["verify"] = _contract_schema()
        title = "Prompt Runner prompt front matter (prompts/NN_name.prompt.md)"
    else:
        raise UserError(f"unknown schema {which!r}", fix="use manifest, prompt, workspace or fleet")
    return {"$schema": SCHEMA_DIALECT, "$id": SCHEMA_IDS[which], **schema, "title": title}
