"""``watch``: supervision samples of a long run (SPEC 8), bounded with ``--for``.

Without ``--for`` it prints a sample every ``--interval`` seconds until
stopped (or one with ``--once``). With ``--for D --every D`` it is the
bounded, evidence-producing watch (:func:`prompt_runner.watch_for`): one line
per sample, then the verdict; exit 0 when a whole interval was healthy, 1 at
the first unhealthy sample. With ``--json`` each sample and the report are
one JSON line each.
"""

from __future__ import annotations

import json
import sys

from ..api_watch import DEFAULT_INTERVAL_S, watch_for, watch_samples
from .exits import UsageError

TYPE_CHECKING = False  # typing and argparse cost import time on the watch path
if TYPE_CHECKING:
    import argparse
    from typing import Any

_BOUNDED_ONLY = (
    ("every", "--every"),
    ("require_running", "--require-running"),
    ("require_progress", "--require-progress"),
    ("progress_timeout", "--progress-timeout"),
)


def cmd_watch(args: argparse.Namespace) -> int:
    if args.for_ is not None:
        return _bounded(args)
    for dest, flag in _BOUNDED_ONLY:
        if getattr(args, dest):
            raise UsageError(
                f"{flag} applies to a bounded watch: add --for DURATION (e.g. --for 4h); "
                "see `prompt-runner watch --help`"
            )
    for sample in watch_samples(args.packet, interval_s=args.interval, once=args.once):
        _say(json.dumps(sample.to_dict(), ensure_ascii=False) if args.json else sample.line)
    return 0


def _bounded(args: argparse.Namespace) -> int:
    if args.once or args.interval != DEFAULT_INTERVAL_S:  # --interval 900 is the default
        flag = "--once" if args.once else "--interval"
        raise UsageError(
            f"--for samples every --every DURATION, so {flag} does not apply; leave it out "
            "(see `prompt-runner watch --help`)"
        )
    if args.progress_timeout is not None and not args.require_progress:
        raise UsageError(
            "--progress-timeout is the limit of --require-progress: add --require-progress "
            "(see `prompt-runner watch --help`)"
        )

    def show(sample: dict[str, Any]) -> None:
        _say(_json(sample) if args.json else sample_line(sample))

    ws = getattr(args, "workspace_value", None)  # --workspace W (cli/state_args.py)
    report = watch_for(
        None if ws is not None else args.packet,
        workspace=ws,
        for_s=args.for_,
        every_s=args.every,
        require_running=args.require_running,
        require_progress=args.require_progress,
        progress_timeout_s=args.progress_timeout,
        on_sample=show,
    )
    _say(_json(report.to_dict()) if args.json else report_line(report.to_dict()))
    problem = report.document.get("notify_error")
    if problem:
        sys.stderr.write(f"warning: watch_unhealthy was not sent: {problem}\n")
    return 0 if report.passed else 1


def sample_line(s: dict[str, Any]) -> str:
    """``WATCH 16:57:03Z #4 state=running runner=UP prompt=02 progress=3s push=ok
    dirty=0 commits=12 ok`` (``UNHEALTHY`` and the violations when it is not)."""
    # lazy: only a bounded watch renders its verdicts
    from ..watch.health import describe

    age = s.get("progress_age_s")
    push = s.get("push") or {}
    parts = [
        f"WATCH {str(s.get('at'))[11:19]}Z #{s['seq']}",
        f"state={s.get('state')}",
        f"runner={str(s.get('runner', '?')).upper()}",
        f"prompt={s.get('prompt') or 'none'}",
        f"progress={'?' if age is None else f'{age:.0f}s'}",
    ]
    if s.get("waiting_until"):
        parts.append(f"waiting_until={s['waiting_until']}")
    if push:
        parts.append(f"push={push.get('status', '?')}")
    parts += [f"dirty={_shown(s.get('dirty'))}", f"commits={_shown(s.get('commits'))}"]
    if s.get("healthy"):
        parts.append("ok")
    else:
        parts.append("UNHEALTHY " + "; ".join(describe(v) for v in s.get("violations", [])))
    return " ".join(parts)


def report_line(r: dict[str, Any]) -> str:
    """The verdict: ``watch passed: 21 samples over 20s ...`` or ``watch failed at
    sample 5 ...``, naming the evidence and the report."""
    # lazy: only a bounded watch renders its verdicts
    from ..watch.health import describe

    files = f"evidence {r['evidence']}; report {r['report']}"
    if r["passed"]:
        return (
            f"watch passed: {r['sample_count']} healthy samples over {r['elapsed_s']:.0f}s; {files}"
        )
    why = "; ".join(describe(v) for v in r["violations"]) or r["ended"]
    return (
        f"watch failed at sample {r['failed_sample'] or r['sample_count']} "
        f"({r['elapsed_s']:.0f}s): {why}; {files}"
    )


def _shown(value: Any) -> str:
    return "?" if value is None else str(value)


def _json(doc: dict[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
