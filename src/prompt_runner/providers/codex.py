"""Codex CLI adapter: drives ``codex exec --json`` (JSONL events on stdout).

Stream format followed: Codex CLI **0.171.0**, ``codex exec --json``, as
captured against a local Responses-API mock in ``../shared/agent-cli/codex``
(copies in ``tests/data/agent-cli/codex``).

Decisions:

* **CLI stream, not the SDK.** ``openai-codex`` needs a 142 MB binary wheel
  and was never run here; ``codex exec --json`` was, and resumes by thread id
  (``codex exec ... resume <thread_id> -``). No SDK dependency.
* **Prompt on stdin**: the positional prompt is ``-`` ("read from stdin"), so
  prompts of any size or starting with ``-`` are safe. Shared flags are placed
  *before* the ``resume`` subcommand, where the parent command parses them.
* **Permission modes**: ``default`` -> no flag (the CLI's configured sandbox);
  ``auto`` -> ``--sandbox workspace-write``; ``plan`` -> ``--sandbox
  read-only``; ``bypass`` -> ``--dangerously-bypass-approvals-and-sandbox``.
  Codex runs fine as root.
* **Dead endpoints**: Codex retries a refused connection forever by default
  (feature ``unbounded_connection_retries``). The adapter passes ``--disable
  unbounded_connection_retries`` so the failure surfaces as
  ``transport_disconnect`` at once and the runner's recovery policy decides;
  ``codex_opts.unbounded_connection_retries: true`` keeps the CLI default.
  The runner's time bounds apply either way.
* **Other mappings**: ``model`` -> ``-m``; ``reasoning_effort`` -> ``-c
  model_reasoning_effort="..."``; ``append_system_prompt`` -> ``-c
  developer_instructions="..."``; ``extra_dirs`` -> ``--add-dir`` each;
  ``codex_opts.config`` -> one ``-c key=value`` per entry (TOML values);
  ``codex_opts.profile`` -> ``-p``. Codex has no flags for ``system_prompt``
  (replacing its base instructions), ``max_turns`` or a tool allow-list:
  those fail at plan time.
* **Option maps**: ``codex_opts`` and ``codex_thread_opts`` both reach Codex
  (the reference keeps thread settings in the latter). Every key is in
  :data:`OPTIONS` (how it is honoured, checked against ``codex exec --help``
  of 0.171.0) or :data:`REFUSED` (why not); ``additional_directories`` become
  ``--add-dir`` after the prompt's other targets, resolved against the packet
  directory, never the session's own cwd.
* **Stream** parsing, usage deltas and classification: :mod:`.codex_stream`.
* **cli_confirmation**: the model and reasoning effort are proven from the
  launched argv (the last ``-m`` / ``-c model=`` and ``-c
  model_reasoning_effort=`` win, as in the CLI), since the JSONL stream does
  not echo them; ``warn`` emits a non-fatal event, ``require`` fails the
  session before launch as ``cli_confirmation_mismatch`` / ``_missing``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ._cli import CliProvider, Launch
from ._cli_options import check_paths, cli_binary, extra_args, option_paths
from ._stream import Emit, StreamParser, UsageLedger
from .base import SessionRequest
from .codex_stream import CodexStreamParser
from .failure import FailureEnvelope, envelope_for

__all__ = ["CodexProvider", "CodexStreamParser", "make_provider"]

EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
OPTIONS: dict[str, str] = {
    "config": "`-c KEY=VALUE` per entry (values written as TOML)",
    "profile": "`-p PROFILE`",
    "unbounded_connection_retries": "`true` keeps the CLI's endless reconnects; otherwise "
    "`--disable unbounded_connection_retries`",
    "skip_git_repo_check": "`--skip-git-repo-check` (default true; `false` leaves it out)",
    "additional_directories": "`--add-dir DIR` per entry, a relative path resolved against "
    "the packet directory (the prompt's other targets are added too)",
    "model_provider": '`-c model_provider="NAME"`',
    "oss_provider": "`--oss --local-provider NAME` (lmstudio or ollama)",
    "output_schema": "`--output-schema FILE` (a path, relative to the packet directory)",
    "completion_only": "`true`: `--sandbox read-only` (refused with permission_mode auto or "
    "bypass, which ask for writes)",
}
_APP_SERVER = (
    "it is part of the Codex app-server protocol; this runner drives `codex exec --json`, "
    "which has no such surface"
)
REFUSED: dict[str, str] = {
    "app_server": _APP_SERVER,
    "host_tools": _APP_SERVER,
    "dynamic_tools": _APP_SERVER,
    "reviewed_approval": _APP_SERVER,
}
PERMISSION_FLAGS: dict[str, tuple[str, ...]] = {
    "default": (),
    "auto": ("--sandbox", "workspace-write"),
    "plan": ("--sandbox", "read-only"),
    "bypass": ("--dangerously-bypass-approvals-and-sandbox",),
}
UNSUPPORTED = {
    "system_prompt": "use append_system_prompt (sent as Codex developer_instructions)",
    "max_turns": "remove max_turns for codex prompts; bound them with timeout instead",
}
# ``allowed_tools`` is accepted but not enforced: Codex has no per-tool allowlist
# (its sandbox, set by permission_mode, is the equivalent). Packets written for
# the reference system set it for Codex prompts and must run unchanged.


def toml_value(value: Any) -> str:
    """Render a ``-c key=value`` value as TOML (strings JSON-quoted, which TOML accepts)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def effective_settings(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """The model and reasoning effort an argv makes Codex use (last one wins).

    Reads ``-m``/``--model`` and ``-c model=...`` / ``-c model_reasoning_effort=...``.
    """
    model: str | None = None
    effort: str | None = None
    args = list(argv)
    for i, arg in enumerate(args[:-1]):
        value = args[i + 1]
        if arg in ("-m", "--model"):
            model = value
        elif arg in ("-c", "--config"):
            key, _, raw = value.partition("=")
            parsed = _toml_scalar(raw)
            if key.strip() == "model":
                model = parsed
            elif key.strip() == "model_reasoning_effort":
                effort = parsed
    return model, effort


def _toml_scalar(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        try:
            return str(json.loads(raw)) if raw[0] == '"' else raw[1:-1]
        except ValueError:
            return raw[1:-1]
    return raw


def add_dirs(request: SessionRequest) -> list[str]:
    """The ``--add-dir`` directories: the prompt's other targets, then
    ``additional_directories`` (relative to the packet directory), each once
    and never the session's own cwd, as the reference merges them."""
    cwd = str(Path(request.cwd).resolve())
    out: list[str] = []
    for directory in (
        *(str(d) for d in request.extra_dirs),
        *option_paths(request, "additional_directories"),
    ):
        if directory != cwd and directory not in out:
            out.append(directory)
    return out


def confirm_cli(request: SessionRequest, argv: Sequence[str]) -> FailureEnvelope | None:
    """Check that ``argv`` makes Codex run the configured model and effort.

    Returns ``None`` when confirmed (or nothing configured), else an envelope
    of class ``cli_confirmation_mismatch`` (argv says otherwise) or
    ``cli_confirmation_missing`` (argv does not say).
    """
    model, effort = effective_settings(argv)
    problems: list[str] = []
    missing = False
    for name, wanted, got in (
        ("model", request.model, model),
        ("reasoning_effort", request.reasoning_effort, effort),
    ):
        if wanted is None:
            continue
        if got is None:
            missing = True
            problems.append(f"{name} {wanted!r} is not in the launched argv")
        elif got != wanted:
            problems.append(f"{name} is {got!r} in the launched argv, not {wanted!r}")
    if not problems:
        return None
    cls = "cli_confirmation_missing" if missing else "cli_confirmation_mismatch"
    return envelope_for(
        cls,
        "codex CLI confirmation failed: " + "; ".join(problems),
        provider_code=cls,
        raw={"model": model, "reasoning_effort": effort},
    )


class CodexProvider(CliProvider):
    """The ``codex`` provider (OpenAI Codex CLI)."""

    name = "codex"
    cli = "codex"
    install = "npm install -g @openai/codex"

    def __init__(self) -> None:
        self._ledger = UsageLedger()

    options = OPTIONS
    refused = REFUSED
    efforts = EFFORTS
    unsupported = UNSUPPORTED

    def validate_options(self, request: SessionRequest) -> None:
        """Check mode, effort, unsupported fields and ``codex_opts`` /
        ``codex_thread_opts`` (raises UserError)."""
        super().validate_options(request)
        opts = request.provider_options
        check_paths(request, provider=self.name, key="additional_directories")
        for key in ("model_provider", "oss_provider", "output_schema"):
            if opts.get(key) is not None and not isinstance(opts[key], str):
                raise UserError(
                    f"{key} must be a string",
                    key=f"codex_opts.{key}",
                    fix=f"write {key} as a quoted string"
                    + (" (a schema file's path)" if key == "output_schema" else ""),
                )
        only = opts.get("completion_only")
        if only is not None and not isinstance(only, bool):
            raise UserError(
                "completion_only must be true or false",
                key="codex_opts.completion_only",
                fix="set completion_only: true or false",
            )
        if only and request.permission_mode in ("auto", "bypass"):
            raise UserError(
                f"completion_only asks for a read-only sandbox but permission_mode "
                f"{request.permission_mode} asks for writes",
                key="codex_opts.completion_only",
                fix="remove completion_only or use permission_mode default or plan",
            )
        config = request.provider_options.get("config")
        if config is not None and not isinstance(config, Mapping):
            raise UserError(
                "config must be a mapping of Codex config keys to values",
                key="codex_opts.config",
                fix='write it as a YAML mapping, e.g. {model_verbosity: "low"}',
            )
        if request.cli_confirmation not in ("off", "warn", "require"):
            raise UserError(
                f"cli_confirmation {request.cli_confirmation!r} is not valid",
                key="cli_confirmation",
                fix="use off, warn or require",
            )

    def launch(self, request: SessionRequest, resume_id: str | None, message: str) -> Launch:
        """Build the argv for a start (``resume_id=None``) or an exact resume."""
        opts = request.provider_options
        argv: list[str] = [cli_binary(request, self.cli), "exec", "--json"]
        if opts.get("skip_git_repo_check", True):
            argv.append("--skip-git-repo-check")
        if not opts.get("unbounded_connection_retries"):
            argv += ["--disable", "unbounded_connection_retries"]
        if opts.get("profile"):
            argv += ["-p", str(opts["profile"])]
        if request.model:
            argv += ["-m", request.model]
        if request.reasoning_effort:
            argv += ["-c", f"model_reasoning_effort={toml_value(request.reasoning_effort)}"]
        if opts.get("completion_only") and request.permission_mode in ("default", "plan"):
            argv += PERMISSION_FLAGS["plan"]
        else:
            argv += PERMISSION_FLAGS[request.permission_mode]
        if opts.get("oss_provider"):
            argv += ["--oss", "--local-provider", str(opts["oss_provider"])]
        if opts.get("model_provider"):
            argv += ["-c", f"model_provider={toml_value(opts['model_provider'])}"]
        if request.append_system_prompt:
            argv += ["-c", f"developer_instructions={toml_value(request.append_system_prompt)}"]
        for directory in add_dirs(request):
            argv += ["--add-dir", directory]
        if opts.get("output_schema"):
            argv += ["--output-schema", option_paths(request, "output_schema")[0]]
        for key, value in (opts.get("config") or {}).items():
            argv += ["-c", f"{key}={toml_value(value)}"]
        argv += extra_args(request)
        if resume_id:
            argv += ["resume", resume_id]
        argv.append("-")
        preflight: FailureEnvelope | None = None
        warnings: tuple[FailureEnvelope, ...] = ()
        if request.cli_confirmation != "off":
            problem = confirm_cli(request, argv)
            if problem is not None and request.cli_confirmation == "require":
                preflight = problem
            elif problem is not None:
                warnings = (problem,)
        return Launch(
            argv=tuple(argv), stdin_text=message, preflight_failure=preflight, warnings=warnings
        )

    def make_parser(self, emit: Emit) -> StreamParser:
        return CodexStreamParser(emit, self._ledger)

    def session_parser(self, emit: Emit, env: Mapping[str, str]) -> StreamParser:
        """The parser of a session run with ``env``: it reads the thread's rollout
        under ``CODEX_HOME`` (default ``~/.codex``) for its usage windows."""
        home = env.get("CODEX_HOME") or (
            str(Path(env["HOME"]) / ".codex") if env.get("HOME") else None
        )
        return CodexStreamParser(
            emit,
            self._ledger,
            codex_home=Path(home) if home else None,
            local_tz=env.get("TZ") or None,
        )


def make_provider() -> CodexProvider:
    """Registry entry point."""
    return CodexProvider()
