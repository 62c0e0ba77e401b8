"""The explicit CLI/API options: the highest level of the plan's precedence.

:class:`RunOptions` carries what the caller set (``None`` = not given); each
of its fields is declared once more, with its flag, choices and help, in the
option table (:mod:`prompt_runner.option_table`), whose ``Literal`` types
annotate the fields that take one of a few words. :data:`BUILTIN` and
:data:`RENDER_BUILTIN` are the lowest level, the built-in defaults of the
prompt keys and of the rendering keys.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from ..option_table import (
    BY_NAME,
    CliConfirmation,
    CommitterKind,
    DiffMode,
    EventsMode,
    LogMetaMode,
    LogMode,
    PermissionMode,
    PushPolicy,
    RuntimeStoreKind,
    Thinking,
    ToolOutput,
)

LEVELS = ("built-in", "profile", "packet", "prompt", "option")

BUILTIN: dict[str, Any] = {
    "provider": "simulated",
    "model": None,
    "reasoning_effort": None,
    "permission_mode": "default",
    "allowed_tools": [],
    "timeout": None,
    "cli_confirmation": "off",
    "system_prompt": None,
    "append_system_prompt": None,
    "max_turns": None,
}
RENDER_BUILTIN: dict[str, Any] = {
    "log_mode": "compact",
    "log_meta": "none",
    "events_mode": "compact",
    "tool_output": "summary",
    "thinking": "hide",
    "diff": "none",
}
PROMPT_KEYS = tuple(BUILTIN)


@dataclass(frozen=True)
class RunOptions:
    """Explicit CLI/API options: the highest precedence level.

    ``None`` means "not given" for every field. Selection fields: ``ids``
    (explicit prompt ids, in the given order), ``select_all``, ``remaining``,
    ``phase``, ``from_id``/``through_id`` (inclusive bounds), ``continue_run``
    (API only: resume after the highest completed prompt). ``state_dir``: the
    state root outside the packet (``None``: ``$PROMPT_RUNNER_STATE_DIR``, else
    ``<packet>/.prompt_runner``; see :meth:`~prompt_runner.state.layout.StateLayout.of_packet`).
    ``push``: ``after_prompt`` pushes the work branch after each committed
    prompt (``commits.push`` of a workspace); ``None``/``explicit``: never.
    """

    profile: str | None = None
    provider: str | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    permission_mode: PermissionMode | None = None
    timeout: int | str | None = None
    cli_confirmation: CliConfirmation | None = None
    log_mode: LogMode | None = None
    log_meta: LogMetaMode | None = None
    events_mode: EventsMode | None = None
    tool_output: ToolOutput | None = None
    thinking: Thinking | None = None
    diff: DiffMode | None = None
    runtime_store: RuntimeStoreKind | None = None
    state_dir: str | None = None
    committer: CommitterKind | None = None
    push: PushPolicy | None = None
    max_run_cost_usd: float | str | None = None
    no_commit: bool = False
    skip_preflight: bool = False
    dry_run: bool = False
    new_run: bool = False
    keep_going: bool = False
    verify_first: bool | None = None
    ids: tuple[str, ...] = ()
    select_all: bool = False
    remaining: bool = False
    phase: str | None = None
    from_id: str | None = None
    through_id: str | None = None
    continue_run: bool = False

    def overrides(self) -> dict[str, Any]:
        """The prompt-level keys explicitly set (non-``None``)."""
        keys = (*PROMPT_KEYS, *RENDER_BUILTIN)
        return {
            k: getattr(self, k) for k in keys if hasattr(self, k) and getattr(self, k) is not None
        }


def with_options(options: RunOptions, **changes: Any) -> RunOptions:
    """Return ``options`` with ``changes`` applied (unknown names raise TypeError)."""
    valid = {f.name for f in fields(RunOptions)}
    unknown = set(changes) - valid
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    return replace(options, **changes)


RENDER_VALUES: dict[str, tuple[str, ...]] = {
    key: BY_NAME[key].choices or ()
    for key in ("log_meta", "log_mode", "events_mode", "tool_output", "thinking", "diff")
}
"""Each rendering key's allowed values (the option table's choices)."""
