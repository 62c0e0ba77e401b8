"""Claude Code adapter: parser on real 2.1.332 transcripts, argv, resume, end to end."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import ProviderMissingError, UserError
from prompt_runner.providers import claude
from prompt_runner.providers.base import SessionRequest, TimeBounds
from prompt_runner.providers.events import Event
from prompt_runner.providers.registry import get_provider
from tests.providers.conftest import FakeCli, case_dir, kinds, replay

SECRET = "sk-ant-secret-value-123456"


def parse(case: str) -> tuple[list[Event], Any]:
    return replay(lambda emit: claude.ClaudeStreamParser(emit), "claude", case)


def request(cwd: Path, **kw: Any) -> SessionRequest:
    base: dict[str, Any] = {
        "prompt_id": "01",
        "prompt_text": "create hello.txt",
        "cwd": cwd,
        "provider": "claude",
        "bounds": TimeBounds(idle_ms=20_000, run_deadline_ms=60_000),
    }
    base.update(kw)
    return SessionRequest(**base)


# ------------------------------------------------------------------ parser: success streams


def test_success_write_stream_maps_to_canonical_events() -> None:
    events, outcome = parse("success_write")
    assert kinds(events) == [
        "session_started",
        "tool_use",
        "tool_result",
        "file_change",
        "assistant_text",
    ]
    started = events[0].data
    assert started["session_id"] == "db8b0820-99e6-4933-bc10-1238215f57c3"
    assert started["model"] == "claude-opus-5-5"
    assert started["cli_version"] == "2.1.332"
    tool = events[1].data
    assert tool["tool"] == "Write"
    assert tool["input"]["file_path"].endswith("/hello.txt")
    assert events[2].data["tool_id"] == tool["tool_id"]
    assert events[2].data["is_error"] is False
    assert events[3].data["change"] == "create"
    assert events[4].data == {"text": "ok"}
    assert outcome.ok and outcome.failure is None
    assert outcome.text == "ok"
    assert outcome.usage.input_tokens == 20
    assert outcome.usage.output_tokens == 10
    assert outcome.usage.cost_usd == pytest.approx(0.00028)


def test_partial_messages_do_not_duplicate_text() -> None:
    events, outcome = parse("partial_messages")
    assert [e.data["text"] for e in events if e.kind == "assistant_text"] == ["ok"]
    assert outcome.ok


def test_bash_tool_result_carries_output() -> None:
    events, outcome = parse("success_bash")
    result = next(e for e in events if e.kind == "tool_result")
    assert result.data["output"] == "hi"
    assert result.data["tool"] == "Bash"
    assert outcome.ok


def test_permission_denial_is_a_nonfatal_error_event() -> None:
    events, outcome = parse("root_default_bash")
    denial = next(e for e in events if e.kind == "error")
    assert denial.data["class"] == "approval_denied"
    assert denial.data["fatal"] is False
    assert any(e.kind == "tool_result" and e.data["is_error"] for e in events)
    assert outcome.ok  # the CLI still reported success; the verifier judges the work


def test_retry_then_success_is_ok() -> None:
    _, outcome = parse("err_529_then_ok")
    assert outcome.ok


def test_resumed_stream_keeps_the_session_id() -> None:
    events, outcome = parse("resume_2")
    assert events[0].data["session_id"] == "39065722-90da-48e8-9717-0d2063d33f23"
    assert outcome.ok


def test_unknown_and_garbage_lines_never_crash() -> None:
    events: list[Event] = []
    parser = claude.ClaudeStreamParser(lambda k, d: events.append(Event(k, d)))
    parser.feed_line('{"type":"brand_new_event","x":1}')
    parser.feed_line("not json at all")
    parser.feed_line("[1,2]")
    parser.feed_line('{"type":"assistant","message":{"content":"weird"}}')
    raws = [e.data for e in events if e.kind == "raw"]
    assert raws == [
        {"type": "brand_new_event", "line": '{"type":"brand_new_event","x":1}'},
        {"type": "non_json", "line": "not json at all"},
        {"type": "non_json", "line": "[1,2]"},
    ]
    assert parser.unknown_count == 1
    assert len(parser.noise) == 2
    outcome = parser.outcome(0, "")
    assert outcome.failure is not None
    assert outcome.failure.failure_class == "protocol_error"


def test_raw_events_are_capped_and_nothing_unknown_is_kept() -> None:
    from prompt_runner.providers._stream import NOISE_KEEP, RAW_LINE_CAP

    events: list[Event] = []
    parser = claude.ClaudeStreamParser(lambda k, d: events.append(Event(k, d)))
    huge = json.dumps({"type": "future_event", "blob": "x" * 50_000})
    for _ in range(1000):
        parser.feed_line(huge)
        parser.feed_line("plain text " + "y" * 5000)
    raws = [e.data for e in events if e.kind == "raw"]
    assert len(raws) == 2000 and parser.unknown_count == 1000
    assert {r["type"] for r in raws} == {"future_event", "non_json"}
    assert all(len(r["line"]) <= RAW_LINE_CAP + 40 for r in raws)
    assert raws[0]["line"].startswith('{"type": "future_event"')
    assert raws[0]["line"].endswith("more chars]")
    assert len(parser.noise) == NOISE_KEEP
    assert not hasattr(parser, "unknown")


# ------------------------------------------------------------------ parser: every error case

# case, class, retryable, resumable, terminal, provider_code, suggested_delay_ms
ERROR_CASES = [
    ("err_400", "provider_config_claim", True, False, False, "400", None),
    ("err_401", "provider_auth_claim", True, False, False, "401", None),
    ("err_403", "provider_auth_claim", True, False, False, "403", None),
    ("err_404", "provider_config_claim", True, False, False, "model_not_found", None),
    ("err_429", "provider_rate_limit", True, False, False, "429", None),
    ("user_err_429", "provider_rate_limit", True, False, False, "429", None),
    ("err_500", "provider_runtime_claim", True, False, False, "500", None),
    ("err_529", "provider_capacity", True, False, False, "529", None),
    ("err_529_retries0", "provider_capacity", True, False, False, "529", None),
    ("user_err_529", "provider_capacity", True, False, False, "529", None),
    ("user_default_retries_529", "provider_capacity", True, False, False, "529", None),
    ("err_stream_error", "provider_capacity", True, False, False, "529", None),
    ("err_conn_refused", "transport_disconnect", False, True, False, "connection_failed", None),
    ("budget_exceeded", "guardrail_blocked", False, False, True, "error_max_budget_usd", None),
    ("max_turns_1", "guardrail_blocked", False, False, False, "error_max_turns", None),
    ("resume_bad", "unknown", True, False, False, "session_not_found", None),
]


@pytest.mark.parametrize(
    ("case", "cls", "retryable", "resumable", "terminal", "code", "delay"), ERROR_CASES
)
def test_captured_error_case_is_classified(
    case: str,
    cls: str,
    retryable: bool,
    resumable: bool,
    terminal: bool,
    code: str,
    delay: int | None,
) -> None:
    _, outcome = parse(case)
    assert not outcome.ok
    failure = outcome.failure
    assert failure is not None
    assert failure.failure_class == cls
    assert failure.retryable is retryable
    assert failure.resumable is resumable
    assert failure.terminal is terminal
    assert failure.provider_code == code
    assert failure.suggested_delay_ms == delay
    assert failure.message


def test_every_captured_claude_error_case_is_covered() -> None:
    folder = case_dir("claude", "err_429").parent
    failing = {p.name for p in folder.iterdir() if (p / "exit_code").read_text().strip() != "0"}
    assert failing == {c[0] for c in ERROR_CASES}


def test_max_turns_is_repairable_and_budget_is_not() -> None:
    _, turns = parse("max_turns_1")
    _, budget = parse("budget_exceeded")
    assert turns.failure is not None and turns.failure.repairable
    assert budget.failure is not None and not budget.failure.repairable
    assert "maximum budget" in budget.failure.message


def test_api_retry_backoff_is_kept_raw_not_suggested() -> None:
    _, outcome = parse("err_429")
    assert outcome.failure is not None
    assert outcome.failure.raw["last_api_retry"]["error_status"] == 429
    assert outcome.failure.suggested_delay_ms is None


def test_root_refusal_without_json_is_launch_failed() -> None:
    parser = claude.ClaudeStreamParser(lambda k, d: None)
    outcome = parser.outcome(
        1,
        "--dangerously-skip-permissions cannot be used with root/sudo privileges "
        "for security reasons",
    )
    assert outcome.failure is not None
    assert outcome.failure.failure_class == "launch_failed"
    assert outcome.failure.local_deterministic


# ------------------------------------------------------------------ argv and options


def test_argv_maps_every_plan_value(tmp_path: Path) -> None:
    req = request(
        tmp_path,
        model="claude-opus-5-5",
        reasoning_effort="high",
        permission_mode="plan",
        allowed_tools=("Bash(git *)", "Edit"),
        system_prompt="sys",
        append_system_prompt="more",
        max_turns=7,
        extra_dirs=(tmp_path / "other",),
        provider_options={"max_cost_usd": 0.5},
    )
    launch = claude.ClaudeProvider().launch(req, None, req.prompt_text)
    argv = list(launch.argv)
    assert argv[:5] == ["claude", "-p", "--output-format", "stream-json", "--verbose"]
    pairs = {
        "--model": "claude-opus-5-5",
        "--effort": "high",
        "--permission-mode": "plan",
        "--system-prompt": "sys",
        "--append-system-prompt": "more",
        "--max-turns": "7",
        "--max-budget-usd": "0.5",
        "--add-dir": str(tmp_path / "other"),
    }
    for flag, value in pairs.items():
        assert argv[argv.index(flag) + 1] == value
    assert argv[-3:] == ["--allowedTools", "Bash(git *)", "Edit"]
    assert "--resume" not in argv and "--continue" not in argv and "-c" not in argv
    assert launch.stdin_text == "create hello.txt"
    assert launch.env_extra["CLAUDE_CODE_MAX_RETRIES"] == "2"


@pytest.mark.parametrize(
    ("mode", "flags"),
    [
        ("default", []),
        ("auto", ["--permission-mode", "acceptEdits"]),
        ("bypass", ["--dangerously-skip-permissions"]),
        ("plan", ["--permission-mode", "plan"]),
    ],
)
def test_permission_modes(tmp_path: Path, mode: str, flags: list[str]) -> None:
    launch = claude.ClaudeProvider().launch(request(tmp_path, permission_mode=mode), None, "x")
    mode_flags = [
        a for a in launch.argv if a.startswith("--permission") or a.startswith("--dangerously")
    ]
    assert mode_flags == [f for f in flags if f.startswith("--")]
    if flags[1:]:
        assert launch.argv[launch.argv.index(flags[0]) + 1] == flags[1]
    sandbox = launch.env_extra.get("IS_SANDBOX")
    if mode == "bypass" and os.getuid() == 0:
        assert sandbox == "1"
    else:
        assert sandbox is None


@pytest.mark.parametrize(
    ("kw", "key"),
    [
        ({"reasoning_effort": "extreme"}, "reasoning_effort"),
        ({"permission_mode": "yolo"}, "permission_mode"),
        ({"provider_options": {"nope": 1}}, "claude_opts.nope"),
        ({"provider_options": {"max_cost_usd": -1}}, "claude_opts.max_cost_usd"),
        ({"provider_options": {"extra_args": "--x"}}, "claude_opts.extra_args"),
        ({"max_turns": 0}, "max_turns"),
    ],
)
def test_validate_options_rejects_at_plan_time(
    tmp_path: Path, kw: dict[str, Any], key: str
) -> None:
    with pytest.raises(UserError) as info:
        claude.ClaudeProvider().validate_options(request(tmp_path, **kw))
    assert info.value.key == key
    assert info.value.exit_code == 2


def test_validate_options_accepts_a_full_plan(tmp_path: Path) -> None:
    claude.ClaudeProvider().validate_options(
        request(
            tmp_path,
            model="m",
            reasoning_effort="max",
            permission_mode="bypass",
            max_turns=3,
            provider_options={"max_cost_usd": 2, "max_retries": 0, "extra_args": ["--bare"]},
        )
    )


def test_registry_returns_the_claude_adapter() -> None:
    assert get_provider("claude").name == "claude"


# ------------------------------------------------------------------ end to end via a fake CLI


def test_start_end_to_end_with_fake_cli(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("claude", [{"case": str(case_dir("claude", "success_write"))}])
    events: list[Event] = []
    req = request(
        tmp_path,
        model="claude-opus-5-5",
        permission_mode="bypass",
        env={"ANTHROPIC_API_KEY": SECRET, "PROMPT_RUNNER_AGENT": "1"},
    )
    handle = claude.make_provider().start(req, events.append)
    result = handle.wait(30)
    assert result is not None and result.ok, result
    assert result.session_id == "db8b0820-99e6-4933-bc10-1238215f57c3"
    assert handle.session_id == result.session_id
    assert result.text == "ok"
    assert result.usage.cost_usd == pytest.approx(0.00028)
    assert kinds(events)[0] == "session_started"
    assert kinds(events)[-2:] == ["usage", "result"]
    assert events[-1].data == {"ok": True, "text": "ok", "session_id": result.session_id}
    [record] = fake_cli.records()
    assert record["cwd"] == str(tmp_path)
    assert record["stdin"] == "create hello.txt"
    assert record["env"]["ANTHROPIC_API_KEY"] == SECRET
    assert record["env"]["PROMPT_RUNNER_AGENT"] == "1"
    assert all(SECRET not in a for a in record["argv"])
    assert "--dangerously-skip-permissions" in record["argv"]
    if os.getuid() == 0:
        assert record["env"]["IS_SANDBOX"] == "1"
    assert record["pgid"] == record["pid"]  # its own process group
    assert result.argv is not None and result.argv[1:] == tuple(record["argv"])
    assert all(SECRET not in str(e.data) for e in events)


def test_secret_in_extra_args_is_redacted_from_reported_argv(
    fake_cli: FakeCli, tmp_path: Path
) -> None:
    fake_cli.install("claude", [{"case": str(case_dir("claude", "success_write"))}])
    req = request(
        tmp_path,
        env={"MY_TOKEN": SECRET},
        provider_options={"extra_args": [f"--header=x-token:{SECRET}"]},
    )
    result = claude.make_provider().start(req, lambda e: None).wait(30)
    assert result is not None and result.argv is not None
    assert all(SECRET not in a for a in result.argv)
    assert "--header=x-token:***" in result.argv


def test_resume_uses_the_exact_session_id(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install(
        "claude",
        [
            {"case": str(case_dir("claude", "resume_1"))},
            {"case": str(case_dir("claude", "resume_2"))},
        ],
    )
    provider = claude.make_provider()
    first = provider.start(request(tmp_path), lambda e: None).wait(30)
    assert first is not None and first.ok and first.session_id
    second_handle = provider.resume(request(tmp_path), first.session_id, "next", lambda e: None)
    assert second_handle.session_id == first.session_id  # known before the CLI says so
    second = second_handle.wait(30)
    assert second is not None and second.ok
    assert second.session_id == first.session_id
    records = fake_cli.records()
    argv = records[1]["argv"]
    assert argv[argv.index("--resume") + 1] == first.session_id
    assert "--continue" not in argv and "-c" not in argv
    assert records[1]["stdin"] == "next"


def test_resume_of_unknown_session_is_not_resumable(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("claude", [{"case": str(case_dir("claude", "resume_bad"))}])
    result = (
        claude.make_provider()
        .resume(request(tmp_path), "00000000-0000-4000-8000-000000000000", "go", lambda e: None)
        .wait(30)
    )
    assert result is not None and not result.ok
    assert result.failure is not None
    assert result.failure.failure_class == "unknown"
    assert not result.failure.resumable


def test_error_case_end_to_end_emits_error_then_result(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("claude", [{"case": str(case_dir("claude", "err_429"))}])
    events: list[Event] = []
    result = claude.make_provider().start(request(tmp_path), events.append).wait(30)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "provider_rate_limit"
    assert kinds(events)[-2:] == ["error", "result"]
    assert events[-2].data["class"] == "provider_rate_limit"
    assert events[-1].data["ok"] is False


def test_missing_cli_raises_provider_missing(tmp_path: Path) -> None:
    os.environ["PATH"] = str(tmp_path)
    with pytest.raises(ProviderMissingError) as info:
        claude.make_provider().check_available()
    assert info.value.exit_code == 3
    assert "`claude`" in str(info.value)
    assert "npm install -g @anthropic-ai/claude-code" in str(info.value)


def test_start_without_cli_is_a_launch_failure(tmp_path: Path) -> None:
    os.environ["PATH"] = str(tmp_path)
    result = claude.make_provider().start(request(tmp_path), lambda e: None).wait(5)
    assert result is not None and not result.ok
    assert result.failure is not None
    assert result.failure.failure_class == "launch_failed"
    assert result.failure.local_deterministic


# ------------------------------------------------------------------ session isolation

HELP = Path(__file__).resolve().parents[1] / "data" / "agent-cli" / "claude_help"


def test_setting_sources_keep_the_users_own_settings_out_by_default(tmp_path: Path) -> None:
    argv = list(claude.ClaudeProvider().launch(request(tmp_path), None, "x").argv)
    assert argv[argv.index("--setting-sources") + 1] == "project,local"


@pytest.mark.parametrize(
    ("value", "flag"),
    [
        (["user", "project", "local"], "user,project,local"),
        ("project", "project"),
        ([], ""),
        (False, None),
    ],
)
def test_setting_sources_override(tmp_path: Path, value: Any, flag: str | None) -> None:
    req = request(tmp_path, provider_options={"setting_sources": value})
    claude.ClaudeProvider().validate_options(req)
    argv = list(claude.ClaudeProvider().launch(req, None, "x").argv)
    if flag is None:
        assert "--setting-sources" not in argv
    else:
        assert argv[argv.index("--setting-sources") + 1] == flag


@pytest.mark.parametrize("value", [["global"], "user,everything", 3, True])
def test_setting_sources_refuses_other_values(tmp_path: Path, value: Any) -> None:
    req = request(tmp_path, provider_options={"setting_sources": value})
    with pytest.raises(UserError) as info:
        claude.ClaudeProvider().validate_options(req)
    assert info.value.key == "claude_opts.setting_sources"


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
def test_every_captured_cli_version_takes_setting_sources(version: str) -> None:
    """The flag and its three sources, as ``claude --help`` of each captured version says."""
    text = (HELP / f"claude_help_{version}.txt").read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if "--setting-sources" in x)
    assert "--setting-sources <sources>" in line
    after = text[text.index("--setting-sources") :][:300]
    assert "(user, project, local)" in " ".join(after.split())
