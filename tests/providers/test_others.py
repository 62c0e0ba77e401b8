"""Amp, Cursor and Antigravity adapters, on the documented samples (never run for real)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import ProviderMissingError, UserError
from prompt_runner.providers import amp, antigravity, cursor
from prompt_runner.providers._stream import UsageLedger
from prompt_runner.providers.base import SessionRequest, TimeBounds, Usage
from prompt_runner.providers.events import Event
from tests.providers.conftest import DATA, FakeCli, kinds


def feed(parser_factory: Any, path: Path, exit_code: int = 0, stderr: str = "") -> Any:
    events: list[Event] = []
    parser = parser_factory(lambda k, d: events.append(Event(k, d)))
    for line in path.read_text(encoding="utf-8").splitlines():
        parser.feed_line(line)
    return events, parser.outcome(exit_code, stderr), parser


def request(cwd: Path, provider: str, **kw: Any) -> SessionRequest:
    base: dict[str, Any] = {
        "prompt_id": "01",
        "prompt_text": "do it",
        "cwd": cwd,
        "provider": provider,
        "bounds": TimeBounds(idle_ms=20_000, run_deadline_ms=60_000),
    }
    base.update(kw)
    return SessionRequest(**base)


# ------------------------------------------------------------------ amp


def test_amp_news_sample() -> None:
    events, outcome, _ = feed(amp.AmpStreamParser, DATA / "amp" / "news_streaming_json.jsonl")
    assert kinds(events) == ["session_started", "assistant_text"]
    assert events[0].data["session_id"] == "T-2775dc92-90ed-4f85-8b73-8f9766029e83"
    assert events[1].data["text"] == "2 + 2 equals 4."
    assert outcome.ok and outcome.text == "2 + 2 equals 4."
    assert outcome.usage == Usage(input_tokens=13150, output_tokens=8, cached_tokens=12416)
    assert outcome.usage.cost_usd is None


def test_amp_sdk_error_sample() -> None:
    events, outcome, _ = feed(amp.AmpStreamParser, DATA / "amp" / "sdk_types_error.jsonl", 1)
    assert kinds(events) == ["session_started", "tool_use", "tool_result"]
    assert events[1].data["tool"] == "Bash"
    assert events[2].data["output"] == "<tool output>"
    assert not outcome.ok and outcome.failure is not None
    assert outcome.failure.failure_class == "unknown"
    assert outcome.failure.message == "<message>"


def test_amp_usage_is_deduped_by_message_id_and_file_tools_change_files() -> None:
    events: list[Event] = []
    parser = amp.AmpStreamParser(lambda k, d: events.append(Event(k, d)))
    msg = (
        '{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"t1",'
        '"name":"create_file","input":{"path":"/w/a.txt"}}],"usage":{"input_tokens":%d,'
        '"output_tokens":%d}},"session_id":"T-1"}'
    )
    parser.feed_line(msg % (5, 1))
    parser.feed_line(msg % (7, 2))  # same id: the last report wins
    parser.feed_line(
        '{"type":"user","message":{"role":"user","content":[{"type":"tool_result",'
        '"tool_use_id":"t1","content":"done","is_error":false}]},"session_id":"T-1"}'
    )
    parser.feed_line(
        '{"type":"result","subtype":"error_max_turns","is_error":true,"error":"turns"}'
    )
    outcome = parser.outcome(1, "")
    assert outcome.usage == Usage(input_tokens=7, output_tokens=2)
    assert {"path": "/w/a.txt", "change": "create"} in [e.data for e in events]
    assert outcome.failure is not None and outcome.failure.failure_class == "guardrail_blocked"


def test_amp_argv_and_resume(tmp_path: Path) -> None:
    provider = amp.AmpProvider()
    req = request(tmp_path, "amp", permission_mode="bypass", provider_options={"mode": "smart"})
    provider.validate_options(req)
    start = provider.launch(req, None, "hi")
    assert start.argv == (
        "amp",
        "--execute",
        "--stream-json",
        "--dangerously-allow-all",
        "--mode",
        "smart",
    )
    assert start.stdin_text == "hi\n"
    resumed = provider.launch(req, "T-abc", "more")
    assert resumed.argv[:4] == ("amp", "threads", "continue", "T-abc")


@pytest.mark.parametrize(
    "kw",
    [
        {"model": "x"},
        {"permission_mode": "plan"},
        {"permission_mode": "auto"},
        {"reasoning_effort": "high"},
        {"max_turns": 1},
        {"extra_dirs": (Path("/x"),)},
    ],
)
def test_amp_rejects_unsupported_options(tmp_path: Path, kw: dict[str, Any]) -> None:
    with pytest.raises(UserError):
        amp.AmpProvider().validate_options(request(tmp_path, "amp", **kw))


# ------------------------------------------------------------------ cursor


def test_cursor_partial_output_sample_dedupes_text() -> None:
    events, outcome, _ = feed(cursor.CursorStreamParser, DATA / "cursor" / "tool_call_sample.jsonl")
    assert kinds(events) == ["session_started", "thinking", "tool_use", "assistant_text"]
    assert events[0].data["model"] == "Composer 2.5"
    assert events[1].data["text"] == "The user wants me to"
    assert events[2].data["tool"] == "shell"
    assert events[2].data["input"]["command"] == "echo TOOL_OK"
    assert events[3].data["text"] == "TOOL_OK_DONE"
    assert outcome.ok and outcome.text == "TOOL_OK_DONE"
    assert outcome.usage == Usage(input_tokens=9821, output_tokens=126, cached_tokens=11737)


def test_cursor_edit_and_rejected_shell_sample() -> None:
    events, outcome, parser = feed(
        cursor.CursorStreamParser,
        DATA / "cursor" / "agentsserver_edit_rejected.jsonl",
        1,
        "Error: something broke",
    )
    changes = [e.data for e in events if e.kind == "file_change"]
    assert changes == [{"path": "/private/tmp/cursor-research/hello.py", "change": "modify"}]
    results = [e.data for e in events if e.kind == "tool_result"]
    assert [r["is_error"] for r in results] == [False, True]
    denial = next(e for e in events if e.kind == "error")
    assert denial.data["class"] == "approval_denied"
    assert parser.unknown_count == 0  # interaction_query is known and ignored
    assert not [e for e in events if e.kind == "raw"]
    assert outcome.failure is not None and not outcome.ok


@pytest.mark.parametrize(
    ("stderr", "cls", "retryable"),
    [
        ("Error: You've hit your usage limit\n  Get Cursor Pro", "provider_rate_limit", False),
        ("⚠ Workspace Trust Required ... Pass --trust", "approval_denied", False),
        ("Authentication required. please run 'agent login'", "provider_auth_claim", True),
        ("T: [resource_exhausted] Error", "provider_rate_limit", True),
    ],
)
def test_cursor_stderr_failures(stderr: str, cls: str, retryable: bool) -> None:
    outcome = cursor.CursorStreamParser(lambda k, d: None).outcome(1, stderr)
    assert outcome.failure is not None
    assert (outcome.failure.failure_class, outcome.failure.retryable) == (cls, retryable)


def test_cursor_argv(tmp_path: Path) -> None:
    provider = cursor.CursorProvider()
    req = request(tmp_path, "cursor", model="gpt-5", permission_mode="plan")
    provider.validate_options(req)
    argv = provider.launch(req, "chat-1", "- list item first").argv
    assert argv[:4] == ("agent", "-p", "--output-format", "stream-json")
    assert argv[argv.index("--model") + 1] == "gpt-5"
    assert argv[argv.index("--mode") + 1] == "plan"
    assert argv[argv.index("--resume") + 1] == "chat-1"
    assert "--trust" in argv and "--continue" not in argv
    assert argv[-1] == " - list item first"
    bypass = provider.launch(request(tmp_path, "cursor", permission_mode="bypass"), None, "x")
    assert "--force" in bypass.argv and "--trust" not in bypass.argv
    with pytest.raises(UserError):
        provider.validate_options(request(tmp_path, "cursor", permission_mode="auto"))


def test_cursor_missing_binary_names_agent(tmp_path: Path) -> None:
    os.environ["PATH"] = str(tmp_path)
    with pytest.raises(ProviderMissingError, match="`agent`"):
        cursor.make_provider().check_available()


# ------------------------------------------------------------------ antigravity


def agy_parser(ledger: UsageLedger | None = None) -> Any:
    store = ledger or UsageLedger()
    return lambda emit: antigravity.AntigravityStreamParser(emit, store)


def test_agy_captured_permission_error_stream() -> None:
    events, outcome, _ = feed(
        agy_parser(), DATA / "antigravity" / "agy_1.1.17_permission_error.jsonl", 0
    )
    assert kinds(events) == [
        "session_started",
        "tool_use",
        "tool_result",
        "tool_use",
        "tool_result",
        "error",
    ]
    assert events[0].data["session_id"] == "4df4b685-e326-4498-b423-4732961ac2e4"
    assert events[1].data["tool"] == "view_file"
    assert events[2].data["output"] == "55 lines, 2955 bytes"
    assert events[4].data["is_error"] is True
    assert not outcome.ok  # status ERROR fails closed even with exit 0
    assert outcome.failure is not None
    assert outcome.failure.failure_class == "approval_denied"
    assert outcome.failure.terminal
    assert outcome.usage == Usage(input_tokens=44909, output_tokens=1005, cached_tokens=0)


def test_agy_text_deltas_join_and_success() -> None:
    events, outcome, _ = feed(agy_parser(), DATA / "antigravity" / "agy_1.2_text_deltas.jsonl")
    assert [e.data["text"] for e in events if e.kind == "assistant_text"] == ["Gemini answer"]
    assert outcome.ok and outcome.text == "Gemini answer"


def test_agy_json_envelope_and_usage_delta_on_resume() -> None:
    ledger = UsageLedger()
    line = (
        '{"conversation_id":"c1","status":"SUCCESS","response":"OK\\n","num_turns":1,'
        '"usage":{"input_tokens":%d,"output_tokens":%d,"thinking_tokens":0}}'
    )
    first = agy_parser(ledger)(lambda k, d: None)
    first.feed_line(line % (100, 4))
    assert first.outcome(0, "").usage == Usage(input_tokens=100, output_tokens=4)
    second = agy_parser(ledger)(lambda k, d: None)
    second.feed_line(line % (250, 10))
    out = second.outcome(0, "")
    assert out.ok and out.usage == Usage(input_tokens=150, output_tokens=6)


def test_agy_quota_error_on_stderr() -> None:
    parser = agy_parser()(lambda k, d: None)
    parser.feed_line('{"event":"result","result":{"conversation_id":"c","status":"ERROR"}}')
    outcome = parser.outcome(3, 'AGY_ERROR: {"msg":"Your quota will reset after 2h3m4s."}')
    assert outcome.failure is not None
    assert outcome.failure.provider_code == "quota_exhausted"
    assert not outcome.failure.retryable
    assert outcome.failure.suggested_delay_ms == 7_384_000


def test_agy_flag_error_is_launch_failed() -> None:
    outcome = agy_parser()(lambda k, d: None).outcome(2, "flag needs an argument: -output-format")
    assert outcome.failure is not None and outcome.failure.failure_class == "launch_failed"


def test_agy_argv(tmp_path: Path) -> None:
    provider = antigravity.AntigravityProvider()
    req = request(
        tmp_path,
        "antigravity",
        model="gemini-3.7-flash-high",
        reasoning_effort="low",
        permission_mode="bypass",
        bounds=TimeBounds(run_deadline_ms=600_000),
    )
    provider.validate_options(req)
    launch = provider.launch(req, "conv-1", "-x starts with a dash")
    argv = launch.argv
    assert argv[:4] == ("agy", "--print=-x starts with a dash", "--output-format", "stream-json")
    assert argv[argv.index("--conversation") + 1] == "conv-1"
    assert argv[argv.index("--add-dir") + 1] == str(tmp_path)
    assert argv[argv.index("--print-timeout") + 1] == "660s"
    assert "--dangerously-skip-permissions" in argv and "--continue" not in argv
    with pytest.raises(UserError):
        provider.validate_options(request(tmp_path, "antigravity", permission_mode="plan"))


def test_agy_end_to_end_with_fake_cli(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install(
        "agy",
        [
            {
                "stdout": (DATA / "antigravity" / "agy_1.2_text_deltas.jsonl").read_text(),
                "exit_code": 0,
            }
        ],
    )
    events: list[Event] = []
    result = antigravity.make_provider().start(request(tmp_path, "antigravity"), events.append)
    final = result.wait(30)
    assert final is not None and final.ok and final.text == "Gemini answer"
    assert fake_cli.records()[0]["argv"][0] == "--print=do it"


@pytest.mark.parametrize("name", ["claude", "codex", "gemini", "amp", "cursor", "antigravity"])
def test_every_adapter_is_registered_and_implements_the_protocol(name: str) -> None:
    from prompt_runner.providers.base import Provider
    from prompt_runner.providers.registry import get_provider

    provider = get_provider(name)
    assert isinstance(provider, Provider)
    assert provider.name == name
