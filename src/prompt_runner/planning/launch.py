"""What a prompt's session is started with: its :class:`SessionRequest` and,
for ``plan --json``, the argv a CLI provider would run."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..errors import ProviderMissingError
from ..packet.loader import Packet
from ..providers.base import SessionRequest
from ..providers.registry import get_provider
from .prompt_plan import PromptPlan


def request_for(
    packet: Packet,
    pp: PromptPlan,
    text: str,
    session_number: int = 1,
    env: dict[str, str] | None = None,
) -> SessionRequest:
    """A :class:`SessionRequest` for ``pp`` (also used to validate options at plan time).

    Args:
        text: the prompt text the session is sent.
        session_number: 1 for the prompt's first session in this attempt loop.
        env: extra environment variables for the provider's process.
    """
    repos = packet.repos
    targets = pp.prompt.targets
    cwd = pp.cwd or packet.root
    return SessionRequest(
        prompt_id=pp.id,
        prompt_text=text,
        cwd=cwd,
        provider=pp.provider,
        model=pp.model,
        reasoning_effort=pp.reasoning_effort,
        permission_mode=pp.permission_mode,
        allowed_tools=pp.allowed_tools,
        system_prompt=pp.system_prompt,
        append_system_prompt=pp.append_system_prompt,
        max_turns=pp.max_turns,
        extra_dirs=tuple(repos[t] for t in targets[1:] if t in repos),
        repos=repos,
        env=dict(env or {}),
        provider_options=pp.provider_options,
        bounds=pp.bounds,
        session_number=session_number,
        simulate=pp.prompt.front.simulate,
        cli_confirmation=pp.cli_confirmation,
    )


def launch_argv(packet: Packet, pp: PromptPlan) -> list[str] | None:
    """The argv the first session of ``pp`` would start: secrets redacted,
    ``<prompt>`` where a CLI takes the prompt in argv; ``None`` for a built-in
    provider. Only for a prompt whose options were validated (a selected one)."""
    preview = getattr(get_provider(pp.provider), "launch_argv", None)
    if preview is None:
        return None
    return list(preview(request_for(packet, pp, pp.prompt.body)))


def check_launchable(packet: Packet, pp: PromptPlan) -> None:
    """Check that what ``pp``'s sessions start is there, as ``run`` does first.

    A CLI provider's ``cli_path`` when set (a relative one from the packet
    directory, as the launch takes it), else its usual name on PATH.

    Raises:
        ProviderMissingError: (exit 3) it is missing or not executable; the
            message names the path and the map and file that set ``cli_path``.
    """
    key, where = pp.option_key(f"{pp.provider}_opts.cli_path")
    request = request_for(packet, pp, pp.prompt.body)
    get_provider(pp.provider).check_available(request, key=f"{key} ({where})")


def launch_problems(
    packet: Packet, prompts: Iterable[PromptPlan]
) -> Iterator[ProviderMissingError]:
    """What ``run`` refuses before any session, in the order it checks: for each
    of ``prompts``, :func:`check_launchable` of the prompt, then of each of its
    ``recovery.failover`` targets (found now, not when the first provider is
    refused hours into the run).

    Yields:
        Each :class:`ProviderMissingError` (exit 3), a failover target's as
        ``prompt ID: recovery.failover[N] cannot start, ...``.
    """
    for pp in prompts:
        try:
            check_launchable(packet, pp)
        except ProviderMissingError as exc:
            yield exc
        for index, target in enumerate(pp.failover):
            try:
                check_launchable(packet, target)
            except ProviderMissingError as exc:
                yield ProviderMissingError(
                    f"prompt {pp.prompt.id}: recovery.failover[{index}] cannot start, {exc}; "
                    "or remove that failover entry"
                )


def check_plan_launchable(packet: Packet, prompts: Iterable[PromptPlan]) -> None:
    """``run``'s first check: every one of ``prompts`` (and its failover targets) can start.

    Raises:
        ProviderMissingError: (exit 3) the first of :func:`launch_problems`.
    """
    for problem in launch_problems(packet, prompts):
        raise problem


def launch_readiness_errors(packet: Packet, prompts: Iterable[PromptPlan]) -> list[dict[str, Any]]:
    """:func:`launch_problems` as ``packet doctor``/``packet preflight`` readiness
    errors: one ``{scope: "provider", name, kind: "provider_missing", path: None,
    reason, prompts: [ids]}`` per distinct problem (``name`` its first prompt's id)."""
    by_reason: dict[str, list[str]] = {}
    for pp in prompts:
        for problem in launch_problems(packet, (pp,)):
            by_reason.setdefault(str(problem), []).append(pp.id)
    return [
        {
            "scope": "provider",
            "name": ids[0],
            "kind": "provider_missing",
            "path": None,
            "reason": reason,
            "prompts": ids,
        }
        for reason, ids in by_reason.items()
    ]
