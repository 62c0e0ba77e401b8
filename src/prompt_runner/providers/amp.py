"""Amp adapter: drives ``amp --execute --stream-json`` (Claude-Code-compatible JSONL).

**Never run against a real binary.** Amp's backend is Sourcegraph's own
service, which cannot be mocked on this machine (``../shared/agent-cli``
README). The parser follows the stream as documented in
``OTHER-PROVIDERS.md`` section 1: the official ``@sourcegraph/amp-sdk``
``types.d.ts`` (version 0.1.0-20260126121723-gc94da34) and the verbatim
lines of ampcode.com/news/streaming-json; it is tested on those samples
(``tests/data/agent-cli/amp``).

Decisions:

* **CLI stream**, launched the way the official SDK does: ``amp
  [threads continue <T-id>] --execute --stream-json`` with the prompt on
  stdin. Resume is ``threads continue <T-id>`` with the exact thread id,
  never the id-less "most recent thread" form.
* **Permission modes**: ``default`` -> no flag; ``bypass`` ->
  ``--dangerously-allow-all``. Amp has no headless accept-edits or plan
  posture, so ``auto`` and ``plan`` fail at plan time.
* Amp chooses models through agent modes: ``amp_opts.mode`` -> ``--mode``;
  ``model`` and ``reasoning_effort`` fail at plan time, as do system prompts,
  max turns, allowed tools and extra directories (settings-file only).
  ``amp_opts.thinking`` adds ``--stream-json-thinking``;
  ``amp_opts.settings_file`` -> ``--settings-file``.
* **Usage** is per ``assistant`` message, counted once per ``message.id``
  (last report wins), falling back to ``result.usage``. Amp reports no cost.
* **Errors**: ``result`` with ``is_error`` and ``subtype``
  ``error_during_execution`` / ``error_max_turns`` (text in ``error``), else a
  non-zero exit with stderr; classified by :mod:`.classify` text rules.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ._cli import CliProvider, Launch
from ._cli_options import cli_binary, extra_args
from ._stream import Emit, StreamParser, as_int
from .base import SessionRequest, Usage
from .claude_stream import ClaudeStreamParser

OPTIONS: dict[str, str] = {
    "mode": "`--mode MODE` (Amp picks its model through agent modes)",
    "thinking": "`--stream-json-thinking` (thinking blocks in the stream)",
    "include_thinking": "the reference's name for `thinking`: `--stream-json-thinking`",
    "settings_file": "`--settings-file PATH`",
    "mcp_config": "`--mcp-config JSON-OR-PATH` (a mapping is sent as JSON)",
}
REFUSED: dict[str, str] = {
    "permissions": "Amp reads permission rules only from its settings (`amp.permissions`): "
    "put them in a settings file and name it with `settings_file`",
    "tools": "Amp's CLI has no tool allow-list flag: restrict tools with `amp.permissions` "
    "in a settings file named by `settings_file`",
}
FILE_TOOLS = {"create_file": "create", "edit_file": "modify", "undo_edit": "modify"}
PERMISSION_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "bypass": ("--dangerously-allow-all",),
}
UNSUPPORTED = {
    "model": "remove model for amp prompts and pick an agent mode with amp_opts.mode",
    "system_prompt": "remove system_prompt for amp prompts (use an Amp settings file)",
    "append_system_prompt": "remove append_system_prompt for amp prompts",
    "max_turns": "remove max_turns for amp prompts; bound them with timeout instead",
    "allowed_tools": "remove allowed_tools for amp prompts (use amp.permissions settings)",
    "extra_dirs": "use a single target repo for amp prompts",
}


class AmpStreamParser(ClaudeStreamParser):
    """Amp ``--stream-json``: Claude's record shapes, Amp's tools and usage."""

    def __init__(self, emit: Emit) -> None:
        super().__init__(emit, "amp")
        self.message_usage: dict[str, dict[str, Any]] = {}
        self.pending_files: dict[str, tuple[str, str]] = {}

    def on_event(self, obj: dict[str, Any]) -> None:
        kind = obj.get("type")
        if kind == "assistant":
            message = obj.get("message") or {}
            usage = message.get("usage")
            if isinstance(usage, dict):
                key = str(message.get("id") or f"anon-{len(self.message_usage)}")
                self.message_usage[key] = usage
            for block in message.get("content") or ():
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self._remember_file(block)
        elif kind == "user":
            self._file_results(obj)
        super().on_event(obj)

    def _remember_file(self, block: dict[str, Any]) -> None:
        change = FILE_TOOLS.get(str(block.get("name")))
        data = block.get("input") or {}
        path = data.get("path") or data.get("filePath") if isinstance(data, dict) else None
        if change and isinstance(path, str):
            self.pending_files[str(block.get("id"))] = (path, change)

    def _file_results(self, obj: dict[str, Any]) -> None:
        content = (obj.get("message") or {}).get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            pending = self.pending_files.pop(str(block.get("tool_use_id")), None)
            if pending and not block.get("is_error"):
                self.emit("file_change", {"path": pending[0], "change": pending[1]})

    def usage(self) -> Usage:
        """Sum of per-message usage (deduped by id), else ``result.usage``; no cost."""
        reports = list(self.message_usage.values())
        if not reports:
            fallback = (self.result or {}).get("usage")
            reports = [fallback] if isinstance(fallback, dict) else []
        return Usage(
            input_tokens=sum(
                as_int(u.get("input_tokens")) + as_int(u.get("cache_creation_input_tokens"))
                for u in reports
            ),
            output_tokens=sum(as_int(u.get("output_tokens")) for u in reports),
            cached_tokens=sum(as_int(u.get("cache_read_input_tokens")) for u in reports),
        )


class AmpProvider(CliProvider):
    """The ``amp`` provider (Sourcegraph Amp CLI)."""

    name = "amp"
    cli = "amp"
    install = "npm install -g @ampcode/cli"

    options = OPTIONS
    refused = REFUSED
    permission_modes = tuple(PERMISSION_FLAGS)
    unsupported = UNSUPPORTED

    def launch(self, request: SessionRequest, resume_id: str | None, message: str) -> Launch:
        """``amp [threads continue <id>] --execute --stream-json ...``, prompt on stdin."""
        opts = request.provider_options
        argv: list[str] = [cli_binary(request, self.cli)]
        if resume_id:
            argv += ["threads", "continue", resume_id]
        argv += ["--execute", "--stream-json"]
        if opts.get("thinking") or opts.get("include_thinking"):
            argv.append("--stream-json-thinking")
        argv += PERMISSION_FLAGS[request.permission_mode]
        if opts.get("mode"):
            argv += ["--mode", str(opts["mode"])]
        if opts.get("settings_file"):
            argv += ["--settings-file", str(opts["settings_file"])]
        mcp = opts.get("mcp_config")
        if mcp:
            argv += ["--mcp-config", json.dumps(mcp) if isinstance(mcp, Mapping) else str(mcp)]
        argv += extra_args(request)
        return Launch(argv=tuple(argv), stdin_text=message + "\n")

    def make_parser(self, emit: Emit) -> StreamParser:
        return AmpStreamParser(emit)


def make_provider() -> AmpProvider:
    """Registry entry point."""
    return AmpProvider()
