"""``codex exec --json`` JSONL, parsed into canonical events.

Stream format followed: Codex CLI **0.171.0**, ``codex exec --json``, as
captured against a local Responses-API mock in ``../shared/agent-cli/codex``
(copies in ``tests/data/agent-cli/codex``). How the adapter launches the CLI
is :mod:`.codex`.

* **Records**: ``thread.started`` (the session id), ``item.started`` /
  ``item.updated`` / ``item.completed`` (one handler per item type:
  messages, reasoning, commands, file changes, warnings, MCP / web / todo
  tools), ``turn.completed`` / ``turn.failed`` (final), top-level ``error``.
* **Usage**: ``turn.completed.usage`` sums every request of the turn and is
  cumulative over a resumed thread; the provider remembers the last total
  per thread (in memory, :class:`~._stream.UsageLedger`) and reports the
  delta. Codex reports no cost.
* **Non-fatal noise**: top-level ``error`` events ``Reconnecting... N/5``
  and ``item.type=error`` warnings are shown as non-fatal ``error`` events;
  only ``turn.failed`` (or a non-zero exit) fails the session.
* **Usage windows** (:mod:`.usage`): Codex 0.171.0 prints its ``token_count``
  events (``rate_limits.primary`` / ``secondary``, from the server's
  ``x-codex-*`` headers) only to the session's rollout file
  (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*-<thread id>.jsonl``, captured in
  ``tests/data/usage/codex-0.171.0``), so when the session ends the parser
  reads the last ``token_count`` there; a ``token_count`` record on stdout (the
  shape older ``exec --json`` printed, from the protocol source) is read too.
  A ``provider_rate_limit`` refusal whose window is at 100 % carries that
  window, reset time included; else the refusal's text is parsed (``try
  again at 12:51 PM`` is the CLI's local time: the agent's ``TZ``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ._stream import Emit, Outcome, StreamParser, UsageLedger, as_int, as_str
from .base import Usage
from .classify import Signals, classify
from .failure import FailureEnvelope, envelope_for
from .usage import refusing
from .usage_events import codex_windows

TOOL_OUTPUT_CAP = 100_000
ROLLOUT_TAIL_BYTES = 256 * 1024
"""How much of a rollout file's end is read for its last ``token_count``."""
CHANGE_KINDS = {"add": "create", "update": "modify", "delete": "delete"}


class CodexStreamParser(StreamParser):
    """Parser of ``codex exec --json`` JSONL (0.171.0).

    Args:
        emit: canonical event receiver.
        ledger: per-thread cumulative usage seen so far (shared with the
            provider) so resumed threads report deltas.
        codex_home: the CLI's ``CODEX_HOME`` (its session rollouts are read for
            ``token_count`` events); ``None``: none is read.
        local_tz: the agent's ``TZ``, the zone of the clock times Codex prints.
    """

    def __init__(
        self,
        emit: Emit,
        ledger: UsageLedger,
        *,
        codex_home: Path | None = None,
        local_tz: str | None = None,
    ) -> None:
        super().__init__(emit, "codex")
        self.ledger = ledger
        self.codex_home = codex_home
        self.local_tz = local_tz
        self.completed: dict[str, Any] | None = None
        self.failed: dict[str, Any] | None = None
        self.last_error = ""
        self.reconnects = 0
        self.last_text = ""
        self.started_items: set[str] = set()

    def on_event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "thread.started":
            self.start_session(obj.get("thread_id"))
        elif kind in ("item.started", "item.updated", "item.completed"):
            item = obj.get("item")
            if isinstance(item, dict):
                self._item(item, done=kind == "item.completed")
        elif kind == "turn.completed":
            self.completed = obj
            self.terminal_seen = True
        elif kind == "turn.failed":
            self.failed = obj
            self.terminal_seen = True
        elif kind == "error":
            self._error(as_str(obj.get("message")))
        elif kind == "token_count" or _token_count(obj) is not None:
            self._token_count(_token_count(obj) or obj)
        elif kind != "turn.started":
            self.keep_unknown(obj)

    def _token_count(self, event: Mapping[str, Any]) -> None:
        windows = codex_windows(event.get("rate_limits"), self.provider)
        if windows:
            self.note_windows(windows)

    def read_rollout(self) -> None:
        """Read the usage windows of this thread's last ``token_count`` in its rollout
        file (the tail only; a missing or unreadable file is no window)."""
        if self.codex_home is None or not self.session_id:
            return
        found = sorted(
            (self.codex_home / "sessions").glob(f"*/*/*/rollout-*{self.session_id}.jsonl")
        )
        if not found:
            return
        try:
            with found[-1].open("rb") as fh:
                fh.seek(0, 2)
                fh.seek(max(0, fh.tell() - ROLLOUT_TAIL_BYTES))
                tail = fh.read().decode("utf-8", "replace")
        except OSError:
            return
        for line in reversed(tail.splitlines()):
            if '"token_count"' not in line:
                continue
            try:
                payload = _token_count(json.loads(line))
            except ValueError:
                continue
            if payload is not None and payload.get("rate_limits"):
                self._token_count(payload)
                return

    def _error(self, message: str) -> None:
        transient = message.startswith("Reconnecting")
        if transient:
            self.reconnects += 1
        else:
            self.last_error = message
        if transient:
            self.emit(
                "error",
                {"message": message, "provider_code": "reconnecting", "fatal": False},
            )

    def _item(self, item: dict[str, Any], *, done: bool) -> None:
        itype = item.get("type")
        handler = _ITEMS.get(itype) if isinstance(itype, str) else None
        if handler is None:
            self.keep_unknown(item)
        else:
            handler(self, item, str(item.get("id") or ""), done)

    def _agent_message(self, item: dict[str, Any], item_id: str, done: bool) -> None:
        if done:
            text = as_str(item.get("text"))
            self.last_text = text or self.last_text
            if text:
                self.emit("assistant_text", {"text": text})

    def _reasoning(self, item: dict[str, Any], item_id: str, done: bool) -> None:
        if done and item.get("text"):
            self.emit("thinking", {"text": as_str(item.get("text"))})

    def _command(self, item: dict[str, Any], item_id: str, done: bool) -> None:
        self._tool_started(item_id, "shell", {"command": item.get("command")})
        if not done:
            return
        code = item.get("exit_code")
        self.emit(
            "tool_result",
            {
                "tool_id": item_id,
                "tool": "shell",
                "output": as_str(item.get("aggregated_output"))[:TOOL_OUTPUT_CAP],
                "exit_code": code,
                "is_error": item.get("status") == "failed" or (isinstance(code, int) and code != 0),
            },
        )

    def _file_change(self, item: dict[str, Any], item_id: str, done: bool) -> None:
        changes = item.get("changes") or []
        self._tool_started(item_id, "apply_patch", {"changes": changes})
        if not done:
            return
        failed = item.get("status") == "failed"
        self.emit(
            "tool_result",
            {"tool_id": item_id, "tool": "apply_patch", "is_error": failed, "output": ""},
        )
        if failed:
            return
        for change in changes:
            if isinstance(change, dict) and change.get("path"):
                kind = CHANGE_KINDS.get(str(change.get("kind")), "modify")
                self.emit("file_change", {"path": change["path"], "change": kind})

    def _warning(self, item: dict[str, Any], item_id: str, done: bool) -> None:
        if done:
            message = as_str(item.get("message"))
            self.emit("error", {"message": message, "provider_code": "warning", "fatal": False})

    def _other_tool(self, item: dict[str, Any], item_id: str, done: bool) -> None:
        name = str(item.get("tool") or item.get("type"))
        self._tool_started(item_id, name, {k: v for k, v in item.items() if k != "result"})
        if done:
            error = item.get("error")
            self.emit(
                "tool_result",
                {
                    "tool_id": item_id,
                    "tool": name,
                    "output": as_str(item.get("result") or error)[:TOOL_OUTPUT_CAP],
                    "is_error": bool(error) or item.get("status") == "failed",
                },
            )

    def _tool_started(self, item_id: str, tool: str, data: Mapping[str, Any]) -> None:
        if item_id in self.started_items:
            return
        self.started_items.add(item_id)
        self.emit("tool_use", {"tool": tool, "tool_id": item_id, "input": dict(data)})

    # -- outcome -----------------------------------------------------------------------

    def usage(self) -> Usage:
        """This process's usage: the turn total minus what this thread reported before."""
        if self.completed is None:
            return Usage()
        raw = self.completed.get("usage") or {}
        cached = as_int(raw.get("cached_input_tokens"))
        total = Usage(
            input_tokens=as_int(raw.get("input_tokens")) - cached,
            output_tokens=as_int(raw.get("output_tokens")),
            cached_tokens=cached,
        )
        return self.ledger.delta(self.session_id, total)

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:
        self.read_rollout()
        usage = self.usage()
        if self.completed is not None and self.failed is None and exit_code == 0:
            return Outcome(ok=True, text=self.last_text, usage=usage)
        if self.failed is not None:
            error = self.failed.get("error") or {}
            message = as_str(error.get("message") if isinstance(error, dict) else error)
        else:
            message = self.last_error
        if not message and exit_code == 0:
            failure = envelope_for(
                "protocol_error",
                "codex exited without turn.completed",
                provider_code="no_result",
                raw={"lines": self.lines},
            )
            return Outcome(ok=False, text=self.last_text, usage=usage, failure=failure)
        signals = Signals(
            message=message or _stderr_error(stderr) or f"codex exited with {exit_code}",
            exit_code=exit_code,
            stderr=stderr if not message else "",
            raw={"reconnects": self.reconnects, "turn_failed": self.failed is not None},
            local_tz=self.local_tz,
        )
        return Outcome(ok=False, text=self.last_text, usage=usage, failure=self._classify(signals))

    def _classify(self, signals: Signals) -> FailureEnvelope:
        """Classify; a rate-limit refusal gets the exhausted window Codex recorded."""
        failure = classify(self.provider, signals)
        window = refusing(self.usage_windows.values())
        if failure.failure_class == "provider_rate_limit" and window is not None:
            failure = classify(self.provider, replace(signals, usage=window))
        return failure


_ItemHandler = Callable[[CodexStreamParser, dict[str, Any], str, bool], None]
_ITEMS: dict[str, _ItemHandler] = {
    "agent_message": CodexStreamParser._agent_message,
    "reasoning": CodexStreamParser._reasoning,
    "command_execution": CodexStreamParser._command,
    "file_change": CodexStreamParser._file_change,
    "error": CodexStreamParser._warning,
    "mcp_tool_call": CodexStreamParser._other_tool,
    "web_search": CodexStreamParser._other_tool,
    "todo_list": CodexStreamParser._other_tool,
}
"""The handler of each ``item.type`` (an item of another type is kept raw)."""


def _token_count(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``token_count`` payload of a rollout line (``{"type": "event_msg",
    "payload": {...}}``) or of an older stdout record (``{"msg": {...}}``)."""
    for key in ("payload", "msg"):
        inner = obj.get(key)
        if isinstance(inner, Mapping) and inner.get("type") == "token_count":
            return inner
    return None


def _stderr_error(stderr: str) -> str:
    """The ``Error: ...`` line of a Rust CLI's stderr, else its first meaningful line."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for line in lines:
        if line.startswith("Error:"):
            return line
    for line in lines:
        if not line.startswith(("WARNING:", "Reading additional input")):
            return line
    return ""
