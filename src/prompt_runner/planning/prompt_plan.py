"""One prompt's fully resolved plan: what its sessions run with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..option_table import BY_NAME
from ..packet.loader import Prompt
from ..packet.models import RecoveryConfig
from ..providers.base import TimeBounds

_FILED = ("prompt", "packet", "profile")


@dataclass(frozen=True)
class PromptPlan:
    """One prompt, fully resolved.

    Attributes:
        timeout_ms: the resolved ``timeout`` in ms (``None`` = unbounded).
        bounds: derived time bounds (ms).
        provider_options: merged provider option map.
        recovery: deep-merged recovery config.
        sources: plan key -> the level that set it (see :data:`LEVELS`).
        max_cost_usd: the prompt's cost budget (``provider_options``'
            ``max_cost_usd``, validated), ``None`` = none.
        option_sources: each ``provider_options`` key -> ``(map, file)`` that
            set it (``("codex_thread_opts", "prompt_runner_packet.md")``), for
            error messages (see :meth:`option_key`).
        failover: the plans of ``recovery.failover``'s targets, in order (each
            the same prompt on another provider; none has failover of its own).
        level_file: level (``prompt``, ``packet``, ``profile``) -> the file
            that holds its keys, as errors name it (a path from the current
            directory), for :meth:`option_key`; asked only when an error is
            (``None``: the prompt's file for every level).
    """

    prompt: Prompt
    provider: str
    model: str | None
    reasoning_effort: str | None
    permission_mode: str
    allowed_tools: tuple[str, ...]
    timeout_ms: int | None
    bounds: TimeBounds
    cli_confirmation: str
    system_prompt: str | None
    append_system_prompt: str | None
    max_turns: int | None
    provider_options: dict[str, Any]
    recovery: RecoveryConfig
    cwd: Path | None
    sources: dict[str, str] = field(default_factory=dict)
    max_cost_usd: float | None = None
    option_sources: dict[str, tuple[str, str]] = field(default_factory=dict)
    failover: tuple[PromptPlan, ...] = ()
    level_file: Callable[[str], str] | None = field(default=None, repr=False, compare=False)

    @property
    def id(self) -> str:
        return self.prompt.id

    def option_key(self, key_path: str) -> tuple[str, str | None]:
        """``(key path, file)`` to name in an error about ``key_path``.

        A provider's ``<provider>_opts.KEY...`` becomes the map that set ``KEY``
        and that map's file (``codex_thread_opts.additional_directories``,
        ``prompt_runner_packet.md``). A plan key (``reasoning_effort``) is named
        in the file of the level that set it (:attr:`sources`: the prompt's
        file, the manifest, the profile's file); one an explicit option set is
        named by its flag and keyword (``--reasoning-effort (reasoning_effort=)``)
        with no file (``None``). Anything else stays, in the prompt's file.
        """
        head, dot, rest = key_path.partition(".")
        origin = self.option_sources.get(rest.split(".")[0]) if dot else None
        if head == f"{self.provider}_opts" and origin is not None:
            name, where = origin
            return f"{name}.{rest}", where
        level = self.sources.get(head) if not dot else None
        if level == "option":
            flags = BY_NAME[head].flags if head in BY_NAME else ()
            return (f"{flags[0]} ({head}=)" if flags else f"{head}="), None
        if self.level_file is None:
            return key_path, self.prompt.relfile
        return key_path, self.level_file(level if level in _FILED else "prompt")

    def to_dict(self, *, committer: str) -> dict[str, Any]:
        p = self.prompt
        return {
            "id": p.id,
            "name": p.name,
            "phase": p.phase,
            "file": p.relfile,
            "targets": list(p.targets),
            "cwd": str(self.cwd) if self.cwd else None,
            "commit": p.front.commit,
            "commit_enabled": committer != "noop",
            "depends_on": list(p.front.depends_on),
            "provider": self.provider,
            "model": self.model,
            "reasoning_effort": self.reasoning_effort,
            "permission_mode": self.permission_mode,
            "allowed_tools": list(self.allowed_tools),
            "timeout_ms": self.timeout_ms,
            "bounds": self.bounds.to_dict(),
            "cli_confirmation": self.cli_confirmation,
            "system_prompt": self.system_prompt,
            "append_system_prompt": self.append_system_prompt,
            "max_turns": self.max_turns,
            "provider_options": self.provider_options,
            "max_cost_usd": self.max_cost_usd,
            "recovery": self.recovery.model_dump(),
            "verify": p.contract.to_raw(),
            "sources": dict(self.sources),
            **(
                {"failover": [{"provider": f.provider, "model": f.model} for f in self.failover]}
                if self.failover
                else {}
            ),
        }
