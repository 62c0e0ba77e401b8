"""Claude Code's ``stream-json`` output, parsed into canonical events (also Amp's base).

Stream format followed: Claude Code **2.1.332** (also checked against 2.1.197),
``claude -p --output-format stream-json --verbose``, as captured against a
local Anthropic mock in ``../shared/agent-cli/claude`` (copies in
``tests/data/agent-cli/claude``). How the adapter launches the CLI is
:mod:`.claude`.

* **Records**: ``system`` (``init`` starts the session; ``api_retry`` is kept for
  the failure's detail; ``permission_denied`` is a non-fatal ``approval_denied``
  error event), ``assistant`` (text, thinking, tool_use blocks; a synthetic
  API-error message is kept for classification), ``user`` (tool results, and
  the file a file tool changed, with its patch: :func:`tool_patch`),
  ``stream_event`` (partial messages: ignored, the full ``assistant`` message
  follows), ``rate_limit_event`` (the plan's usage windows:
  :func:`.usage_events.claude_windows`, emitted as ``usage_window`` events),
  ``result`` (final).
* **Classification** reads the final ``result``: ``subtype`` stays
  ``success`` on API errors, so ``is_error``, ``api_error_status``,
  ``api_error_type`` / ``api_error`` and ``terminal_reason`` decide (see
  :mod:`.classify`). A usage-limit refusal (2.1.332: ``api_error:
  "usage_limit_reached"`` with ``api_error_params.rate_limit_info``, after a
  ``rejected`` ``rate_limit_event``) carries its window to the classifier
  (``Signals.usage``), so the reset time comes from the record, not the text.
"""

from __future__ import annotations

from typing import Any

from ._stream import Emit, Outcome, StreamParser, as_int, as_str
from .base import Usage
from .classify import Signals, classify
from .failure import envelope_for
from .usage import UsageWindow, refusing
from .usage_events import claude_windows

TOOL_OUTPUT_CAP = 100_000
PATCH_CAP = 100_000
FILE_TOOLS = {"create": "create", "update": "modify", "delete": "delete"}


class ClaudeStreamParser(StreamParser):
    """Parser of Claude-Code-style ``stream-json`` (also the base of Amp's).

    Record types: ``system`` (``init``, ``api_retry``, ``permission_denied``,
    ``status``), ``assistant``, ``user``, ``stream_event`` (partial messages,
    ignored: the full ``assistant`` message follows), ``result``.
    """

    def __init__(self, emit: Emit, provider: str = "claude") -> None:
        super().__init__(emit, provider)
        self.result: dict[str, Any] | None = None
        self.last_text = ""
        self.synthetic_error: dict[str, Any] | None = None
        self.last_retry: dict[str, Any] | None = None
        self.denials = 0
        self.tool_names: dict[str, str] = {}

    def on_event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "assistant":
            self._assistant(obj)
        elif kind == "user":
            self._user(obj)
        elif kind == "system":
            self._system(obj)
        elif kind == "result":
            self.result = obj
            self.terminal_seen = True
            self.start_session(obj.get("session_id"))
        elif kind == "rate_limit_event":
            windows = claude_windows(obj.get("rate_limit_info"), self.provider)
            if windows:
                self.note_windows(windows)
            else:
                self.keep_unknown(obj)
        elif kind != "stream_event":
            self.keep_unknown(obj)

    def _system(self, obj: dict[str, Any]) -> None:
        subtype = obj.get("subtype")
        if subtype == "init":
            self.start_session(
                obj.get("session_id"),
                model=obj.get("model"),
                cwd=obj.get("cwd"),
                cli_version=obj.get("claude_code_version"),
                permission_mode=obj.get("permissionMode"),
            )
        elif subtype == "api_retry":
            self.last_retry = {
                k: obj.get(k)
                for k in ("attempt", "max_retries", "retry_delay_ms", "error_status", "error")
            }
        elif subtype == "permission_denied":
            self.denials += 1
            self.emit(
                "error",
                {
                    "class": "approval_denied",
                    "message": as_str(obj.get("message")) or "a tool call was denied",
                    "provider_code": "permission_denied",
                    "tool": obj.get("tool_name"),
                    "tool_id": obj.get("tool_use_id"),
                    "fatal": False,
                },
            )
        elif subtype != "status":
            self.keep_unknown(obj)

    def _assistant(self, obj: dict[str, Any]) -> None:
        self.start_session(obj.get("session_id"))
        message = obj.get("message") or {}
        if obj.get("is_api_error_message") or message.get("model") == "<synthetic>":
            self.synthetic_error = {
                "error": obj.get("error"),
                "api_error": obj.get("api_error"),
                "api_error_status": obj.get("api_error_status"),
                "api_error_type": obj.get("api_error_type"),
                "api_error_params": obj.get("api_error_params"),
                "text": as_str(message.get("content")),
            }
            return
        for block in message.get("content") or ():
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                text = as_str(block.get("text"))
                if text:
                    self.last_text = text
                    self.emit("assistant_text", {"text": text})
            elif btype == "thinking":
                text = as_str(block.get("thinking"))
                if text:
                    self.emit("thinking", {"text": text})
            elif btype == "tool_use":
                tool_id = block.get("id")
                name = str(block.get("name") or "")
                if isinstance(tool_id, str):
                    self.tool_names[tool_id] = name
                data = {"tool": name, "tool_id": tool_id, "input": block.get("input") or {}}
                if obj.get("parent_tool_use_id"):
                    data["parent_tool_id"] = obj["parent_tool_use_id"]
                self.emit("tool_use", data)

    def _user(self, obj: dict[str, Any]) -> None:
        message = obj.get("message") or {}
        content = message.get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            output = as_str(block.get("content"))
            if len(output) > TOOL_OUTPUT_CAP:
                output = output[:TOOL_OUTPUT_CAP] + "\n[... truncated]"
            tool_id = block.get("tool_use_id")
            self.emit(
                "tool_result",
                {
                    "tool_id": tool_id,
                    "tool": self.tool_names.get(str(tool_id)),
                    "output": output,
                    "is_error": bool(block.get("is_error")),
                },
            )
        detail = obj.get("tool_use_result")
        if isinstance(detail, dict):
            hunks = detail.get("structuredPatch")
            change = FILE_TOOLS.get(str(detail.get("type")))
            if change is None and "type" not in detail and isinstance(hunks, list):
                change = "modify"  # Edit / MultiEdit results carry no ``type``
            path = detail.get("filePath")
            if change and isinstance(path, str):
                data: dict[str, Any] = {"path": path, "change": change}
                data.update(tool_patch(path, change, detail))
                self.emit("file_change", data)

    # -- outcome -----------------------------------------------------------------------

    def usage(self) -> Usage:
        """Usage and cost from the ``result`` record."""
        result = self.result or {}
        usage = result.get("usage") or {}
        cost = result.get("total_cost_usd")
        return Usage(
            input_tokens=as_int(usage.get("input_tokens"))
            + as_int(usage.get("cache_creation_input_tokens")),
            output_tokens=as_int(usage.get("output_tokens")),
            cached_tokens=as_int(usage.get("cache_read_input_tokens")),
            cost_usd=float(cost) if isinstance(cost, (int, float)) else None,
        )

    def outcome(self, exit_code: int | None, stderr: str) -> Outcome:
        result = self.result
        if result is None:
            return self._no_result(exit_code, stderr)
        text = as_str(result.get("result")) or self.last_text
        usage = self.usage()
        subtype = str(result.get("subtype") or "")
        if not result.get("is_error") and subtype == "success" and exit_code == 0:
            return Outcome(ok=True, text=text, usage=usage)
        errors = result.get("errors")
        message = as_str(result.get("result")) or as_str(result.get("error"))
        if not message and isinstance(errors, list):
            message = "; ".join(as_str(e) for e in errors)
        synthetic = self.synthetic_error or {}
        status = result.get("api_error_status", synthetic.get("api_error_status"))
        error_type = (
            result.get("api_error_type")
            or result.get("api_error")
            or synthetic.get("api_error_type")
            or synthetic.get("api_error")
            or synthetic.get("error")
        )
        signals = Signals(
            message=message or (stderr if exit_code else "the session reported an error"),
            http_status=status if isinstance(status, int) else None,
            error_type=str(error_type) if error_type else None,
            subtype=subtype if subtype and subtype != "success" else None,
            terminal_reason=result.get("terminal_reason"),
            exit_code=exit_code,
            stderr=stderr,
            usage=self._refusing_window(status, result),
            raw={
                "subtype": subtype,
                "is_error": result.get("is_error"),
                "terminal_reason": result.get("terminal_reason"),
                "api_error_status": status,
                "api_error_type": error_type,
                "num_turns": result.get("num_turns"),
                "last_api_retry": self.last_retry,
                "permission_denials": len(result.get("permission_denials") or ()),
            },
        )
        return Outcome(ok=False, text=text, usage=usage, failure=classify(self.provider, signals))

    def _refusing_window(self, status: Any, result: dict[str, Any]) -> UsageWindow | None:
        """The usage window that refused this session: the refused request's own
        ``rate_limit_info``, else a ``rejected`` ``rate_limit_event`` seen before
        a 429; ``None`` for any other failure."""
        synthetic = self.synthetic_error or {}
        params = synthetic.get("api_error_params")
        info = params.get("rate_limit_info") if isinstance(params, dict) else None
        own = claude_windows(info, self.provider)
        window = refusing(own)
        if window is not None:
            seen = self.usage_windows.get(window.kind)  # the event also says the utilization
            return seen if seen is not None and seen.exhausted else window
        refused = status == 429 or "usage_limit" in str(result.get("api_error") or "")
        return refusing(self.usage_windows.values()) if refused else None

    def _no_result(self, exit_code: int | None, stderr: str) -> Outcome:
        noise = "\n".join(self.noise)
        if exit_code == 0:
            failure = envelope_for(
                "protocol_error",
                f"{self.provider} exited without a final result record",
                provider_code="no_result",
                raw={"stdout_noise": noise[-2000:], "lines": self.lines},
            )
            return Outcome(ok=False, text=self.last_text, failure=failure)
        signals = Signals(
            message=stderr.strip() or noise or f"{self.provider} exited with {exit_code}",
            exit_code=exit_code,
            raw={"stdout_noise": noise[-2000:], "lines": self.lines},
        )
        return Outcome(ok=False, text=self.last_text, failure=classify(self.provider, signals))


def tool_patch(path: str, change: str, detail: dict[str, Any]) -> dict[str, Any]:
    """``patch``/``patch_source``/``added``/``removed`` from a ``tool_use_result``.

    The tool's own ``structuredPatch`` hunks are written out as unified-diff
    text (jsdiff's layout: an empty range starts one line lower). A created
    file whose result has no hunks (2.1.332 sends ``structuredPatch: []`` and
    the file's exact ``content``) becomes an all-added hunk of that content.
    Anything else -- no hunks, malformed hunks, no content -- gives no patch:
    none is invented. Text past :data:`PATCH_CAP` characters is cut at a line
    with a marker; the counts always cover the whole patch.
    """
    hunks = detail.get("structuredPatch")
    lines: list[str] | None = None
    if isinstance(hunks, list) and hunks:
        lines = _hunk_lines(hunks)
    elif change == "create" and isinstance(detail.get("content"), str):
        content: str = detail["content"]
        body = content.split("\n")
        if body[-1] == "":
            body.pop()
        lines = [f"@@ -0,0 +1,{len(body)} @@", *("+" + line for line in body)] if body else []
        if content and not content.endswith("\n"):
            lines.append("\\ No newline at end of file")
    elif isinstance(hunks, list) and change != "create":
        lines = []  # the tool reported an edit that changed nothing
    if lines is None:
        return {}
    added = removed = 0
    for line in lines:
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    old = "/dev/null" if change == "create" else path
    head = [f"--- {old}", f"+++ {path}"]
    return {
        "patch": _capped("\n".join(head + lines)),
        "patch_source": "tool",
        "added": added,
        "removed": removed,
    }


def _hunk_lines(hunks: list[Any]) -> list[str] | None:
    out: list[str] = []
    for hunk in hunks:
        if not isinstance(hunk, dict) or not isinstance(hunk.get("lines"), list):
            return None
        ranges = []
        for start_key, count_key in (("oldStart", "oldLines"), ("newStart", "newLines")):
            start, count = hunk.get(start_key), hunk.get(count_key)
            if not isinstance(start, int) or not isinstance(count, int):
                return None
            ranges.append(f"{start - 1 if count == 0 else start},{count}")
        out.append(f"@@ -{ranges[0]} +{ranges[1]} @@")
        out.extend(str(line) for line in hunk["lines"])
    return out


def _capped(patch: str) -> str:
    if len(patch) <= PATCH_CAP:
        return patch
    cut = patch.rfind("\n", 0, PATCH_CAP)
    kept = patch[: cut if cut > 0 else PATCH_CAP]
    dropped = patch.count("\n", len(kept)) + (0 if cut > 0 else 1)
    return f"{kept}\n[... {dropped} more patch line(s) cut by prompt-runner]"
