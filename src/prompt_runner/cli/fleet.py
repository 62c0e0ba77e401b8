"""``fleet plan|submit|status|stop|watch|worker`` and ``control steer --fleet`` (``docs/fleet.md``).

Each handler calls one function of :mod:`prompt_runner.api_fleet` and renders
its result: ``--json`` prints the result's document, otherwise a few lines.
Exit codes: ``plan`` 1 when a member would be refused; ``submit`` 1 when a
member failed or the fleet was stopped; ``stop`` 3 when a process is left;
``watch`` 1 when unhealthy; errors as everywhere (2 bad input, 3 infrastructure).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from ..api_fleet import (
    fleet_status,
    fleet_steer,
    plan_fleet,
    run_fleet_worker,
    stop_fleet,
    submit_fleet,
    watch_fleet,
)
from ..durations import parse_duration
from ..watch.health import DEFAULT_PROGRESS_TIMEOUT_S, describe
from ._out import emit_json, say, warn
from .exits import UsageError


def cmd_plan(args: argparse.Namespace) -> int:
    plan = plan_fleet(args.fleet)
    if args.json:
        emit_json(plan.to_dict())
        return 0 if plan.ok else 1
    say(
        f"Fleet {plan.fleet} ({plan.manifest}): engine {plan.engine}, concurrency "
        f"{plan.concurrency}, failure_policy {plan.failure_policy}"
    )
    if plan.service:
        t = plan.service
        say(f"Temporal: {t['address']}, namespace {t['namespace']}, task queue {t['task_queue']}")
    for m in plan.members:
        say(f"  {m.workspace:<24} {m.action:<8} {m.state:<10} {m.progress:<6} {m.where}")
        for problem in m.problems:
            say(f"  {'':<24} problem: {problem}")
    return 0 if plan.ok else 1


def cmd_submit(args: argparse.Namespace) -> int:
    result = submit_fleet(args.fleet, say=None if args.json else say)
    if args.json:
        emit_json(result.to_dict())
        return result.exit_code
    if result.outcome == "driving":
        say(
            f"Fleet {result.fleet} is being driven already by `fleet submit` pid {result.driver}; "
            "nothing was started (follow it with `prompt-runner fleet status`)."
        )
        return 0
    for m in result.members:
        why = f" ({m.reason})" if m.reason else ""
        say(f"  {m.workspace:<24} {m.state}{why}")
    if result.outcome == "submitted":
        started = sum(m.action == "started" for m in result.members)
        say(
            f"Fleet {result.fleet}: {started} workflow(s) started, the others were running "
            "or done; follow it with `prompt-runner fleet status`."
        )
    else:
        again = " (continued a killed submit)" if result.resumed else ""
        say(f"Fleet {result.fleet}: {result.outcome}{again}.")
    return result.exit_code


def cmd_status(args: argparse.Namespace) -> int:
    status = fleet_status(args.fleet)
    if args.json:
        emit_json(status.to_dict())
        return 0
    counts = ", ".join(f"{n} {state}" for state, n in status.counts().items())
    driving = f"; submit pid {status.driving} drives it" if status.driving else ""
    say(f"Fleet {status.fleet} ({status.engine}): {counts}{driving}")
    say(
        f"  {'WORKSPACE':<24} {'STATE':<10} {'PROMPTS':<8} {'NOW':<6} {'ATT':>4} "
        f"{'COST':>8} {'HOST':<20} LAST PROGRESS"
    )
    for r in status.rows:
        cost = "-" if r.cost_usd is None else f"${r.cost_usd:.2f}"
        say(
            f"  {r.workspace:<24} {r.state:<10} {r.progress:<8} {r.prompt or '-':<6} "
            f"{r.attempts:>4} {cost:>8} {(r.host or '-'):<20} {r.last_progress_at or '-'}"
        )
        if r.reason and r.state not in ("completed", "running"):
            say(f"  {'':<24} {r.reason}")
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    result = stop_fleet(
        args.fleet, after_prompt=args.after_prompt, grace_s=args.grace, author=args.author
    )
    if args.json:
        emit_json(result.to_dict())
    elif not result.members:
        say(f"Fleet {result.fleet}: no member was running; none will be started.")
    else:
        for member, doc in result.members.items():
            say(f"  {member:<24} {doc.get('summary') or doc.get('stopped_by')}")
        say(f"Fleet {result.fleet}: stopped {len(result.members)} member(s).")
    if result.ok:
        return 0
    warn(f"error: some process of fleet {result.fleet}'s members could not be ended")
    return 3


def cmd_watch(args: argparse.Namespace) -> int:
    if args.for_ is None:
        raise UsageError("fleet watch is bounded: give --for DURATION (e.g. --for 4h)")
    if args.progress_timeout is not None and not args.require_progress:
        raise UsageError("--progress-timeout is the limit of --require-progress: add it")
    for_s = parse_duration(args.for_, key="--for")
    every_s = parse_duration(args.every, key="--every") if args.every else min(600.0, for_s)
    timeout = (
        parse_duration(args.progress_timeout, key="--progress-timeout")
        if args.progress_timeout
        else DEFAULT_PROGRESS_TIMEOUT_S
    )

    def show(sample: dict[str, Any]) -> None:
        if args.json:
            say(json.dumps(sample, ensure_ascii=False, separators=(",", ":")))
        else:
            say(sample_line(sample))

    report = watch_fleet(
        args.fleet,
        for_s=for_s,
        every_s=every_s,
        require_running=args.require_running,
        require_progress=args.require_progress,
        progress_timeout_s=timeout,
        emit=show,
    )
    if args.json:
        emit_json(report)
    else:
        files = f"evidence {report['evidence']}; report {report['report']}"
        if report["passed"]:
            say(f"fleet watch passed: {report['sample_count']} healthy samples; {files}")
        else:
            why = "; ".join(_violation(v) for v in report["violations"]) or report["ended"]
            say(f"fleet watch failed at sample {report['failed_sample']}: {why}; {files}")
    return 0 if report["passed"] else 1


def sample_line(sample: dict[str, Any]) -> str:
    """``FLEET 16:57:03Z #4 running=4 completed=2 queued=6 ok`` (or the violations)."""
    states = " ".join(f"{k}={v}" for k, v in sample["states"].items())
    verdict = (
        "ok"
        if sample["healthy"]
        else "UNHEALTHY " + "; ".join(_violation(v) for v in sample["violations"])
    )
    return f"FLEET {str(sample['at'])[11:19]}Z #{sample['seq']} {states} {verdict}"


def _violation(v: dict[str, Any]) -> str:
    where = v.get("workspace")
    body = {k: x for k, x in v.items() if k != "workspace"}
    return f"{where}: {describe(body)}" if where else describe(body)


def cmd_worker(args: argparse.Namespace) -> int:
    code = run_fleet_worker(
        args.address,
        namespace=args.namespace,
        task_queue=args.task_queue,
        slots=args.slots,
        identity=args.identity,
        root=args.root,
        say=say,
        tls=args.tls,
        tls_ca=args.tls_ca,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        api_key_env=args.api_key_env,
    )
    return code  # the process leaves through cli.main.leave (the SDK's threads)


def steer_member(args: argparse.Namespace) -> int:
    """``control steer --fleet F --workspace W TEXT``: 0 when applied or still
    pending, 1 when the runner refused it."""
    receipt = fleet_steer(args.fleet, args.workspace, args.text or "", author=args.author)
    if args.json:
        emit_json(receipt.to_dict())
    elif receipt.outcome == "pending":
        say(
            f"Steer sent to {receipt.workspace} on {receipt.host or 'its worker'} "
            f"({receipt.request}); not decided yet: its `control log` will say."
        )
    else:
        why = f": {receipt.reason}" if receipt.reason else ""
        say(
            f"Steer {receipt.outcome} by {receipt.workspace} on {receipt.host}"
            f" ({receipt.request}){why}."
        )
    return 1 if receipt.outcome == "rejected" else 0
