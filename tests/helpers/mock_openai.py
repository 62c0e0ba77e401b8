"""A scripted OpenAI Responses API for the real ``codex`` CLI (stdlib, 127.0.0.1).

Configure Codex with a model provider whose ``base_url`` is ``<server.url>/v1``
and ``wire_api = "responses"`` (see :func:`codex_config`). Every ``POST
/v1/responses`` uses up one script step and is answered as a server-sent-event
stream: ``response.created``, the output items (``output_item.added`` /
deltas / ``output_item.done``), then ``response.completed`` with usage.
``GET .../models`` returns a one-model list; any other path is a 404.

Step keys (besides those of :mod:`tests.helpers.mock_common`):

* ``text``: an assistant ``message`` item.
* ``reasoning``: a ``reasoning`` item (summary text) placed first.
* ``shell``: a command line, sent as a call of whichever shell tool the
  request offers (``exec_command`` ``{"cmd"}``, ``shell_command``
  ``{"command"}`` or ``shell`` ``{"command": ["bash", "-lc", ...]}``).
* ``patch``: an ``apply_patch`` envelope (``*** Begin Patch`` ...), sent as a
  custom (freeform) tool call when offered that way, else as a function call.
* ``status`` + ``code`` + ``message`` (+ ``retry_after``): an HTTP error with
  OpenAI's error body ``{"error": {...}}``; ``error_fields`` adds keys to that
  object (e.g. ``usage_limit_reached``'s ``resets_at`` / ``resets_in_seconds``).
* ``fail: "event"``: after ``response.created`` a ``response.failed`` event
  (``message``); ``fail: "drop"``: the connection is reset there instead.

Run as a process: ``python -m tests.helpers.mock_openai --script steps.json
--log requests.jsonl --port-file port``.
"""

from __future__ import annotations

import json
import sys
import time
import uuid
from typing import Any

from tests.helpers.mock_common import MockHandler, MockServer, Step, serve_main


def _id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def offered_tools(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tools a request offers, by name."""
    tools: dict[str, dict[str, Any]] = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name") or tool.get("type")
            tools[str(name)] = tool
    return tools


def output_items(step: Step, body: dict[str, Any]) -> list[dict[str, Any]]:
    """The response output items of a reply step."""
    tools = offered_tools(body)
    items: list[dict[str, Any]] = []
    if step.get("reasoning"):
        items.append(
            {
                "type": "reasoning",
                "id": _id("rs"),
                "summary": [{"type": "summary_text", "text": str(step["reasoning"])}],
            }
        )
    call_id = _id("call")
    if "shell" in step:
        command = str(step["shell"])
        if "exec_command" in tools:
            name, args = "exec_command", {"cmd": command}
        elif "shell_command" in tools:
            name, args = "shell_command", {"command": command}
        else:
            name, args = "shell", {"command": ["bash", "-lc", command]}
        items.append(
            {
                "type": "function_call",
                "id": _id("fc"),
                "call_id": call_id,
                "name": name,
                "arguments": json.dumps(args),
                "status": "completed",
            }
        )
    elif "patch" in step:
        patch = str(step["patch"])
        if tools.get("apply_patch", {}).get("type") == "custom":
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": _id("ctc"),
                    "call_id": call_id,
                    "name": "apply_patch",
                    "input": patch,
                    "status": "completed",
                }
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "id": _id("fc"),
                    "call_id": call_id,
                    "name": "apply_patch",
                    "arguments": json.dumps({"input": patch}),
                    "status": "completed",
                }
            )
    if "text" in step or not items:
        text = str(step.get("text", "ok"))
        items.append(
            {
                "type": "message",
                "id": _id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    return items


class ResponsesHandler(MockHandler):
    """Request handler of :class:`MockOpenAI`."""

    def do_GET(self) -> None:
        self.mock.record(self.entry({}, {}))
        if self.path.split("?", 1)[0].endswith("/models"):
            self.send_json(200, {"object": "list", "data": [{"id": "mock", "object": "model"}]})
        else:
            self.send_json(404, {"error": {"message": "mock: not found", "type": "not_found"}})

    def do_POST(self) -> None:
        body = self.read_json()
        path = self.path.split("?", 1)[0]
        inputs = body.get("input") if isinstance(body.get("input"), list) else []
        summary = {
            "model": body.get("model"),
            "stream": body.get("stream"),
            "tools": sorted(offered_tools(body)),
            "inputs": len(inputs),
            "input_types": [i.get("type") for i in inputs if isinstance(i, dict)],
            "last_input": json.dumps(inputs[-1])[:800] if inputs else None,
        }
        entry = self.entry(body, summary)
        if not path.endswith("/responses"):
            entry["kind"] = "other"
            self.mock.record(entry)
            self.send_json(404, {"error": {"message": f"mock: no route {path}", "type": "nf"}})
            return
        step = self.mock.script.take()
        entry["kind"] = "agent"
        entry["step"] = step
        self.mock.record(entry)
        if "status" in step:
            error = {
                "message": str(step.get("message") or "scripted error"),
                "type": str(step.get("error_type") or step.get("code") or "server_error"),
                "param": None,
                "code": step.get("code"),
                **(step.get("error_fields") or {}),
            }
            self.send_json(int(step["status"]), {"error": error}, self.error_headers(step))
            return
        self._stream(step, body)

    def _stream(self, step: Step, body: dict[str, Any]) -> None:
        self.start_sse(self.error_headers(step))
        number = 0

        def emit(payload: dict[str, Any]) -> None:
            nonlocal number
            payload["sequence_number"] = number
            number += 1
            self.sse(str(payload["type"]), payload)

        response = {
            "id": _id("resp"),
            "object": "response",
            "created_at": int(time.time()),
            "status": "in_progress",
            "model": body.get("model") or "mock",
            "output": [],
        }
        emit({"type": "response.created", "response": response})
        fail = step.get("fail")
        if fail == "drop":
            self.drop()
            return
        if fail:
            error = {"code": "server_error", "message": str(step.get("message") or "mock failure")}
            emit(
                {
                    "type": "response.failed",
                    "response": {**response, "status": "failed", "error": error},
                }
            )
            return
        items = output_items(step, body)
        for index, item in enumerate(items):
            if item["type"] == "message":
                text = item["content"][0]["text"]
                emit(
                    {
                        "type": "response.output_item.added",
                        "output_index": index,
                        "item": {**item, "status": "in_progress", "content": []},
                    }
                )
                emit(
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": index,
                        "content_index": 0,
                        "delta": text,
                    }
                )
            else:
                emit({"type": "response.output_item.added", "output_index": index, "item": item})
            emit({"type": "response.output_item.done", "output_index": index, "item": item})
        usage = {
            "input_tokens": 120,
            "input_tokens_details": {"cached_tokens": 20},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 2},
            "total_tokens": 129,
        }
        done = {**response, "status": "completed", "output": items, "usage": usage}
        emit({"type": "response.completed", "response": done})


class MockOpenAI(MockServer):
    """The scripted Responses API (see the module docstring for step keys)."""

    handler = ResponsesHandler

    def agent_requests(self) -> list[dict[str, Any]]:
        """The recorded ``/responses`` requests, in order."""
        return [r for r in self.records if r.get("kind") == "agent"]


def codex_config(base_url: str, model: str = "gpt-5.5") -> str:
    """A ``$CODEX_HOME/config.toml`` that makes Codex talk only to ``base_url``.

    Retries inside the CLI are off (the runner's recovery decides), the update
    check, plugin sync, analytics and telemetry export are disabled.
    """
    return f"""model = "{model}"
model_provider = "mock"
check_for_update_on_startup = false

[model_providers.mock]
name = "Prompt Runner test mock"
base_url = "{base_url}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
stream_idle_timeout_ms = 20000

[features]
plugins = false
remote_plugin = false
apps = false

[analytics]
enabled = false

[otel]
exporter = "none"
"""


if __name__ == "__main__":
    serve_main(MockOpenAI, sys.argv[1:])
