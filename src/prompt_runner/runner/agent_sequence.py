"""Agent control's run-level hooks (SPEC 7): the sequence before and after a controlled prompt.

* :func:`closed_before_start` -- before a normal run, a passing
  ``completion_verify`` means success without a session;
* :func:`verify_completion` -- the packet's completion contract, judged (also
  when an agent asks to ``finish``);
* :func:`ends_sequence` -- an accepted ``finish`` closes the selected
  sequence; ``blocked`` stops the run.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..state.records import PromptStatus, RunStatus, exit_code_for
from ..verifier import VerifierReport, VerifyContext, verify
from .agent_record import BLOCKED, FINISHED
from .attempt_sink import verify_registrar
from .baseline import run_baseline
from .context import RunContext

PRECHECK_MESSAGE = "Packet completion contract already passes — no session was run."


class RunTally(Protocol):
    """The parts of the run's result these hooks fill (``RunResult``)."""

    status: str
    exit_code: int
    prompts: dict[str, str]
    failures: list[str]
    message: str


def closed_before_start(ctx: RunContext, result: RunTally, journal: Any) -> bool:
    """SPEC 7: before a normal run, a passing ``completion_verify`` means success, no session.

    Explicit prompt ids run anyway. Fills ``result`` and journals
    ``run_finished`` when the run ends here.

    Returns:
        True when the run is over (success, or halted by a verifier fault).
    """
    plan = ctx.plan
    contract = plan.packet.completion_contract
    if not plan.agent_control.enabled or contract is None or plan.options.ids:
        return False
    report = verify_completion(ctx, "completion_verify")
    if report.fault is not None:
        result.status = RunStatus.HALTED
        result.exit_code = exit_code_for(result.status)
        result.message = (
            "Run halted: the packet completion contract could not be judged "
            f"(verifier fault: {report.fault.details}); fix it and run again."
        )
    elif report.passed:
        result.message = PRECHECK_MESSAGE
    else:
        return False
    journal.append(
        "run_finished",
        {"status": result.status, "source": "completion_verify", "prompts": {}},
    )
    return True


def verify_completion(ctx: RunContext, registered_as: str) -> VerifierReport:
    """Verify the packet's completion contract against the run-start baseline.

    Args:
        registered_as: the prompt id its verify commands are registered under
            (``runner/orphans.py``).
    """
    packet = ctx.plan.packet
    assert packet.completion_contract is not None
    ctx.workspace_carry = None  # its commands may write files: snapshot afresh
    return verify(
        packet.completion_contract,
        VerifyContext(
            repos=packet.repos,
            default_repo=packet.default_repo,
            env=ctx.env,
            baseline=run_baseline(ctx),
            on_process_start=verify_registrar(ctx, registered_as),
        ),
    )


def ends_sequence(ctx: RunContext, prompt_id: str, status: str, result: RunTally) -> bool:
    """Apply a controlled prompt's sequence-level outcome to ``result``.

    ``finish`` (accepted) closes the selected sequence successfully, naming
    the selected prompts that were not run; ``blocked`` stops the run with
    exit code 1 and the agent's reason. Returns True when the run stops here.
    """
    if status == FINISHED:
        result.prompts[prompt_id] = PromptStatus.COMPLETED
        rest = list(ctx.plan.selected)
        rest = rest[rest.index(prompt_id) + 1 :]
        result.message = (
            f"Run finished: prompt {prompt_id}'s finish passed the packet completion contract."
        )
        if rest:
            result.message += f" Not run (the sequence is closed): {', '.join(rest)}."
        return True
    if status == BLOCKED:
        record = ctx.store.load_prompt(prompt_id)
        reason = (record.get("agent_control") or {}).get("reason") or "(no reason)"
        result.prompts[prompt_id] = BLOCKED
        result.failures.append(prompt_id)
        result.status = RunStatus.FAILED
        result.exit_code = exit_code_for(result.status)
        result.message = f"agent_control_blocked: prompt {prompt_id} is blocked: {reason}"
        return True
    return False
