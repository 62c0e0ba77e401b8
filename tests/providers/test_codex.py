"""Codex CLI adapter: parser on real 0.171.0 transcripts, argv, resume, confirmation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import ProviderMissingError, UserError
from prompt_runner.providers import codex
from prompt_runner.providers._stream import UsageLedger
from prompt_runner.providers.base import SessionRequest, TimeBounds, Usage
from prompt_runner.providers.events import Event
from tests.providers.conftest import FakeCli, case_dir, kinds, replay

SECRET = "sk-openai-secret-value-123456"
THREAD = "01a2295c-97e9-7e73-ad31-59129e7bb04e"


def parse(case: str, ledger: UsageLedger | None = None) -> tuple[list[Event], Any]:
    store = ledger or UsageLedger()
    return replay(lambda emit: codex.CodexStreamParser(emit, store), "codex", case)


def request(cwd: Path, **kw: Any) -> SessionRequest:
    base: dict[str, Any] = {
        "prompt_id": "01",
        "prompt_text": "create hello.txt",
        "cwd": cwd,
        "provider": "codex",
        "bounds": TimeBounds(idle_ms=20_000, run_deadline_ms=60_000),
    }
    base.update(kw)
    return SessionRequest(**base)


# ------------------------------------------------------------------ parser: success streams


def test_shell_stream_maps_to_canonical_events() -> None:
    events, outcome = parse("success_shell")
    assert kinds(events) == ["session_started", "tool_use", "tool_result", "assistant_text"]
    assert events[0].data["session_id"] == "01a2295c-677d-71b0-8999-220f66f80e81"
    assert events[1].data["tool"] == "shell"
    assert "echo hello from mock" in events[1].data["input"]["command"]
    assert events[2].data["output"] == "hello from mock\n"
    assert events[2].data["is_error"] is False
    assert events[3].data["text"] == "ok"
    assert outcome.ok and outcome.text == "ok"
    assert outcome.usage == Usage(input_tokens=160, output_tokens=20, cached_tokens=40)


def test_patch_stream_reports_file_change() -> None:
    events, outcome = parse("success_shell_patch")
    changes = [e.data for e in events if e.kind == "file_change"]
    assert changes == [
        {"path": "/SCRATCH/codex/out/success_shell_patch/work/patched.txt", "change": "create"}
    ]
    assert [e.data["tool"] for e in events if e.kind == "tool_use"] == ["shell", "apply_patch"]
    assert outcome.ok


def test_reasoning_and_failed_command() -> None:
    events, outcome = parse("reasoning_fail_cmd")
    assert events[1].kind == "thinking"
    assert events[1].data["text"] == "I will run a failing command"
    result = next(e for e in events if e.kind == "tool_result")
    assert result.data["is_error"] is True and result.data["exit_code"] == 3
    assert outcome.ok  # a failing tool is not a failing session


def test_unknown_model_warning_is_not_fatal() -> None:
    events, outcome = parse("unknown_model_text")
    warning = next(e for e in events if e.kind == "error")
    assert warning.data["fatal"] is False
    assert "mock-unknown-model" in warning.data["message"]
    assert outcome.ok


def test_reconnecting_lines_are_not_fatal_by_themselves() -> None:
    _, outcome = parse("err_500_then_ok_retries2")
    assert outcome.ok
    parser = codex.CodexStreamParser(lambda k, d: None, UsageLedger())
    parser.feed_line('{"type":"thread.started","thread_id":"t"}')
    parser.feed_line('{"type":"error","message":"Reconnecting... 1/5 (boom)"}')
    parser.feed_line('{"type":"turn.completed","usage":{"input_tokens":1,"output_tokens":1}}')
    assert parser.outcome(0, "").ok
    assert parser.reconnects == 1


def test_resumed_thread_reports_usage_deltas() -> None:
    ledger = UsageLedger()
    _, first = parse("resume_1", ledger)
    _, second = parse("resume_2", ledger)
    _, third = parse("resume_other_cwd", ledger)
    assert first.usage.output_tokens == 20
    assert second.usage == Usage(input_tokens=80, output_tokens=10, cached_tokens=20)
    assert third.usage == Usage(input_tokens=80, output_tokens=10, cached_tokens=20)


# ------------------------------------------------------------------ parser: every error case

# case, class, retryable, resumable, provider_code, suggested_delay_ms
ERROR_CASES = [
    ("err_400", "provider_config_claim", True, False, "context window", None),
    ("err_401", "provider_auth_claim", True, False, "401", None),
    ("err_403", "provider_config_claim", True, False, "model_not_found", None),
    ("err_429", "provider_rate_limit", True, False, "429", None),
    ("err_429_default_retries", "provider_rate_limit", True, False, "429", None),
    ("err_429_quota", "provider_rate_limit", False, False, "quota_exhausted", None),
    ("err_500", "provider_runtime_claim", True, False, "high demand", None),
    ("err_500_generic", "provider_runtime_claim", True, False, "high demand", None),
    ("err_500_default_retries", "provider_runtime_claim", True, False, "high demand", None),
    ("err_502", "provider_runtime_claim", True, False, "502", None),
    ("err_503", "provider_capacity", True, False, "at capacity", None),
    ("err_conn_refused_bounded", "transport_disconnect", False, True, "connection failed", None),
    ("err_conn_refused_unbounded", "transport_disconnect", False, True, "connection failed", None),
    ("err_response_failed", "protocol_error", False, True, "stream disconnected", None),
    (
        "err_response_failed_default_retries",
        "protocol_error",
        False,
        True,
        "stream disconnected",
        None,
    ),
    ("resume_bad", "unknown", True, False, "session_not_found", None),
]


@pytest.mark.parametrize(("case", "cls", "retryable", "resumable", "code", "delay"), ERROR_CASES)
def test_captured_error_case_is_classified(
    case: str, cls: str, retryable: bool, resumable: bool, code: str, delay: int | None
) -> None:
    _, outcome = parse(case)
    assert not outcome.ok
    failure = outcome.failure
    assert failure is not None
    assert (failure.failure_class, failure.retryable, failure.resumable) == (
        cls,
        retryable,
        resumable,
    )
    assert failure.provider_code == code
    assert failure.suggested_delay_ms == delay
    assert not failure.message.startswith("Reconnecting")


def test_every_captured_codex_error_case_is_covered() -> None:
    folder = case_dir("codex", "err_429").parent
    failing = {p.name for p in folder.iterdir() if (p / "exit_code").read_text().strip() != "0"}
    assert failing == {c[0] for c in ERROR_CASES}


# ------------------------------------------------------------------ argv, options, confirmation


def test_argv_maps_plan_values_and_reads_prompt_from_stdin(tmp_path: Path) -> None:
    req = request(
        tmp_path,
        model="gpt-5.5",
        reasoning_effort="xhigh",
        permission_mode="auto",
        append_system_prompt='say "hi"',
        extra_dirs=(tmp_path / "b",),
        provider_options={"config": {"model_verbosity": "low", "x.y": 3}},
    )
    launch = codex.CodexProvider().launch(req, None, req.prompt_text)
    argv = list(launch.argv)
    assert argv[:3] == ["codex", "exec", "--json"]
    assert argv[argv.index("-m") + 1] == "gpt-5.5"
    assert 'model_reasoning_effort="xhigh"' in argv
    assert 'developer_instructions="say \\"hi\\""' in argv
    assert argv[argv.index("--sandbox") + 1] == "workspace-write"
    assert argv[argv.index("--add-dir") + 1] == str(tmp_path / "b")
    assert 'model_verbosity="low"' in argv and "x.y=3" in argv
    assert argv[argv.index("--disable") + 1] == "unbounded_connection_retries"
    assert argv[-1] == "-"
    assert "resume" not in argv
    assert launch.stdin_text == "create hello.txt"


@pytest.mark.parametrize(
    ("mode", "flags"),
    [
        ("default", []),
        ("auto", ["--sandbox", "workspace-write"]),
        ("plan", ["--sandbox", "read-only"]),
        ("bypass", ["--dangerously-bypass-approvals-and-sandbox"]),
    ],
)
def test_permission_modes(tmp_path: Path, mode: str, flags: list[str]) -> None:
    argv = list(
        codex.CodexProvider().launch(request(tmp_path, permission_mode=mode), None, "x").argv
    )
    found = [a for a in argv if a in ("--sandbox", "--dangerously-bypass-approvals-and-sandbox")]
    assert found == flags[:1]
    if len(flags) == 2:
        assert argv[argv.index("--sandbox") + 1] == flags[1]


@pytest.mark.parametrize(
    ("kw", "key"),
    [
        ({"system_prompt": "x"}, "system_prompt"),
        ({"max_turns": 3}, "max_turns"),
        ({"reasoning_effort": "max"}, "reasoning_effort"),
        ({"provider_options": {"api_key": "sk"}}, "codex_opts.api_key"),
        ({"provider_options": {"config": ["x"]}}, "codex_opts.config"),
    ],
)
def test_unsupported_options_fail_at_plan_time(
    tmp_path: Path, kw: dict[str, Any], key: str
) -> None:
    with pytest.raises(UserError) as info:
        codex.CodexProvider().validate_options(request(tmp_path, **kw))
    assert info.value.key == key


def test_allowed_tools_is_accepted_for_reference_packets(tmp_path: Path) -> None:
    # The reference system's packets set allowed_tools on Codex prompts; Codex has no
    # per-tool allowlist, so the value is accepted and not enforced (permission_mode is).
    codex.CodexProvider().validate_options(request(tmp_path, allowed_tools=("Read", "Bash")))


def test_cli_confirmation_proves_model_and_effort_from_argv(tmp_path: Path) -> None:
    req = request(tmp_path, model="gpt-5.5", reasoning_effort="high", cli_confirmation="require")
    launch = codex.CodexProvider().launch(req, None, "x")
    assert launch.preflight_failure is None
    assert codex.effective_settings(launch.argv) == ("gpt-5.5", "high")


def test_cli_confirmation_require_fails_on_override(tmp_path: Path) -> None:
    req = request(
        tmp_path,
        model="gpt-5.5",
        cli_confirmation="require",
        provider_options={"extra_args": ["-c", 'model="o3"']},
    )
    failure = codex.CodexProvider().launch(req, None, "x").preflight_failure
    assert failure is not None
    assert failure.failure_class == "cli_confirmation_mismatch"
    assert failure.local_deterministic and not failure.retryable


def test_cli_confirmation_warn_emits_a_nonfatal_event(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("codex", [{"case": str(case_dir("codex", "text_only"))}])
    req = request(
        tmp_path,
        model="gpt-5.5",
        cli_confirmation="warn",
        provider_options={"extra_args": ["--model", "o3"]},
    )
    events: list[Event] = []
    result = codex.make_provider().start(req, events.append).wait(30)
    assert result is not None and result.ok
    assert events[0].kind == "error"
    assert events[0].data["class"] == "cli_confirmation_mismatch"
    assert events[0].data["fatal"] is False


def test_cli_confirmation_require_launches_nothing(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("codex", [{"case": str(case_dir("codex", "text_only"))}])
    req = request(
        tmp_path,
        model="gpt-5.5",
        cli_confirmation="require",
        provider_options={"extra_args": ["--model", "o3"]},
    )
    result = codex.make_provider().start(req, lambda e: None).wait(5)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "cli_confirmation_mismatch"
    assert fake_cli.records() == []


# ------------------------------------------------------------------ end to end via a fake CLI


def test_start_and_resume_by_exact_thread_id(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install(
        "codex",
        [
            {"case": str(case_dir("codex", "resume_1"))},
            {"case": str(case_dir("codex", "resume_2"))},
        ],
    )
    provider = codex.make_provider()
    req = request(tmp_path, model="gpt-5.5", env={"OPENAI_API_KEY": SECRET})
    first = provider.start(req, lambda e: None).wait(30)
    assert first is not None and first.ok and first.session_id == THREAD
    second = provider.resume(req, THREAD, "next prompt", lambda e: None).wait(30)
    assert second is not None and second.ok and second.session_id == THREAD
    assert second.usage.output_tokens == 10  # delta, not the cumulative 30
    one, two = fake_cli.records()
    assert one["stdin"] == "create hello.txt" and two["stdin"] == "next prompt"
    argv = two["argv"]
    assert argv[argv.index("resume") + 1] == THREAD
    assert argv[-1] == "-"
    assert "--last" not in argv
    assert argv.index("-m") < argv.index("resume")  # shared flags before the subcommand
    for record in (one, two):
        assert all(SECRET not in a for a in record["argv"])
        assert record["env"]["OPENAI_API_KEY"] == SECRET


def test_unbounded_reconnects_end_at_the_idle_bound(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("codex", [{"case": str(case_dir("codex", "err_conn_refused_unbounded"))}])
    req = request(tmp_path, bounds=TimeBounds(idle_ms=500, run_deadline_ms=60_000))
    events: list[Event] = []
    result = codex.make_provider().start(req, events.append).wait(30)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "transport_timeout"
    assert result.failure.resumable
    assert result.session_id == "01a2295d-2225-71f2-9076-14636e47f40b"
    assert sum(1 for e in events if e.data.get("provider_code") == "reconnecting") == 4


def test_failed_turn_end_to_end(fake_cli: FakeCli, tmp_path: Path) -> None:
    fake_cli.install("codex", [{"case": str(case_dir("codex", "err_503"))}])
    result = codex.make_provider().start(request(tmp_path), lambda e: None).wait(30)
    assert result is not None and result.failure is not None
    assert result.failure.failure_class == "provider_capacity"
    assert result.failure.message == "Selected model is at capacity. Please try a different model."


def test_missing_codex_cli(tmp_path: Path) -> None:
    os.environ["PATH"] = str(tmp_path)
    with pytest.raises(ProviderMissingError, match="npm install -g @openai/codex"):
        codex.make_provider().check_available()
