"""The project's own mock model servers answer as the real CLIs expect (no CLI needed)."""

from __future__ import annotations

import http.client
import json
from typing import Any

from tests.helpers.mock_anthropic import MockAnthropic
from tests.helpers.mock_openai import MockOpenAI


def post(port: int, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], str]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, json.dumps(body), {"content-type": "application/json"})
    response = conn.getresponse()
    data = response.read().decode()
    headers = {k.lower(): v for k, v in response.getheaders()}
    conn.close()
    return response.status, headers, data


def sse_events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


AGENT = {
    "model": "claude-x",
    "stream": True,
    "tools": [{"name": "Write"}],
    "system": [{"type": "text", "text": "Primary working directory: /w/repo"}],
    "messages": [{"role": "user", "content": "go"}],
}


def test_anthropic_streams_a_tool_use_with_cwd_then_text() -> None:
    steps = [{"tool": {"name": "Write", "input": {"file_path": "{cwd}/a.txt"}}}, {"text": "done"}]
    with MockAnthropic(steps) as mock:
        status, headers, text = post(mock.port, "/v1/messages?beta=true", AGENT)
        assert status == 200 and headers["content-type"] == "text/event-stream"
        events = sse_events(text)
        assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
        start = next(e for e in events if e["type"] == "content_block_start")
        assert start["content_block"]["name"] == "Write"
        partial = "".join(
            e["delta"]["partial_json"] for e in events if e["type"] == "content_block_delta"
        )
        assert json.loads(partial) == {"file_path": "/w/repo/a.txt"}
        status, _, text = post(mock.port, "/v1/messages", {**AGENT, "stream": False})
        assert status == 200 and json.loads(text)["content"] == [{"type": "text", "text": "done"}]
        side = post(mock.port, "/v1/messages", {"messages": [], "stream": False})
        assert side[0] == 200
        assert [r["kind"] for r in mock.records] == ["agent", "agent", "side"]
        assert mock.script.remaining == 0


def test_anthropic_error_with_retry_after_then_mid_stream_event() -> None:
    steps = [
        {"status": 429, "message": "slow down", "retry_after": "3"},
        {"fail": "event", "repeat": 2},
    ]
    with MockAnthropic(steps) as mock:
        status, headers, text = post(mock.port, "/v1/messages", AGENT)
        assert status == 429 and headers["retry-after"] == "3"
        assert json.loads(text)["error"] == {"type": "rate_limit_error", "message": "slow down"}
        events = sse_events(post(mock.port, "/v1/messages", AGENT)[2])
        assert events[0]["type"] == "message_start" and events[-1]["type"] == "error"
        assert post(mock.port, "/v1/messages", {**AGENT, "stream": False})[0] == 529
        assert post(mock.port, "/v1/messages", AGENT)[0] == 200  # fallback: text "ok"


def test_anthropic_drop_resets_the_connection_mid_stream() -> None:
    with MockAnthropic([{"fail": "drop"}]) as mock:
        conn = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
        conn.request("POST", "/v1/messages", json.dumps(AGENT))
        response = conn.getresponse()
        assert response.status == 200
        try:
            body = response.read()
        except (http.client.HTTPException, OSError):
            body = b""
        assert b"message_stop" not in body


CODEX = {
    "model": "gpt-5.5",
    "stream": True,
    "tools": [
        {"type": "function", "name": "exec_command"},
        {"type": "custom", "name": "apply_patch"},
    ],
    "input": [{"type": "message", "role": "user", "content": []}],
}


def test_openai_shell_patch_text_and_usage() -> None:
    steps = [{"shell": "echo hi > a"}, {"patch": "*** Begin Patch\n*** End Patch\n"}, {"text": "k"}]
    with MockOpenAI(steps) as mock:
        items = []
        for _ in steps:
            events = sse_events(post(mock.port, "/v1/responses", CODEX)[2])
            assert events[0]["type"] == "response.created"
            assert events[-1]["type"] == "response.completed"
            assert events[-1]["response"]["usage"]["output_tokens"] == 9
            items.append(events[-1]["response"]["output"][0])
        assert items[0]["name"] == "exec_command"
        assert json.loads(items[0]["arguments"]) == {"cmd": "echo hi > a"}
        assert items[1]["type"] == "custom_tool_call" and items[1]["name"] == "apply_patch"
        assert items[2]["content"][0]["text"] == "k"
        assert [e["sequence_number"] for e in events] == list(range(len(events)))


def test_openai_error_and_response_failed() -> None:
    steps = [
        {"status": 429, "code": "rate_limit_exceeded", "message": "wait", "retry_after": "2"},
        {"fail": "event", "message": "boom"},
    ]
    with MockOpenAI(steps) as mock:
        status, headers, text = post(mock.port, "/v1/responses", CODEX)
        assert status == 429 and headers["retry-after"] == "2"
        assert json.loads(text)["error"]["code"] == "rate_limit_exceeded"
        events = sse_events(post(mock.port, "/v1/responses", CODEX)[2])
        assert [e["type"] for e in events] == ["response.created", "response.failed"]
        assert events[1]["response"]["error"]["message"] == "boom"
        assert mock.records[0]["authenticated"] is False
