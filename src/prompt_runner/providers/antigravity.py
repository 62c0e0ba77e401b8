"""Google Antigravity CLI adapter: drives ``agy --print=<prompt> --output-format stream-json``.

**Never run against a real binary.** ``agy`` installs from Google's site and
needs a Google login or a Gemini API key against Google's backend, neither
available here. The parser follows ``OTHER-PROVIDERS.md`` section 3: agy
1.1.8 release notes (stream-json ``init`` / ``step_update`` / ``result``), a
captured 1.1.17 stream (pi-tian-extensions fixture) and notes on 1.2.x; it is
tested on those samples (``tests/data/agent-cli/antigravity``). The full
schema is unpublished: unknown ``event`` and ``step_type`` values are kept
raw and never fail a session.

Decisions:

* **CLI stream** (no SDK). ``--print`` is a Go *string* flag, so the prompt
  is passed as ``--print=<prompt>`` (one argv element: nothing can be
  swallowed, whatever the prompt starts with).
* ``--add-dir <cwd>`` is always passed (print mode may otherwise work in a
  scratch dir), plus one per extra dir. ``--print-timeout`` is set past the
  runner's run deadline so agy's own 5-minute default never cuts a run short;
  the runner's bounds decide.
* **Permission modes**: ``default`` -> no flag (headless, anything needing
  review is denied); ``bypass`` -> ``--dangerously-skip-permissions``;
  ``auto`` -> ``--mode accept-edits`` (1.2.x); no plan mode: ``plan`` fails
  at plan time.
* ``model`` -> ``--model`` (agy silently ignores unknown ids);
  ``reasoning_effort`` -> ``--effort`` (low|medium|high); resume ->
  ``--conversation <id>`` (never ``--continue``, which is machine-global).
  System prompts, max turns and allowed tools have no flags: plan-time errors.
* **Success** needs ``result.status`` ``SUCCESS`` (or 1.1.17's ``OK``) and
  exit 0; anything else fails closed. ``result.usage`` is the conversation's
  running total: a per-conversation ledger reports deltas. No cost.
* **Errors**: ``result.error``, an ``AGY_ERROR:`` stderr line (quota: "will
  reset after 2h3m4s" -> not retryable, delay suggested), exit codes (2 flag
  error -> launch_failed); tool ``ERROR`` steps with "permission check
  failed" are approval denials.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import UserError
from ._cli import CliProvider, Launch
from ._cli_options import check_paths, cli_binary, extra_args, option_paths
from ._stream import Emit, Outcome, StreamParser, UsageLedger, as_int, as_str
from .base import SessionRequest, Usage
from .classify import Signals, classify
from .failure import envelope_for

EFFORTS = ("low", "medium", "high")
OPTIONS: dict[str, str] = {
    "sandbox": "`--sandbox`",
    "print_timeout_s": "`--print-timeout Ns` (default: past the runner's own run deadline)",
    "print_timeout": "`--print-timeout DURATION` (a Go duration such as `15m`, or seconds)",
    "add_dirs": "`--add-dir DIR` per entry, relative to the packet directory (the session's "
    "cwd and other targets are always added)",
    "log_file": "`--log-file PATH`",
}
REFUSED: dict[str, str] = {
    "dangerously_skip_permissions": "the permission posture has one key: permission_mode "
    "bypass launches agy with `--dangerously-skip-permissions`",
    "conversation": "the runner resumes the exact conversation it recorded; a fixed "
    "conversation would make every prompt and retry share one",
    "continue": "`--continue` resumes the machine-wide latest conversation, which may be "
    "another run's; the runner resumes by exact id",
}
_GO_DURATION = re.compile(r"^(0|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$")
OK_STATUSES = ("SUCCESS", "OK")
TOOL_OUTPUT_CAP = 100_000
FILE_TOOLS = {
    "write_to_file": "create",
    "replace_file_content": "modify",
    "multi_replace_file_content": "modify",
    "sed_file": "modify",
}
PERMISSION_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "auto": ("--mode", "accept-edits"),
    "bypass": ("--dangerously-skip-permissions",),
}
UNSUPPORTED = {
    "system_prompt": "remove system_prompt for antigravity prompts",
    "append_system_prompt": "remove append_system_prompt for antigravity prompts",
    "max_turns": "remove max_turns for antigravity prompts; bound them with timeout instead",
    "allowed_tools": "remove allowed_tools (use agy's settings.json permissions)",
}
SKIPPED_STEPS = ("user_input", "system_message", "checkpoint")


class AntigravityStreamParser(StreamParser):
    """Parser of agy ``stream-json``: ``{"event": name, name: {...}}`` records."""

    def __init__(self, emit: Emit, ledger: UsageLedger) -> None:
        super().__init__(emit, "antigravity")
        self.ledger = ledger
        self.result: dict[str, Any] | None = None
        self.step_types: dict[int, str] = {}
        self.text_by_step: dict[int, str] = {}
        self.texts: list[str] = []
        self.tools_started: set[int] = set()

    def on_event(self, obj: dict[str, Any]) -> None:
        event = obj.get("event")
        body = obj.get(str(event)) if event else None
        if not isinstance(body, dict):
            if event is None and "status" in obj and "conversation_id" in obj:
                body, event = obj, "result"  # --output-format json envelope
            else:
                self.keep_unknown(obj)
                return
        if event == "init":
            self.start_session(
                obj.get("conversation_id") or body.get("conversation_id"),
                cwd=body.get("cwd"),
                model=body.get("model"),
                permission_mode=body.get("permission_mode"),
            )
        elif event == "step_update":
            self.start_session(body.get("conversation_id"))
            self._step(body)
        elif event == "result":
            self.result = body
            self.terminal_seen = True
            self.start_session(body.get("conversation_id"))
        else:
            self.keep_unknown(obj)

    def _step(self, step: dict[str, Any]) -> None:
        index = as_int(step.get("step_index"))
        stype = step.get("step_type") or self.step_types.get(index, "")
        self.step_types[index] = str(stype)
        state = step.get("state")
        if stype == "agent_response":
            delta = as_str(step.get("text_delta"))
            so_far = self.text_by_step.get(index, "")
            # One build repeats the full text on DONE: never append it twice.
            if delta and not (state == "DONE" and so_far and delta.startswith(so_far)):
                so_far += delta
            elif delta:
                so_far = delta
            self.text_by_step[index] = so_far
            if state in ("DONE", "ERROR") and so_far:
                self.texts.append(so_far)
                self.emit("assistant_text", {"text": so_far})
        elif stype == "tool":
            self._tool(index, step, state)
        elif stype not in SKIPPED_STEPS:
            self.keep_unknown(step)

    def _tool(self, index: int, step: dict[str, Any], state: Any) -> None:
        info = step.get("tool_info") or {}
        name = str(step.get("tool_name") or info.get("name") or "tool")
        params = info.get("parameters") or {}
        tool_id = f"{step.get('conversation_id') or self.session_id}:{index}"
        if index not in self.tools_started:
            self.tools_started.add(index)
            self.emit("tool_use", {"tool": name, "tool_id": tool_id, "input": params})
        if state not in ("DONE", "ERROR"):
            return
        error = step.get("error") or info.get("error")
        output = step.get("output") or info.get("output")
        if state == "ERROR":
            output = (error or {}).get("message") if isinstance(error, dict) else error
        text = as_str(output)[:TOOL_OUTPUT_CAP]
        self.emit(
            "tool_result",
            {"tool_id": tool_id, "tool": name, "output": text, "is_error": state == "ERROR"},
        )
        if state == "ERROR" and "permission" in text.lower():
            self.emit(
                "error",
                {
                    "class": "approval_denied",
                    "message": f"{name}: {text}",
                    "provider_code": "permission_check_failed",
                    "tool_id": tool_id,
                    "fatal": False,
                },
            )
        change = FILE_TOOLS.get(name)
        path = params.get("TargetFile") if isinstance(params, dict) else None
        if change and state == "DONE" and isinstance(path, str):
            self.emit("file_change", {"path": path, "change": change})

    def usage(self) -> Usage:
        """This process's share of ``result.usage`` (a conversation running total)."""
        raw = (self.result or {}).get("usage") or {}
        total = Usage(
            input_tokens=as_int(raw.get("input_tokens")),
            output_tokens=as_int(raw.get("output_tokens")) + as_int(raw.get("thinking_tokens")),
            cached_tokens=as_int(raw.get("cache_read_tokens")),
        )
        return self.ledger.delta(self.session_id, total) if self.result else Usage()

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:
        result = self.result or {}
        text = "\n".join(self.texts) or as_str(result.get("response"))
        usage = self.usage()
        status = as_str(result.get("status")).upper()
        if self.result is not None and status in OK_STATUSES and exit_code == 0:
            return Outcome(ok=True, text=text, usage=usage)
        if self.result is None and exit_code == 0:
            failure = envelope_for(
                "protocol_error", "agy exited without a result event", provider_code="no_result"
            )
            return Outcome(ok=False, text=text, usage=usage, failure=failure)
        agy_error = next(
            (ln.strip() for ln in stderr.splitlines() if ln.strip().startswith("AGY_ERROR:")), ""
        )
        message = as_str(result.get("error")) or agy_error
        signals = Signals(
            message=message or stderr.strip() or f"agy exited with {exit_code}",
            subtype=status.lower() or None,
            exit_code=exit_code,
            stderr=stderr,
            raw={"status": status, "denied_actions": result.get("denied_actions")},
        )
        return Outcome(ok=False, text=text, usage=usage, failure=classify("antigravity", signals))


class AntigravityProvider(CliProvider):
    """The ``antigravity`` provider (Google Antigravity CLI, binary ``agy``)."""

    name = "antigravity"
    cli = "agy"
    install = "curl -fsSL https://antigravity.google/cli/install.sh | bash"

    def __init__(self) -> None:
        self._ledger = UsageLedger()

    options = OPTIONS
    refused = REFUSED
    permission_modes = tuple(PERMISSION_FLAGS)
    efforts = tuple(EFFORTS)
    unsupported = UNSUPPORTED

    def validate_options(self, request: SessionRequest) -> None:
        """The shared checks, then ``antigravity_opts`` values (raises UserError)."""
        super().validate_options(request)
        opts = request.provider_options
        check_paths(request, provider=self.name, key="add_dirs")
        value = opts.get("print_timeout")
        if value is not None and _print_timeout(value) is None:
            raise UserError(
                f"print_timeout {value!r} is not a duration",
                key="antigravity_opts.print_timeout",
                fix='use a Go duration such as "15m" or a number of seconds',
            )

    def launch(self, request: SessionRequest, resume_id: str | None, message: str) -> Launch:
        """``agy --print=<prompt> --output-format stream-json [flags]``."""
        opts = request.provider_options
        argv: list[str] = [
            cli_binary(request, self.cli),
            f"--print={message}",
            "--output-format",
            "stream-json",
        ]
        argv += PERMISSION_FLAGS[request.permission_mode]
        if request.model:
            argv += ["--model", request.model]
        if request.reasoning_effort:
            argv += ["--effort", request.reasoning_effort]
        dirs: list[str] = []
        for directory in (
            *(str(d) for d in (request.cwd, *request.extra_dirs)),
            *option_paths(request, "add_dirs"),
        ):
            if directory not in dirs:
                dirs.append(directory)
        for directory in dirs:
            argv += ["--add-dir", directory]
        if resume_id:
            argv += ["--conversation", resume_id]
        if opts.get("sandbox"):
            argv.append("--sandbox")
        if opts.get("log_file"):
            argv += ["--log-file", str(opts["log_file"])]
        timeout = _print_timeout(opts["print_timeout"]) if opts.get("print_timeout") else None
        if timeout is None:
            seconds = opts.get("print_timeout_s") or request.bounds.run_deadline_ms // 1000 + 60
            timeout = f"{int(seconds)}s"
        argv += ["--print-timeout", timeout]
        argv += extra_args(request)
        return Launch(argv=tuple(argv), env_extra={"AGY_CLI_DISABLE_AUTO_UPDATE": "true"})

    def make_parser(self, emit: Emit) -> StreamParser:
        return AntigravityStreamParser(emit, self._ledger)


def _print_timeout(value: Any) -> str | None:
    """``print_timeout`` as the Go duration agy takes (a number is seconds), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and value >= 0:
        return f"{int(value)}s"
    if isinstance(value, str) and _GO_DURATION.match(value.strip()):
        return value.strip()
    return None


def make_provider() -> AntigravityProvider:
    """Registry entry point."""
    return AntigravityProvider()
