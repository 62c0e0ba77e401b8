"""Gemini CLI adapter: parser on real 0.61.0 transcripts, argv, timeouts on CLI retries."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import ProviderMissingError, UserError
from prompt_runner.providers import gemini
from prompt_runner.providers.base import SessionRequest, TimeBounds, Usage
from prompt_runner.providers.events import Event
from tests.providers.conftest import FakeCli, case_dir, kinds, replay


def parse(case: str) -> tuple[list[Event], Any]:
    return replay(lambda emit: gemini.GeminiStreamParser(emit), "gemini", case)


def request(cwd: Path, **kw: Any) -> SessionRequest:
    base: dict[str, Any] = {
        "prompt_id": "01",
        "prompt_text": "create hello.txt",
        "cwd": cwd,
        "provider": "gemini",
        "bounds": TimeBounds(idle_ms=20_000, run_deadline_ms=60_000),
    }
    base.update(kw)
    return SessionRequest(**base)


def test_write_stream_maps_to_canonical_events() -> None:
    events, outcome = parse("write")
    assert kinds(events) == [
        "session_started",
        "tool_use",
        "tool_result",
        "file_change",
        "assistant_text",
    ]
    assert events[0].data["session_id"] == "c19a159f-aae2-468f-9005-5b6e23ac9886"
    assert events[1].data["tool"] == "write_file"
    assert events[2].data["tool_id"] == events[1].data["tool_id"]
    assert events[2].data["is_error"] is False
    assert events[3].data["change"] == "create"
    assert events[3].data["path"].endswith("/hello.txt")
    assert outcome.ok and outcome.text == "ok"
    assert outcome.usage == Usage(input_tokens=300, output_tokens=15, cached_tokens=0)


def test_deltas_are_joined_into_one_text_event() -> None:
    events: list[Event] = []
    parser = gemini.GeminiStreamParser(lambda k, d: events.append(Event(k, d)))
    for line in (
        '{"type":"init","session_id":"s","model":"auto"}',
        '{"type":"message","role":"assistant","content":"Hel","delta":true}',
        '{"type":"message","role":"assistant","content":"lo","delta":true}',
        '{"type":"result","status":"success","stats":{}}',
    ):
        parser.feed_line(line)
    assert [e.data["text"] for e in events if e.kind == "assistant_text"] == ["Hello"]
    assert parser.outcome(0, "").text == "Hello"


# case, class, retryable, resumable, provider_code, suggested_delay_ms
ERROR_CASES = [
    ("err_401", "provider_auth_claim", True, False, "401", None),
    ("probe401", "provider_auth_claim", True, False, "401", None),
    # 429 / 500: the CLI retried for over 150 s and was killed by `timeout` (exit 124);
    # the parser alone sees no result and classifies the stderr it printed so far.
    ("err_429", "provider_rate_limit", True, False, "429", None),
    ("err_500", "provider_runtime_claim", True, False, "500", None),
]


@pytest.mark.parametrize(("case", "cls", "retryable", "resumable", "code", "delay"), ERROR_CASES)
def test_captured_error_case_is_classified(
    case: str, cls: str, retryable: bool, resumable: bool, code: str, delay: int | None
) -> None:
    _, outcome = parse(case)
    failure = outcome.failure
    assert failure is not None
    assert (failure.failure_class, failure.retryable, failure.resumable) == (
        cls,
        retryable,
        resumable,
    )
    assert failure.provider_code == code
    assert failure.suggested_delay_ms == delay


def test_every_captured_gemini_error_case_is_covered() -> None:
    folder = case_dir("gemini", "write").parent
    failing = {p.name for p in folder.iterdir() if (p / "exit_code").read_text().strip() != "0"}
    assert failing == {c[0] for c in ERROR_CASES}


def test_exit_code_fallback_without_result() -> None:
    parser = gemini.GeminiStreamParser(lambda k, d: None)
    failure = parser.outcome(41, "").failure
    assert failure is not None and failure.failure_class == "provider_auth_claim"
    failure = gemini.GeminiStreamParser(lambda k, d: None).outcome(53, "").failure
    assert failure is not None and failure.failure_class == "guardrail_blocked"


def test_google_retry_delay_is_suggested() -> None:
    parser = gemini.GeminiStreamParser(lambda k, d: None)
    parser.feed_line(
        '{"type":"result","status":"error","error":{"type":"unknown","message":'
        '"[API Error: {\\"error\\":{\\"code\\":429,\\"status\\":\\"RESOURCE_EXHAUSTED\\",'
        '\\"details\\":[{\\"retryDelay\\":\\"35s\\"}]}}]"}}'
    )
    failure = parser.outcome(1, "").failure
    assert failure is not None
    assert failure.failure_class == "provider_rate_limit"
    assert failure.suggested_delay_ms == 35_000


def test_argv_and_modes(tmp_path: Path) -> None:
    req = request(
        tmp_path,
        model="gemini-3.1-pro-preview",
        permission_mode="bypass",
        allowed_tools=("write_file",),
        extra_dirs=(tmp_path / "a", tmp_path / "b"),
    )
    launch = gemini.GeminiProvider().launch(req, None, req.prompt_text)
    argv = list(launch.argv)
    assert argv[:3] == ["gemini", "-o", "stream-json"]
    assert argv[argv.index("-m") + 1] == "gemini-3.1-pro-preview"
    assert "--yolo" in argv
    assert argv[argv.index("--allowed-tools") + 1] == "write_file"
    assert argv[argv.index("--include-directories") + 1] == f"{tmp_path / 'a'},{tmp_path / 'b'}"
    assert argv[-2:] == ["-p", "create hello.txt"]
    assert launch.env_extra["GEMINI_CLI_TRUST_WORKSPACE"] == "true"
    auto = gemini.GeminiProvider().launch(request(tmp_path, permission_mode="auto"), None, "x")
    assert auto.argv[auto.argv.index("--approval-mode") + 1] == "auto_edit"


@pytest.mark.parametrize(
    "kw",
    [
        {"reasoning_effort": "high"},
        {"system_prompt": "s"},
        {"append_system_prompt": "s"},
        {"max_turns": 2},
        {"provider_options": {"model_router": True}},
    ],
)
def test_unsupported_options_fail_at_plan_time(tmp_path: Path, kw: dict[str, Any]) -> None:
    with pytest.raises(UserError):
        gemini.GeminiProvider().validate_options(request(tmp_path, **kw))


def test_resume_by_exact_id_end_to_end(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("gemini", [{"case": str(case_dir("gemini", "write"))}])
    sid = "c19a159f-aae2-468f-9005-5b6e23ac9886"
    result = gemini.make_provider().resume(request(tmp_path), sid, "again", lambda e: None).wait(30)
    assert result is not None and result.ok and result.session_id == sid
    argv = fake_cli.records()[0]["argv"]
    assert argv[argv.index("--resume") + 1] == sid
    assert "latest" not in argv


def test_cli_retrying_429_forever_ends_at_the_idle_bound(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("gemini", [{"case": str(case_dir("gemini", "err_429"))}])
    req = request(tmp_path, bounds=TimeBounds(idle_ms=500, run_deadline_ms=60_000))
    result = gemini.make_provider().start(req, lambda e: None).wait(30)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "transport_timeout"
    assert "429" in result.failure.raw["stderr_tail"]
    assert result.session_id == "878fb047-e445-4b6f-aa3e-27b26f663f48"


def test_missing_gemini_cli(tmp_path: Path) -> None:
    os.environ["PATH"] = str(tmp_path)
    with pytest.raises(ProviderMissingError, match="@google/gemini-cli"):
        gemini.make_provider().check_available()
