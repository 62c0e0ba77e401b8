"""Gemini CLI adapter: drives ``gemini -o stream-json`` (JSONL events on stdout).

Stream format followed: Gemini CLI **0.61.0**, ``gemini -p <prompt> -o
stream-json --yolo``, as captured against a local Gemini API mock in
``../shared/agent-cli/others/out_gemini_*`` (copies in
``tests/data/agent-cli/gemini``). Only that command line (success, 401, and
429/500 which the CLI retries past 150 s) was run for real; the other flags
below come from the CLI's documentation and are **not verified** against a
binary here.

Decisions:

* **CLI stream** (Gemini CLI has no separate official SDK for driving it).
* **Prompt** in argv as ``-p <prompt>``, exactly as captured.
* **Permission modes**: ``default`` -> no flag; ``auto`` -> ``--approval-mode
  auto_edit``; ``bypass`` -> ``--yolo`` (captured); ``plan`` ->
  ``--approval-mode plan``.
* **Other mappings**: ``model`` -> ``-m``; ``allowed_tools`` ->
  ``--allowed-tools`` each; ``extra_dirs`` -> ``--include-directories``
  (comma-joined). No flags exist for reasoning effort, system prompts or max
  turns: those fail at plan time.
* **Resume**: ``--resume <session_id>`` with the id from the ``init`` event
  (never ``latest``). Unverified against a binary here.
* **Trust**: ``GEMINI_CLI_TRUST_WORKSPACE=true`` is set in the child's
  environment, as in the capture: the target repo is the user's own choice.
* **Text**: assistant ``message`` events are deltas; they are joined and
  emitted as one ``assistant_text`` per uninterrupted run of deltas.
* **Classification**: ``result.status`` ``error`` carries
  ``error.message`` with the API's JSON (``"code":401``, ``"status":
  "UNAUTHENTICATED"``); Gemini's documented exit codes (41 auth, 42 input,
  44 sandbox, 52 config, 53 turn limit, 130 cancelled; 0.61.0 exited 145 on
  a 401) are the fallback. 429 and 500 are retried by the CLI for minutes:
  the runner's time bounds end those as ``transport_timeout``.
"""

from __future__ import annotations

import re
from typing import Any

from ._cli import CliProvider, Launch
from ._cli_options import cli_binary, extra_args
from ._stream import Emit, Outcome, StreamParser, as_int, as_str
from .base import SessionRequest, Usage
from .classify import Signals, classify
from .failure import envelope_for

OPTIONS: dict[str, str] = {
    "trust_workspace": "`GEMINI_CLI_TRUST_WORKSPACE=true` in the agent's environment "
    "(default true; `false` leaves it out)",
}
TOOL_OUTPUT_CAP = 100_000
WRITE_TOOLS = {"write_file": "create", "replace": "modify", "edit": "modify"}
PERMISSION_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "auto": ("--approval-mode", "auto_edit"),
    "bypass": ("--yolo",),
    "plan": ("--approval-mode", "plan"),
}
UNSUPPORTED = {
    "system_prompt": "remove system_prompt for gemini prompts (Gemini CLI reads GEMINI.md)",
    "append_system_prompt": "remove append_system_prompt for gemini prompts",
    "max_turns": "remove max_turns for gemini prompts; bound them with timeout instead",
}
_GOOGLE_STATUS = re.compile(r'"status"\s*:\s*"([A-Z_]+)"')


class GeminiStreamParser(StreamParser):
    """Parser of Gemini CLI ``stream-json`` (0.61.0): ``init``, ``message``,
    ``tool_use``, ``tool_result``, ``error``, ``result``."""

    def __init__(self, emit: Emit) -> None:
        super().__init__(emit, "gemini")
        self.result: dict[str, Any] | None = None
        self.pending: list[str] = []
        self.text_parts: list[str] = []
        self.tools: dict[str, dict[str, Any]] = {}

    def on_event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "message":
            if obj.get("role") == "assistant":
                self.pending.append(as_str(obj.get("content")))
            return
        self.flush()
        if kind == "init":
            self.start_session(obj.get("session_id"), model=obj.get("model"))
        elif kind == "tool_use":
            tool_id = str(obj.get("tool_id") or "")
            params = obj.get("parameters") or {}
            self.tools[tool_id] = {"name": obj.get("tool_name"), "params": params}
            self.emit(
                "tool_use", {"tool": obj.get("tool_name"), "tool_id": tool_id, "input": params}
            )
        elif kind == "tool_result":
            self._tool_result(obj)
        elif kind == "error":
            self.emit(
                "error",
                {
                    "message": as_str(obj.get("message")),
                    "provider_code": as_str(obj.get("severity")) or "warning",
                    "fatal": False,
                },
            )
        elif kind == "result":
            self.result = obj
            self.terminal_seen = True
        else:
            self.keep_unknown(obj)

    def flush(self) -> None:
        """Emit buffered assistant deltas as one ``assistant_text``."""
        if not self.pending:
            return
        text = "".join(self.pending)
        self.pending.clear()
        if text:
            self.text_parts.append(text)
            self.emit("assistant_text", {"text": text})

    def _tool_result(self, obj: dict[str, Any]) -> None:
        tool_id = str(obj.get("tool_id") or "")
        error = obj.get("error")
        is_error = obj.get("status") != "success"
        raw_output = obj.get("output")
        if not raw_output and isinstance(error, dict):
            raw_output = error.get("message")
        output = as_str(raw_output)
        tool = self.tools.get(tool_id, {})
        self.emit(
            "tool_result",
            {
                "tool_id": tool_id,
                "tool": tool.get("name"),
                "output": output[:TOOL_OUTPUT_CAP],
                "is_error": is_error,
            },
        )
        change = WRITE_TOOLS.get(str(tool.get("name")))
        path = (tool.get("params") or {}).get("file_path")
        if change and not is_error and isinstance(path, str):
            self.emit("file_change", {"path": path, "change": change})

    def usage(self) -> Usage:
        """Usage from ``result.stats`` (no cost is reported)."""
        stats = (self.result or {}).get("stats") or {}
        cached = as_int(stats.get("cached"))
        uncached = stats.get("input")
        return Usage(
            input_tokens=as_int(uncached)
            if uncached is not None
            else as_int(stats.get("input_tokens")) - cached,
            output_tokens=as_int(stats.get("output_tokens")),
            cached_tokens=cached,
        )

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:
        self.flush()
        text = "".join(self.text_parts)
        usage = self.usage()
        result = self.result
        if result is not None and result.get("status") == "success" and exit_code == 0:
            return Outcome(ok=True, text=text, usage=usage)
        if result is None and exit_code == 0:
            failure = envelope_for(
                "protocol_error",
                "gemini exited without a result event",
                provider_code="no_result",
            )
            return Outcome(ok=False, text=text, usage=usage, failure=failure)
        error = (result or {}).get("error") or {}
        message = as_str(error.get("message")) if isinstance(error, dict) else as_str(error)
        google = _GOOGLE_STATUS.search(message)
        etype = error.get("type") if isinstance(error, dict) else None
        signals = Signals(
            message=message or _stderr_line(stderr) or f"gemini exited with {exit_code}",
            error_type=google.group(1) if google else (etype if etype != "unknown" else None),
            subtype=as_str((result or {}).get("status")) or None,
            exit_code=exit_code,
            stderr=stderr if not message else "",
            raw={"error_type": etype},
        )
        return Outcome(ok=False, text=text, usage=usage, failure=classify("gemini", signals))


def _stderr_line(stderr: str) -> str:
    for line in stderr.splitlines():
        line = line.strip()
        if line and not line.startswith(("Warning:", "YOLO mode", "Ripgrep", "at ")):
            return line
    return ""


class GeminiProvider(CliProvider):
    """The ``gemini`` provider (Google Gemini CLI)."""

    name = "gemini"
    cli = "gemini"
    install = "npm install -g @google/gemini-cli"

    options = OPTIONS
    unsupported = UNSUPPORTED

    def launch(self, request: SessionRequest, resume_id: str | None, message: str) -> Launch:
        """Build the argv for a start or an exact resume (prompt in ``-p``)."""
        argv: list[str] = [cli_binary(request, self.cli), "-o", "stream-json"]
        if request.model:
            argv += ["-m", request.model]
        argv += PERMISSION_FLAGS[request.permission_mode]
        for tool in request.allowed_tools:
            argv += ["--allowed-tools", tool]
        if request.extra_dirs:
            argv += ["--include-directories", ",".join(str(d) for d in request.extra_dirs)]
        if resume_id:
            argv += ["--resume", resume_id]
        argv += extra_args(request)
        argv += ["-p", message]
        env: dict[str, str] = {}
        if request.provider_options.get("trust_workspace", True):
            env["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
        return Launch(argv=tuple(argv), env_extra=env)

    def make_parser(self, emit: Emit) -> StreamParser:
        return GeminiStreamParser(emit)


def make_provider() -> GeminiProvider:
    """Registry entry point."""
    return GeminiProvider()
