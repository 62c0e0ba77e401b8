"""Claude Code adapter: drives the ``claude`` CLI's ``stream-json`` output.

Stream format followed: Claude Code **2.1.332** (also checked against 2.1.197),
``claude -p --output-format stream-json --verbose``, as captured against a
local Anthropic mock in ``../shared/agent-cli/claude`` (copies in
``tests/data/agent-cli/claude``).

Decisions:

* **CLI stream, not the SDK.** ``claude-agent-sdk`` bundles the very same
  2.1.332 binary (a 178 MB wheel) and was never run here; the CLI stream is
  what was captured, resumes by id (``--resume <id>``) and is interrupted by
  SIGINT to its process group. No SDK dependency.
* **Prompt on stdin** (``claude -p`` with no positional prompt reads stdin), so
  a long prompt never meets ``ARG_MAX`` and a prompt starting with ``-`` is
  never taken for a flag.
* **Permission modes**: ``default`` -> no flag (the CLI's default; headless,
  anything needing approval is denied and reported as ``system/permission_denied``);
  ``auto`` -> ``--permission-mode acceptEdits`` (file edits allowed, shell
  still gated; add shell tools via ``allowed_tools``); ``bypass`` ->
  ``--dangerously-skip-permissions``; ``plan`` -> ``--permission-mode plan``.
* **Root**: Claude Code refuses ``--dangerously-skip-permissions`` under uid 0
  unless ``IS_SANDBOX=1`` is set (its documented escape hatch for sandboxes /
  containers; the check is ``getuid()===0 && IS_SANDBOX!=="1"``). When the
  runner is root and the mode is ``bypass`` the adapter sets ``IS_SANDBOX=1``
  in the child's environment only. Running the agent as a non-root user is the
  alternative; it is the operator's choice, not done here.
* **Retries**: ``CLAUDE_CODE_MAX_RETRIES`` defaults to 2 (the CLI's own 10
  retries take about 3 minutes on a persistent 529); the runner's recovery
  policy owns retries. ``claude_opts.max_retries`` overrides it.
* **Other mappings**: ``model`` -> ``--model``; ``reasoning_effort`` ->
  ``--effort`` (low|medium|high|xhigh|max); ``allowed_tools`` ->
  ``--allowedTools``; ``system_prompt`` / ``append_system_prompt`` ->
  ``--system-prompt`` / ``--append-system-prompt``; ``max_turns`` ->
  ``--max-turns``; ``extra_dirs`` -> ``--add-dir`` each;
  ``claude_opts.max_cost_usd`` -> ``--max-budget-usd`` (exceeding it is the
  terminal ``guardrail_blocked`` failure ``error_max_budget_usd``). Every
  ``claude_opts`` key is in :data:`OPTIONS` (how it is honoured, checked
  against ``claude --help`` of 2.1.332) or :data:`REFUSED` (why not);
  ``include_thinking: false`` drops ``thinking`` events from the stream, as
  Claude Code has no flag to leave them out.
* **Classification** reads the final ``result``: ``subtype`` stays
  ``success`` on API errors, so ``is_error``, ``api_error_status``,
  ``api_error_type`` / ``api_error`` and ``terminal_reason`` decide (see
  :mod:`.classify`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import UserError
from ._cli import CliProvider, Launch
from ._cli_options import cli_binary, extra_args, is_root
from ._stream import Emit, Outcome, StreamParser, as_int, as_str
from .base import SessionRequest, Usage
from .classify import Signals, classify
from .failure import envelope_for

EFFORTS = ("low", "medium", "high", "xhigh", "max")
OPTIONS: dict[str, str] = {
    "max_cost_usd": "`--max-budget-usd` (what is left of the prompt's cost budget)",
    "max_retries": "`CLAUDE_CODE_MAX_RETRIES` in the agent's environment (default 2)",
    "include_partial_messages": "`--include-partial-messages`",
    "settings": "`--settings FILE-OR-JSON`",
    "fallback_model": "`--fallback-model MODEL`",
    "include_thinking": "`true` (the default): Claude's thinking blocks become `thinking` "
    "events (`--thinking show` prints them); `false` leaves them out of the session's "
    "stream. Claude Code has no flag for it: its stream-json always carries them",
    "anthropic_base_url": "`ANTHROPIC_BASE_URL` in the agent's environment",
    "output_schema": "`--json-schema JSON` (a mapping, sent inline as JSON, or a JSON text)",
    "completion_only": '`true`: `--tools ""` (no built-in tools, so no writes and nothing '
    "to approve)",
}
REFUSED: dict[str, str] = {
    "anthropic_auth_token": "a secret does not belong in a packet file; export "
    "ANTHROPIC_AUTH_TOKEN where the runner starts, the agent inherits it",
    "external_model_overrides": "it edits the reference's shared model registry, which this "
    "runner does not have: name the model with `model`",
}
TOOL_OUTPUT_CAP = 100_000
PATCH_CAP = 100_000
FILE_TOOLS = {"create": "create", "update": "modify", "delete": "delete"}
PERMISSION_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "auto": ("--permission-mode", "acceptEdits"),
    "bypass": ("--dangerously-skip-permissions",),
    "plan": ("--permission-mode", "plan"),
}


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


class ClaudeProvider(CliProvider):
    """The ``claude`` provider (Claude Code CLI)."""

    name = "claude"
    cli = "claude"
    install = "npm install -g @anthropic-ai/claude-code"

    options = OPTIONS
    refused = REFUSED
    efforts = EFFORTS

    def validate_options(self, request: SessionRequest) -> None:
        """Check mode, effort and ``claude_opts`` at plan time (raises UserError)."""
        super().validate_options(request)
        opts = request.provider_options
        _check_number(opts.get("max_cost_usd"), "max_cost_usd", positive=True)
        _check_number(opts.get("max_retries"), "max_retries", positive=False, integer=True)
        for key in ("include_thinking", "include_partial_messages", "completion_only"):
            if opts.get(key) is not None and not isinstance(opts[key], bool):
                raise UserError(
                    f"{key} must be true or false",
                    key=f"claude_opts.{key}",
                    fix=f"set {key}: true or {key}: false",
                )
        schema = opts.get("output_schema")
        if schema is not None:
            _schema_text(schema)
        if request.max_turns is not None and request.max_turns < 1:
            raise UserError(
                "max_turns must be at least 1", key="max_turns", fix="set it to 1 or more"
            )

    def launch(self, request: SessionRequest, resume_id: str | None, message: str) -> Launch:
        """Build the argv/env for a start (``resume_id=None``) or an exact resume."""
        opts = request.provider_options
        argv: list[str] = [cli_binary(request, self.cli), "-p", "--output-format", "stream-json"]
        argv.append("--verbose")
        if resume_id:
            argv += ["--resume", resume_id]
        if request.model:
            argv += ["--model", request.model]
        if request.reasoning_effort:
            argv += ["--effort", request.reasoning_effort]
        argv += PERMISSION_FLAGS[request.permission_mode]
        if request.system_prompt:
            argv += ["--system-prompt", request.system_prompt]
        if request.append_system_prompt:
            argv += ["--append-system-prompt", request.append_system_prompt]
        if request.max_turns is not None:
            argv += ["--max-turns", str(request.max_turns)]
        if opts.get("max_cost_usd") is not None:
            argv += ["--max-budget-usd", str(opts["max_cost_usd"])]
        if opts.get("fallback_model"):
            argv += ["--fallback-model", str(opts["fallback_model"])]
        if opts.get("settings"):
            argv += ["--settings", str(opts["settings"])]
        if opts.get("include_partial_messages"):
            argv.append("--include-partial-messages")
        if opts.get("output_schema") is not None:
            argv += ["--json-schema", _schema_text(opts["output_schema"])]
        if opts.get("completion_only"):
            argv += ["--tools", ""]
        for directory in request.extra_dirs:
            argv += ["--add-dir", str(directory)]
        argv += extra_args(request)
        if request.allowed_tools:
            # Variadic option: last, so it cannot swallow another argument.
            argv += ["--allowedTools", *request.allowed_tools]
        env = {
            "CLAUDE_CODE_MAX_RETRIES": str(opts.get("max_retries", 2)),
            "DISABLE_AUTOUPDATER": "1",
        }
        if opts.get("anthropic_base_url"):
            env["ANTHROPIC_BASE_URL"] = str(opts["anthropic_base_url"])
        if request.permission_mode == "bypass" and is_root():
            env["IS_SANDBOX"] = "1"
        drop = frozenset(("thinking",)) if opts.get("include_thinking") is False else frozenset()
        return Launch(argv=tuple(argv), stdin_text=message, env_extra=env, drop_events=drop)

    def make_parser(self, emit: Emit) -> StreamParser:
        return ClaudeStreamParser(emit, self.name)


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


def _schema_text(schema: Any) -> str:
    """``claude_opts.output_schema`` as the JSON text ``--json-schema`` takes.

    Raises:
        UserError: neither a mapping nor a JSON object text.
    """
    if isinstance(schema, Mapping):
        return json.dumps(schema, separators=(",", ":"))
    if isinstance(schema, str):
        try:
            parsed = json.loads(schema)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return schema
    raise UserError(
        "output_schema must be a JSON Schema: a mapping, or a JSON object as text",
        key="claude_opts.output_schema",
        fix='write it as a YAML mapping, e.g. {type: object, required: ["name"]}',
    )


def _check_number(value: Any, key: str, *, positive: bool, integer: bool = False) -> None:
    if value is None:
        return
    ok = isinstance(value, int if integer else (int, float)) and not isinstance(value, bool)
    if ok and (value > 0 if positive else value >= 0):
        return
    kind = "an integer" if integer else "a number"
    raise UserError(
        f"must be {kind} {'greater than 0' if positive else '>= 0'}",
        key=f"claude_opts.{key}",
        fix=f"set {key} to {kind}, e.g. {'2' if integer else '1.5'}",
    )


def make_provider() -> ClaudeProvider:
    """Registry entry point."""
    return ClaudeProvider()
