"""``workspace plan|prepare|doctor|import-state|status`` and ``status --workspace``.

Each handler calls one function of :mod:`prompt_runner.api_workspace` and
renders its result: ``--json`` prints the result's document, otherwise a few
lines. Exit codes: ``plan`` 1 when ``prepare`` would refuse something (2
when that is an unmet ``requires``, bad input as ``prepare`` says),
``doctor`` 1 when the workspace is not ready; errors as everywhere (2 bad
input, 3 infrastructure).
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from ..api_workspace import (
    doctor_workspace,
    import_workspace_state,
    plan_workspace,
    prepare_workspace,
    resolve_workspace,
    workspace_status,
)
from ..errors import shown_path
from ._out import emit_json, say
from ._push_text import push_lines


def _ws(args: argparse.Namespace) -> Any:
    given = getattr(args, "workspace_value", None)
    return given if given is not None else resolve_workspace(args.workspace)


def cmd_plan(args: argparse.Namespace) -> int:
    result = plan_workspace(_ws(args))
    if args.json:
        emit_json(result.to_dict())
        return _plan_exit(result)
    say(f"Workspace {result.workspace} ({result.manifest})")
    for repo in result.repositories:
        say(f"  {repo.name:<12} {repo.action:<7} {repo.detail}")
        say(f"  {'':<12} -> {repo.clone}")
    for artifact in result.artifacts:
        say(f"  artifact {artifact['id']}: {' '.join(artifact['build'])} in {artifact['in']}")
    say(f"Packet: {result.packet['dir']}")
    say(f"State: {result.packet['state_dir']}")
    commits = result.settings["commits"]
    say(
        f"Commits: {commits['mode']} (committer {commits['committer']}), push {commits['push']}"
        + (f", branch {commits['branch']}" if commits["branch"] else "")
    )
    say(f"Containment: {result.settings['containment']}")
    for problem in result.problems:
        say(f"Problem: {problem}")
    for note in result.notes:
        say(f"Note: {note}")
    return _plan_exit(result)


def _plan_exit(result: Any) -> int:
    """0 ready, 2 an unmet ``requires`` (bad input, as ``prepare`` refuses it), 1 otherwise."""
    return 2 if result.unmet else 0 if result.ok else 1


def cmd_prepare(args: argparse.Namespace) -> int:
    result = prepare_workspace(_ws(args))
    if args.json:
        emit_json(result.to_dict())
        return 0
    for line in result.actions:
        say(line)
    for line in result.notes:
        say(f"Note: {line}")
    if not result.changed:
        say(f"Workspace {result.workspace}: nothing changed (already prepared).")
    else:
        say(f"Workspace {result.workspace}: prepared.")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    report = doctor_workspace(_ws(args))
    if args.json:
        emit_json(report.to_dict())
        return 0 if report.ready else 1
    marks = {"ok": "ok  ", "warning": "warn", "error": "FAIL"}
    for check in report.checks:
        say(f"{marks[check.level]} {check.name}: {check.message}")
    say("Ready." if report.ready else "Not ready.")
    return 0 if report.ready else 1


def cmd_import_state(args: argparse.Namespace) -> int:
    receipt = import_workspace_state(_ws(args), args.source)
    if args.json:
        emit_json(receipt.to_dict())
        return 0
    say(f"Imported {len(receipt.imported)} completed prompt(s): {', '.join(receipt.imported)}")
    if receipt.skipped:
        left = ", ".join(f"{k} ({v})" for k, v in receipt.skipped.items())
        say(f"Left to run: {left}")
    say(f"Receipt: {receipt.receipt} (source sha256 {receipt.source_sha256[:12]})")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    doc = workspace_status(_ws(args))
    if args.json:
        emit_json(doc)
        return 0
    say(
        f"Workspace {doc['workspace']}: {doc['state']}"
        + (f" (run {doc['run_id']})" if doc["run_id"] else "")
    )
    box = doc["containment"]
    runner = f"alive (pid {box['pid']})" if box["alive"] else "down"
    say(f"Containment: {box['kind']}, runner {runner}")
    prompts = doc["prompts"]
    say(f"Prompts: {prompts['completed']}/{prompts['total']} completed")
    say(f"Last progress: {doc['last_progress_at'] or '(none)'}")
    for text in push_lines(doc["push"]):
        say(text)
    for name, clone in doc["clones"].items():
        say(f"  {name:<12} {_clone_line(clone)}")
    if any(not clone["present"] for clone in doc["clones"].values()):
        manifest = shlex.quote(shown_path(doc["manifest"]))
        say(f"Not prepared: `prompt-runner workspace prepare {manifest}` makes the clones.")
    return 0


def _clone_line(clone: dict[str, Any]) -> str:
    """One clone as ``status --workspace`` shows it: ``BRANCH HEAD dirty=N ahead=N of
    REF``; ``ahead=?`` when there is nothing to count against (no upstream yet);
    a clone not there (never prepared) or unusable says so."""
    if not clone["present"]:
        return f"not prepared (no clone at {shown_path(clone['path'])})"
    if clone["problem"]:
        return f"unusable: {shown_path(clone['path'])} {clone['problem']}"
    if clone["ahead"] is None:
        ahead = "ahead=? (no upstream to count against)"
    else:
        of = f" of {clone['ahead_of']}" if clone["ahead_of"] else ""
        ahead = f"ahead={clone['ahead']}{of}"
    head = str(clone["head"] or "-")[:12]
    return f"{clone['branch'] or '(detached)'} {head} dirty={clone['dirty']} {ahead}"
