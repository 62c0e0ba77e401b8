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
* **Session isolation**: ``--setting-sources project,local`` by default, so the
  user's own ``~/.claude/settings.json`` (its hooks, enabled plugins,
  permission rules, environment) stays out of runs; the packet's
  ``.claude/settings.json`` and ``settings.local.json`` still apply, and the
  login is not a setting. Both captured versions take the flag (``claude
  --help`` of 2.1.197 and 2.1.332: ``--setting-sources <sources>``,
  ``user, project, local``; copies in ``tests/data/agent-cli/claude_help``).
  ``claude_opts.setting_sources`` overrides it: a list (or comma text) of
  ``user``, ``project``, ``local``, or ``false`` to leave the flag out (the
  CLI then loads all three).
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
* **Stream** parsing and classification: :mod:`.claude_stream`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..errors import UserError
from ._cli import CliProvider, Launch
from ._cli_options import cli_binary, extra_args, is_root
from ._stream import Emit, StreamParser
from .base import SessionRequest
from .claude_stream import ClaudeStreamParser

__all__ = ["ClaudeProvider", "ClaudeStreamParser", "make_provider"]

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
    "setting_sources": "`--setting-sources LIST` (default `project,local`: the user's own "
    "`~/.claude` settings -- hooks, plugins, permissions -- stay out of runs); a list or comma "
    "text of user, project, local; `false` leaves the flag out (the CLI loads all three)",
}
SETTING_SOURCES = ("user", "project", "local")
DEFAULT_SETTING_SOURCES = ("project", "local")
REFUSED: dict[str, str] = {
    "anthropic_auth_token": "a secret does not belong in a packet file; export "
    "ANTHROPIC_AUTH_TOKEN where the runner starts, the agent inherits it",
    "external_model_overrides": "it edits the reference's shared model registry, which this "
    "runner does not have: name the model with `model`",
}
PERMISSION_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "auto": ("--permission-mode", "acceptEdits"),
    "bypass": ("--dangerously-skip-permissions",),
    "plan": ("--permission-mode", "plan"),
}


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
        setting_sources(opts)
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
        sources = setting_sources(opts)
        if sources is not None:
            argv += ["--setting-sources", ",".join(sources)]
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


def setting_sources(opts: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The ``--setting-sources`` of ``claude_opts.setting_sources`` (default
    :data:`DEFAULT_SETTING_SOURCES`); ``None``: leave the flag out (``false``).

    Raises:
        UserError: not ``false``, a list or a comma text of :data:`SETTING_SOURCES`.
    """
    value = opts.get("setting_sources", DEFAULT_SETTING_SOURCES)
    if value is False:
        return None
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, list | tuple) and all(v in SETTING_SOURCES for v in value):
        return tuple(dict.fromkeys(value))
    raise UserError(
        f"must be some of {', '.join(SETTING_SOURCES)} (got {value!r})",
        key="claude_opts.setting_sources",
        fix="e.g. setting_sources: [project, local], or false to load all of them",
    )


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
