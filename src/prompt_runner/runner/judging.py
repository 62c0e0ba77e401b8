"""Between a session and the next: the verdict, and what arrived while it was judged.

* :func:`judge` verifies a prompt against its effective contract so that an
  amendment arriving while the verifier runs is part of exactly the verdict
  its receipt names (``control/verifying.py``): the contract is re-read when
  the verifier is done and, if it changed, verified again.
* :func:`end_attempt` tells the control plane the attempt is recorded and
  whether another session of the prompt follows, so a steer read now goes to
  that session or is refused with the reason.
* :func:`queued_steers` hands the next session the steers accepted for it; the
  attempt loop puts them into that session's prompt (or resume message).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..planning import PromptPlan
from ..verifier import VerifierReport, VerifyContext, verify
from .context import RunContext


def judge(
    ctx: RunContext, pp: PromptPlan, vctx: VerifyContext, *, attempt: int | None
) -> VerifierReport:
    """Verify ``pp`` in ``vctx`` and return the report its verdict stands on.

    The prompt record is flagged with the amendments in force (``amended``,
    ``amendments``); a passing verdict records ``contract_fingerprint`` (the
    prompt-file contract it was judged under, which ``--remaining`` compares).
    A run without disk state verifies the prompt file's contract once.

    Args:
        vctx: where and how the contract is checked.
        attempt: the attempt being judged, ``None`` for pre-flight verification.

    Raises:
        UserError: the amended contract no longer validates (names the file).
    """
    root = ctx.store.root
    if root is None:
        return verify(pp.prompt.contract, vctx)
    from ..control import verifying

    prompt = pp.prompt
    contract, fingerprint = verifying.begin(root, ctx.run_id, prompt, attempt)
    rounds = 0
    while True:
        rounds += 1
        flag_amendments(ctx, pp)
        report = verify(contract, vctx)
        passed = report.passed and report.fault is None
        newer = verifying.settle(
            root, ctx.run_id, prompt, attempt, fingerprint, passed=passed, rounds=rounds
        )
        if newer is None:
            break
        ctx.console.say(
            f"[{pp.id}] its contract was amended while it was being verified; "
            "verifying again against the amended contract"
        )
        contract, fingerprint = newer
    if passed:
        ctx.store.update_prompt(
            pp.id,
            {"contract_fingerprint": verifying.persisted_fingerprint(root, prompt, ctx.run_id)},
        )
    return report


def flag_amendments(ctx: RunContext, pp: PromptPlan) -> None:
    """Record the amendments in force for ``pp`` on its prompt record (if any)."""
    from ..control.amendments import amendment_fields

    fields = amendment_fields(ctx.store.root, pp.id, ctx.run_id)
    if fields:
        ctx.store.update_prompt(pp.id, fields)


def end_attempt(ctx: RunContext, prompt_id: str, next_mode: str | None) -> None:
    """The attempt's outcome is recorded; ``next_mode`` is the next session's mode
    (``retry``, ``resume``, ``repair``, ``agent_owned_repeat``) or ``None``."""
    from ..control import verifying

    verifying.done(ctx.store.root)
    if ctx.control is not None:
        ctx.control.boundary(prompt_id, next_mode=next_mode)


def queued_steers(ctx: RunContext, prompt_id: str, attempt: int) -> list[Any]:
    """The steers accepted for ``prompt_id``'s next session, about to start as
    ``attempt`` (``control.plane.Steer`` values; recorded as delivered)."""
    take = getattr(ctx.control, "take_queued_steers", None)
    return list(take(prompt_id, attempt=attempt)) if take is not None else []


def announce_steers(sink: Callable[[Any], None], files: Any, steers: list[Any]) -> None:
    """Put each steer delivered in a session's prompt on the event stream and its log."""
    from ..providers.events import Event

    for steer in steers:
        if files is not None:
            files.note(f"STEER action={steer.delivery}")
        sink(Event("steer", {"text": steer.text, "delivery": steer.delivery}))
