"""A scripted Anthropic Messages API for the real ``claude`` CLI (stdlib, 127.0.0.1).

Point Claude Code at it with ``ANTHROPIC_BASE_URL=<server.url>``. It answers
``POST /v1/messages`` as a server-sent-event stream when the request says
``"stream": true`` and as one JSON message otherwise (Claude Code falls back
to a non-streaming request after repeated stream failures), ``POST
/v1/messages/count_tokens`` with a token count, ``HEAD``/``GET`` with 200 and
anything else with a 404 error body.

Only agent-loop requests -- those offering ``tools`` -- use up a script step;
a tool-less side request (titles, probes) gets a short canned reply.

Step keys (besides those of :mod:`tests.helpers.mock_common`):

* ``text``: the assistant's text block.
* ``tool``: ``{"name": "Write", "input": {...}}`` -- a ``tool_use`` block
  (after the text, if both). ``{cwd}`` in any input string becomes the
  working directory Claude Code names in its system prompt.
* ``status`` + ``error_type`` + ``message`` (+ ``retry_after``): an HTTP error
  with Anthropic's error body ``{"type": "error", "error": {...}}``.
* ``fail: "event"``: after ``message_start`` (and the first text delta), an
  SSE ``error`` event (``error_type`` default ``overloaded_error``);
  ``fail: "drop"``: the connection is reset at that point instead.
  A non-streaming request meeting a ``fail`` step gets HTTP 529 (``event``)
  or a reset connection (``drop``). Claude Code follows a broken stream with
  one non-streaming request, so ``"repeat": 2`` fails both.

Run as a process: ``python -m tests.helpers.mock_anthropic --script steps.json
--log requests.jsonl --port-file port``.
"""

from __future__ import annotations

import json
import re
import sys
import uuid
from typing import Any

from tests.helpers.mock_common import MockHandler, MockServer, Step, serve_main

_CWD = re.compile(r"(?:Primary working directory|Working directory|cwd):\s*(\S+)")
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _texts(body: dict[str, Any]) -> list[str]:
    found: list[str] = []
    system = body.get("system")
    blocks = [system] if isinstance(system, str) else list(system or [])
    for message in body.get("messages") or []:
        content = message.get("content")
        blocks += [content] if isinstance(content, str) else list(content or [])
    for block in blocks:
        if isinstance(block, str):
            found.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            found.append(block["text"])
    return found


def working_directory(body: dict[str, Any]) -> str:
    """The cwd Claude Code states in its system prompt, else ``/tmp``."""
    for text in _texts(body):
        match = _CWD.search(text)
        if match:
            return match.group(1)
    return "/tmp"


def _fill(value: Any, cwd: str) -> Any:
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, list):
        return [_fill(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, cwd) for k, v in value.items()}
    return value


def content_blocks(step: Step, cwd: str) -> list[dict[str, Any]]:
    """The assistant content of a reply step."""
    blocks: list[dict[str, Any]] = []
    if "text" in step:
        blocks.append({"type": "text", "text": str(step["text"])})
    tool = step.get("tool")
    if tool:
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_mock_{uuid.uuid4().hex[:20]}",
                "name": tool["name"],
                "input": _fill(tool.get("input") or {}, cwd),
            }
        )
    return blocks or [{"type": "text", "text": "ok"}]


def _usage(output_tokens: int) -> dict[str, int]:
    return {
        "input_tokens": 12,
        "output_tokens": output_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }


class AnthropicHandler(MockHandler):
    """Request handler of :class:`MockAnthropic`."""

    def do_HEAD(self) -> None:
        self.mock.record(self.entry({}, {}))
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.mock.record(self.entry({}, {}))
        self.send_json(200, {})

    def do_POST(self) -> None:
        body = self.read_json()
        path = self.path.split("?", 1)[0]
        messages = body.get("messages") or []
        summary = {
            "model": body.get("model"),
            "stream": bool(body.get("stream")),
            "tools": [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)],
            "messages": len(messages),
            "last_message": json.dumps(messages[-1])[:800] if messages else None,
        }
        entry = self.entry(body, summary)
        if path.endswith("/v1/messages/count_tokens"):
            entry["kind"] = "count_tokens"
            self.mock.record(entry)
            self.send_json(200, {"input_tokens": 42})
            return
        if not path.endswith("/v1/messages"):
            entry["kind"] = "other"
            self.mock.record(entry)
            self._error(404, "not_found_error", f"mock: no route {path}", {})
            return
        if body.get("tools"):
            step = self.mock.script.take()
            entry["kind"] = "agent"
        else:
            step = {"text": "Mock reply"}
            entry["kind"] = "side"
        entry["step"] = step
        self.mock.record(entry)
        if "status" in step:
            status = int(step["status"])
            error_type = str(step.get("error_type") or ERROR_TYPES.get(status, "api_error"))
            message = str(step.get("message") or "scripted error")
            self._error(status, error_type, message, self.error_headers(step))
            return
        if step.get("fail") == "drop" and not body.get("stream"):
            self.drop()
            return
        if step.get("fail") and not body.get("stream"):
            self._error(529, "overloaded_error", "Overloaded", {})
            return
        blocks = content_blocks(step, working_directory(body))
        stop = "tool_use" if blocks[-1]["type"] == "tool_use" else "end_turn"
        message_id = f"msg_mock_{uuid.uuid4().hex[:20]}"
        model = str(body.get("model") or "claude-mock")
        if not body.get("stream"):
            self.send_json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": _usage(6),
                },
                self.error_headers(step),
            )
            return
        self._stream(step, blocks, stop, message_id, model)

    def _error(self, status: int, error_type: str, message: str, headers: dict[str, str]) -> None:
        payload = {
            "type": "error",
            "error": {"type": error_type, "message": message},
            "request_id": f"req_mock_{uuid.uuid4().hex[:12]}",
        }
        self.send_json(status, payload, headers)

    def _stream(
        self, step: Step, blocks: list[dict[str, Any]], stop: str, message_id: str, model: str
    ) -> None:
        self.start_sse(self.error_headers(step))
        start = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": _usage(1),
        }
        self.sse("message_start", {"type": "message_start", "message": start})
        fail = step.get("fail")
        if fail:
            self.sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            delta = {"type": "text_delta", "text": "Working on it"}
            self.sse(
                "content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}
            )
            if fail == "drop":
                self.drop()
                return
            error_type = str(step.get("error_type") or "overloaded_error")
            error = {"type": error_type, "message": str(step.get("message") or "Overloaded")}
            self.sse("error", {"type": "error", "error": error})
            return
        self.sse("ping", {"type": "ping"})
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                first = {"type": "text", "text": ""}
                parts = [
                    {"type": "text_delta", "text": block["text"][i : i + 24]}
                    for i in range(0, len(block["text"]), 24)
                ]
            else:
                first = {**block, "input": {}}
                encoded = json.dumps(block["input"])
                parts = [
                    {"type": "input_json_delta", "partial_json": encoded[i : i + 48]}
                    for i in range(0, len(encoded), 48)
                ]
            self.sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": first},
            )
            for part in parts:
                self.sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": part},
                )
            self.sse("content_block_stop", {"type": "content_block_stop", "index": index})
        self.sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 6},
            },
        )
        self.sse("message_stop", {"type": "message_stop"})


class MockAnthropic(MockServer):
    """The scripted Messages API (see the module docstring for step keys)."""

    handler = AnthropicHandler

    def agent_requests(self) -> list[dict[str, Any]]:
        """The recorded requests that used up a script step, in order."""
        return [r for r in self.records if r.get("kind") == "agent"]


if __name__ == "__main__":
    serve_main(MockAnthropic, sys.argv[1:])
