"""Cursor CLI adapter: drives ``agent -p --output-format stream-json``.

**Never run against a real binary.** The Cursor CLI installs only from
Cursor's download site and talks to Cursor's own backend, neither reachable
here. The parser follows ``OTHER-PROVIDERS.md`` section 2: the official
output-format page (cursor.com/docs/cli/reference/output-format) plus
captures of CLI 2026.05.28 (cli_subprocess_core fixtures) and 2026.08.11
(AgentsServer); it is tested on those samples (``tests/data/agent-cli/cursor``).

Decisions:

* **CLI stream** (no official Python SDK). The binary is ``agent``
  (``cursor-agent`` is the legacy alias; use ``cursor_opts.cli_path`` for it).
* **Prompt** is the positional argument, last; a prompt starting with ``-``
  gets a leading space so it is never parsed as a flag.
* **Permission modes**: ``default`` -> ``--trust`` only (an unseen directory
  otherwise fails with "Workspace Trust Required"; trust does not allow
  commands); ``bypass`` -> ``--force``; ``plan`` -> ``--mode plan``. There
  is no accept-edits posture, so ``auto`` fails at plan time.
* ``model`` -> ``--model``; ``extra_dirs`` -> ``--add-dir`` (changelog
  2026-06-29, unverified); resume -> ``--resume <chatId>`` (never
  ``--continue``). Reasoning effort, system prompts, max turns and allowed
  tools have no flags and fail at plan time.
* **Text**: with partial output the stream mixes deltas (``timestamp_ms``
  without ``model_call_id``), buffered duplicates (both fields: ignored) and a
  final full-text duplicate (neither field: replaces the deltas); text is
  emitted once per segment, at the next tool call or at the result.
* **Tools**: ``tool_call`` ``started``/``completed``; the tool name is the
  single ``<name>ToolCall`` key; ``rejected`` results are approval denials
  (reported as non-fatal ``error`` events); write/edit/delete results become
  ``file_change`` events.
* **Usage** only in ``result.usage`` (camelCase, undocumented); no cost.
  ``interaction_query`` events are ignored, unknown types kept raw.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ..errors import UserError
from ._cli import CliProvider, Launch
from ._cli_options import SECRET_NAME, check_paths, cli_binary, extra_args, option_paths
from ._stream import Emit, Outcome, StreamParser, as_int, as_str
from .base import SessionRequest, Usage
from .classify import Signals, classify
from .failure import envelope_for

OPTIONS: dict[str, str] = {
    "trust": "`--trust` (default true; `false` leaves it out)",
    "sandbox": "`--sandbox enabled|disabled` (true/false or the word)",
    "stream_partial_output": "`--stream-partial-output`",
    "mode": "`--mode plan|ask` (refused beside permission_mode plan with another mode)",
    "approve_mcps": "`--approve-mcps`",
    "plugin_dirs": "`--plugin-dir DIR` per entry, relative to the packet directory",
    "headers": "`-H 'NAME: VALUE'` per entry of a mapping (a secret-looking name is refused: "
    "put the secret in env)",
}
_WORKTREE = (
    "the runner verifies and commits the target repo's own work tree; a session in a "
    "separate Cursor worktree would leave its changes outside both"
)
REFUSED: dict[str, str] = {
    "worktree": _WORKTREE,
    "worktree_base": _WORKTREE,
    "skip_worktree_setup": _WORKTREE,
}
SANDBOX = {True: "enabled", False: "disabled", "enabled": "enabled", "disabled": "disabled"}
MODES = ("plan", "ask")
TOOL_OUTPUT_CAP = 100_000
FILE_TOOLS = {"write": "create", "edit": "modify", "delete": "delete"}
PERMISSION_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "bypass": ("--force",),
    "plan": ("--mode", "plan"),
}
UNSUPPORTED = {
    "system_prompt": "remove system_prompt for cursor prompts (use .cursor rules)",
    "append_system_prompt": "remove append_system_prompt for cursor prompts",
    "max_turns": "remove max_turns for cursor prompts; bound them with timeout instead",
    "allowed_tools": "remove allowed_tools for cursor prompts (use .cursor/cli.json permissions)",
}


def _tool(call: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """``("shell", {...})`` from ``{"shellToolCall": {...}}`` or ``{"function": {...}}``."""
    if isinstance(call.get("function"), dict):
        fn = call["function"]
        return str(fn.get("name") or "function"), fn
    for key, value in call.items():
        if isinstance(value, dict):
            name = key[: -len("ToolCall")] if key.endswith("ToolCall") else key
            return name, value
    return "tool", {}


class _ToolEnd(NamedTuple):
    """What a ``tool_call`` ``completed`` record's ``result`` says."""

    success: Any
    rejected: Any
    is_error: bool
    output: str

    @classmethod
    def of(cls, result: Any) -> _ToolEnd:
        """Read ``{"success": {...}}``, ``{"rejected": {...}}`` or ``{"failure"|"error": ...}``.

        An error: no ``success``, a rejection, a failure, or a shell exit other than 0.
        The output is the first of stdout, content, diff, reason, message, stderr.
        """
        fields = result if isinstance(result, dict) else {}
        success, rejected = fields.get("success"), fields.get("rejected")
        failure = fields.get("failure") or fields.get("error")
        is_error = success is None or bool(rejected) or bool(failure)
        if isinstance(success, dict) and as_int(success.get("exitCode")) != 0:
            is_error = True
        payload = success if isinstance(success, dict) else (rejected or failure or {})
        output = ""
        if isinstance(payload, dict):
            output = as_str(
                payload.get("stdout")
                or payload.get("content")
                or payload.get("diffString")
                or payload.get("reason")
                or payload.get("message")
                or payload.get("stderr")
            )
        return cls(success, rejected, is_error, output)


class CursorStreamParser(StreamParser):
    """Parser of Cursor CLI ``stream-json`` (2026.05-2026.08 captures)."""

    def __init__(self, emit: Emit) -> None:
        super().__init__(emit, "cursor")
        self.result: dict[str, Any] | None = None
        self.segment = ""
        self.thinking: list[str] = []
        self.texts: list[str] = []
        self.started: set[str] = set()

    def on_event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "assistant":
            self._assistant(obj)
            return
        if kind == "thinking":
            if obj.get("subtype") == "delta":
                self.thinking.append(as_str(obj.get("text")))
            else:
                self._flush_thinking()
            return
        self._flush_thinking()
        if kind == "system" and obj.get("subtype") == "init":
            self.start_session(obj.get("session_id"), model=obj.get("model"), cwd=obj.get("cwd"))
        elif kind == "tool_call":
            self._flush_text()
            self._tool_call(obj)
        elif kind == "result":
            self._flush_text()
            self.result = obj
            self.terminal_seen = True
            self.start_session(obj.get("session_id"))
        elif kind not in ("user", "interaction_query"):
            self.keep_unknown(obj)

    def _assistant(self, obj: dict[str, Any]) -> None:
        self.start_session(obj.get("session_id"))
        text = as_str((obj.get("message") or {}).get("content"))
        has_ts, has_call = "timestamp_ms" in obj, "model_call_id" in obj
        if has_ts and has_call:
            return  # buffered duplicate emitted before a tool call
        if has_ts:
            self.segment += text  # a delta
        elif not self.segment or text.startswith(self.segment):
            self.segment = text  # the full text of the segment
        else:
            self._flush_text()
            self.segment = text

    def _flush_text(self) -> None:
        if self.segment:
            self.texts.append(self.segment)
            self.emit("assistant_text", {"text": self.segment})
            self.segment = ""

    def _flush_thinking(self) -> None:
        if self.thinking:
            text = "".join(self.thinking)
            self.thinking.clear()
            if text:
                self.emit("thinking", {"text": text})

    def _tool_call(self, obj: dict[str, Any]) -> None:
        call_id = str(obj.get("call_id") or "")
        name, body = _tool(obj.get("tool_call") or {})
        args = body.get("args") or body.get("arguments") or {}
        if call_id not in self.started:
            self.started.add(call_id)
            self.emit("tool_use", {"tool": name, "tool_id": call_id, "input": args})
        if obj.get("subtype") != "completed":
            return
        end = _ToolEnd.of(body.get("result") or {})
        self.emit(
            "tool_result",
            {
                "tool_id": call_id,
                "tool": name,
                "output": end.output[:TOOL_OUTPUT_CAP],
                "is_error": end.is_error,
            },
        )
        if end.rejected:
            what = as_str(end.rejected.get("command")) if isinstance(end.rejected, dict) else ""
            self.emit(
                "error",
                {
                    "class": "approval_denied",
                    "message": f"{name} was rejected: {what or call_id}",
                    "provider_code": "rejected",
                    "tool_id": call_id,
                    "fatal": False,
                },
            )
        change = FILE_TOOLS.get(name)
        path = end.success.get("path") if isinstance(end.success, dict) else None
        path = path or (args.get("path") if isinstance(args, dict) else None)
        if change and not end.is_error and isinstance(path, str):
            self.emit("file_change", {"path": path, "change": change})

    def usage(self) -> Usage:
        """``result.usage`` (camelCase; ``inputTokens`` excludes cache reads)."""
        raw = (self.result or {}).get("usage") or {}
        return Usage(
            input_tokens=as_int(raw.get("inputTokens")) + as_int(raw.get("cacheWriteTokens")),
            output_tokens=as_int(raw.get("outputTokens")),
            cached_tokens=as_int(raw.get("cacheReadTokens")),
        )

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:
        self._flush_thinking()
        self._flush_text()
        result = self.result or {}
        text = as_str(result.get("result")) or "\n".join(self.texts)
        usage = self.usage()
        ok = (
            self.result is not None
            and result.get("subtype") == "success"
            and not result.get("is_error")
            and exit_code == 0
        )
        if ok:
            return Outcome(ok=True, text=text, usage=usage)
        if self.result is None and exit_code == 0:
            failure = envelope_for(
                "protocol_error", "agent exited without a result event", provider_code="no_result"
            )
            return Outcome(ok=False, text=text, usage=usage, failure=failure)
        message = as_str(result.get("error")) if result.get("is_error") else ""
        signals = Signals(
            message=message or stderr.strip() or f"agent exited with {exit_code}",
            subtype=as_str(result.get("subtype")) or None,
            exit_code=exit_code,
            stderr=stderr if message else "",
        )
        return Outcome(ok=False, text=text, usage=usage, failure=classify("cursor", signals))


class CursorProvider(CliProvider):
    """The ``cursor`` provider (Cursor CLI, binary ``agent``)."""

    name = "cursor"
    cli = "agent"
    install = "curl https://cursor.com/install -fsS | bash"

    options = OPTIONS
    refused = REFUSED
    permission_modes = tuple(PERMISSION_FLAGS)
    unsupported = UNSUPPORTED

    def validate_options(self, request: SessionRequest) -> None:
        """The shared checks, then the values of ``cursor_opts`` (raises UserError)."""
        super().validate_options(request)
        opts = request.provider_options
        sandbox = opts.get("sandbox")
        if sandbox is not None and (not isinstance(sandbox, (bool, str)) or sandbox not in SANDBOX):
            raise UserError(
                f"sandbox {sandbox!r} is not valid",
                key="cursor_opts.sandbox",
                fix="use enabled or disabled (or true/false)",
            )
        mode = opts.get("mode")
        if mode is not None and mode not in MODES:
            raise UserError(
                f"mode {mode!r} is not a Cursor mode", key="cursor_opts.mode", fix="use plan or ask"
            )
        if mode is not None and request.permission_mode == "plan" and mode != "plan":
            raise UserError(
                f"mode {mode} contradicts permission_mode plan (--mode plan)",
                key="cursor_opts.mode",
                fix="remove mode or permission_mode: plan",
            )
        check_paths(request, provider=self.name, key="plugin_dirs")
        headers = opts.get("headers")
        if headers is not None:
            if not isinstance(headers, Mapping):
                raise UserError(
                    "headers must be a mapping of header names to values",
                    key="cursor_opts.headers",
                    fix='write it as a YAML mapping, e.g. {X-Team: "core"}',
                )
            for name in headers:
                if SECRET_NAME.search(str(name)):
                    raise UserError(
                        f"header {name!r} looks like a secret and would end up in argv",
                        key=f"cursor_opts.headers.{name}",
                        fix="pass secrets as environment variables (e.g. CURSOR_API_KEY)",
                    )

    def launch(self, request: SessionRequest, resume_id: str | None, message: str) -> Launch:
        """``agent -p --output-format stream-json [flags] <prompt>``."""
        opts = request.provider_options
        argv: list[str] = [cli_binary(request, self.cli), "-p", "--output-format", "stream-json"]
        if opts.get("stream_partial_output"):
            argv.append("--stream-partial-output")
        if request.model:
            argv += ["--model", request.model]
        argv += PERMISSION_FLAGS[request.permission_mode]
        if opts.get("mode") and request.permission_mode != "plan":
            argv += ["--mode", str(opts["mode"])]
        if opts.get("trust", True) and request.permission_mode != "bypass":
            argv.append("--trust")
        if opts.get("sandbox") is not None:
            argv += ["--sandbox", SANDBOX[opts["sandbox"]]]
        if opts.get("approve_mcps"):
            argv.append("--approve-mcps")
        for plugin_dir in option_paths(request, "plugin_dirs"):
            argv += ["--plugin-dir", plugin_dir]
        for name, value in (opts.get("headers") or {}).items():
            argv += ["-H", f"{name}: {value}"]
        for directory in request.extra_dirs:
            argv += ["--add-dir", str(directory)]
        if resume_id:
            argv += ["--resume", resume_id]
        argv += extra_args(request)
        argv.append(" " + message if message.startswith("-") else message)
        return Launch(argv=tuple(argv))

    def make_parser(self, emit: Emit) -> StreamParser:
        return CursorStreamParser(emit)


def make_provider() -> CursorProvider:
    """Registry entry point."""
    return CursorProvider()
