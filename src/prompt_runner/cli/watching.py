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
import os
import sys

from .exits import UsageError

TYPE_CHECKING = False  # typing and argparse cost import time on the watch path
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable
    from typing import Any

    from ..api_watch import WatchSample

_BOUNDED_ONLY = (
    ("every", "--every"),
    ("require_running", "--require-running"),
    ("require_progress", "--require-progress"),
    ("progress_timeout", "--progress-timeout"),
)


def cmd_watch(args: argparse.Namespace) -> int:
    # lazy: `watch --once`'s argparse-free path (serve_once) takes the sample itself
    from ..api_watch import watch_samples

    if args.for_ is not None:
        return _bounded(args)
    for dest, flag in _BOUNDED_ONLY:
        if getattr(args, dest):
            raise UsageError(
                f"{flag} applies to a bounded watch: add --for DURATION (e.g. --for 4h); "
                "see `prompt-runner watch --help`"
            )
    if args.once:
        return _printed(watch_samples(args.packet, interval_s=args.interval, once=True), args.json)
    return _unbounded(args.packet, args.interval, args.json)


def _unbounded(packet: str, interval_s: float, as_json: bool) -> int:
    """``watch`` without ``--once``: a sample every ``interval_s`` until a signal.

    The first sample's error is the command's (exit 2: not a packet). After it,
    a sample that fails -- a manifest caught half-way through an editor's
    save, a repo moved for a moment -- is one line on stderr and the watch
    goes on: it is the one an unattended run is left with, and it decides
    nothing (a bounded ``--for`` watch records such a sample as unhealthy).
    """
    import time  # lazy: `watch --once` sleeps never

    from ..api_watch import watch_sample, watch_samples
    from ..errors import UserError
    from ._out import warn

    samples = watch_samples(packet, interval_s=interval_s, once=True)  # checks both
    first: WatchSample | None = next(iter(samples))
    sample: WatchSample | None
    hinted = False
    while True:
        started = time.monotonic()
        if first is not None:
            sample, first = first, None
        else:
            try:
                sample = watch_sample(packet)
            except UserError as exc:
                warn(f"watch: this sample failed, the next is in {interval_s:g} s: {exc}")
                sample = None
        if sample is not None:
            doc = sample.to_dict()
            _say(json.dumps(doc, ensure_ascii=False) if as_json else sample.line)
            if not hinted:  # once, at the first sample
                hinted = True
                _hint_elsewhere(doc)
        time.sleep(max(0.0, interval_s - (time.monotonic() - started)))


def _printed(samples: Iterable[WatchSample], as_json: bool) -> int:
    for sample in samples:
        doc = sample.to_dict()
        _say(json.dumps(doc, ensure_ascii=False) if as_json else sample.line)
        _hint_elsewhere(doc)
    return 0


def serve_once(argv: list[str]) -> int | None:
    """``watch [PACKET] --once [--json]`` answered before argparse loads (its
    parser, ``gettext`` and ``locale`` cost ~6 ms of CPU), else ``None``.

    Taken only in a form the parser reads exactly so: ``--once`` once,
    ``--json`` at most once and at most one other word, which is not a flag and
    names an existing packet directory or its manifest (none: the current
    directory is a packet), and a state root ``StateLayout.of_packet`` takes;
    anything else -- another flag, an abbreviation, ``--workspace``, a packet
    that is not one -- is ``None`` and the full command decides, as before.
    What is printed is :func:`cmd_watch`'s: the sample document its
    ``WatchSample.to_dict()`` gives (``watch.facts.sample``'s, which holds its
    paths as text), taken without the library's typed sample, so neither
    ``pathlib`` nor the ``api_*`` modules load.
    """
    rest = argv[1:]
    if rest.count("--once") != 1 or rest.count("--json") > 1:
        return None
    words = [word for word in rest if word not in ("--once", "--json")]
    if len(words) > 1 or (words and (words[0] == "" or words[0].startswith("-"))):
        return None
    # lazy: the argparse-free path of `status` and `control status` reads packets the same way
    from ..state import layout_text
    from .fast import _packet_dir

    packet = _packet_dir(words[0] if words else None)
    if packet is None or layout_text.state_root(packet) is None:
        return None
    given = words[0] if words else os.getcwd()  # what the parser hands cmd_watch
    from ..watch.facts import format_line, sample  # lazy: after the line is known to be ours

    doc = sample(given)  # what api_watch.watch_sample(given).to_dict() gives
    _say(json.dumps(doc, ensure_ascii=False) if "--json" in rest else format_line(doc))
    _hint_elsewhere(doc)
    return 0


def _hint_elsewhere(doc: dict[str, Any]) -> None:
    """On stderr (stdout holds the samples): a sample that found no runner while a
    live run holds one of the packet's repos, its state elsewhere (``--state-dir``):
    how to watch that run (:func:`~prompt_runner.watch.elsewhere.elsewhere_hint`)."""
    if doc.get("runner") != "down" or not isinstance(doc.get("root"), str):
        return
    from ..watch.elsewhere import elsewhere_hint  # lazy: only a sample that found no runner

    repos = [
        (str(repo.get("name")), str(repo.get("path")))
        for repo in doc.get("repo_details") or []
        if isinstance(repo, dict) and repo.get("path")
    ]
    hint = elsewhere_hint(doc["root"], "watch", repos)
    if hint is not None:
        sys.stderr.write(hint + "\n")


def _bounded(args: argparse.Namespace) -> int:
    from ..api_watch import DEFAULT_INTERVAL_S, watch_for  # lazy: see cmd_watch

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

    warned: list[str | None] = [None]

    def show(sample: dict[str, Any]) -> None:
        _say(_json(sample) if args.json else sample_line(sample))
        problem = sample.get("packet_error")
        if problem and problem != warned[0] and not args.json:  # once, as `status` says it
            sys.stderr.write(packet_warning(problem) + "\n")
        warned[0] = problem

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
    stage = s.get("stage")
    if isinstance(stage, dict) and stage.get("name"):
        parts.append(f"stage={stage['name']}")
    if push:
        parts.append(f"push={push.get('status', '?')}")
    parts += [f"dirty={_shown(s.get('dirty'))}", f"commits={_shown(s.get('commits'))}"]
    if s.get("packet_error"):
        parts.append("packet=unloadable")  # shown, not judged (the warning line says why)
    if s.get("healthy"):
        parts.append("ok")
    else:
        parts.append("UNHEALTHY " + "; ".join(describe(v) for v in s.get("violations", [])))
    return " ".join(parts)


def packet_warning(error: str) -> str:
    """The one line a bounded watch says of a packet that does not load (a
    sample's ``packet_error``), once: ``status``'s (cli/status.py)."""
    from .status import packet_warning as status_warning  # lazy: a bounded watch only

    return status_warning(error)


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
