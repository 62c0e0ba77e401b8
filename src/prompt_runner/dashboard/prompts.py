"""The run page's prompt list: status, attempt history, verifier reports, commits.

Read from the prompt records (``prompts/<id>.jsonl``, folded as every reader
folds them), the interventions (steers) and amendments audit files, and --
for a commit's diff -- the packet's repos with ``git show``. Read only; a
damaged record is shown as that prompt's ``error`` and the others still show.

The verifier report of each attempt lists unmet items first (failures, then
faults, then passes), each with its details and the command's output, capped.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .. import git
from ..errors import PromptRunnerError
from ..state.current_run import read_current_run
from ..state.jsonl import read_records
from ..state.prompt_log import fold_prompt_log
from ..watch import manifest_repos
from .present import capped
from .sources import RunSource

_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_SHA = re.compile(r"[0-9a-f]{7,64}")
MAX_DIFF = 400_000
"""Characters of a commit's ``git show`` kept for the page."""

_VERDICT_ORDER = {"failure": 0, "fault": 1, "timeout": 1}


def prompt_ids(source: RunSource) -> list[str]:
    """The prompts the page lists: the current run's targets in order, then any other
    prompt with a record (sorted)."""
    ids: list[str] = []
    try:
        current = read_current_run(source.layout.current_run) or {}
    except PromptRunnerError:
        current = {}
    targets = current.get("targets")
    if isinstance(targets, list):
        ids.extend(t for t in targets if isinstance(t, str) and _ID.fullmatch(t))
    try:
        recorded = sorted(p.stem for p in source.layout.prompts_dir.glob("*.jsonl"))
    except OSError:
        recorded = []
    ids.extend(r for r in recorded if r not in ids and _ID.fullmatch(r))
    return ids


def _report(verifier: object) -> dict[str, Any] | None:
    if not isinstance(verifier, dict):
        return None
    items = [i for i in verifier.get("items") or [] if isinstance(i, dict)]

    def order(item: dict[str, Any]) -> int:
        if item.get("pass"):
            return 2
        return _VERDICT_ORDER.get(str(item.get("verdict")), 0)

    shown = [
        {
            "kind": i.get("kind"),
            "repo": i.get("repo"),
            "path": i.get("path"),
            "command": i.get("command"),
            "cwd": i.get("cwd"),
            "pass": bool(i.get("pass")),
            "verdict": i.get("verdict"),
            "details": capped(i.get("details") or "", 4000),
            "output": capped(i["output"]) if i.get("output") else None,
        }
        for i in sorted(items, key=order)
    ]
    return {
        "pass": bool(verifier.get("pass")),
        "unmet": sum(1 for i in shown if not i["pass"]),
        "items": shown,
    }


def _attempt(doc: dict[str, Any]) -> dict[str, Any]:
    failure = doc.get("failure") if isinstance(doc.get("failure"), dict) else None
    return {
        "attempt": doc.get("attempt"),
        "mode": doc.get("mode"),
        "status": doc.get("status"),
        "provider": doc.get("provider"),
        "model": doc.get("model"),
        "started_at": doc.get("started_at"),
        "completed_at": doc.get("completed_at"),
        "duration_ms": doc.get("duration_ms"),
        "failure_class": doc.get("failure_class"),
        "failure_message": capped(failure.get("message"), 2000) if failure else None,
        "decision": doc.get("decision"),
        "reason": doc.get("reason"),
        "cost_usd": doc.get("cost_usd"),
        "tool_count": doc.get("tool_count"),
        "verifier": _report(doc.get("verifier")),
    }


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _audit(path: Path, limit: int = 200) -> list[dict[str, Any]]:
    try:
        return read_records(path, strict=False)[-limit:]
    except PromptRunnerError:
        return []


def prompt_entry(source: RunSource, prompt_id: str, *, live: bool) -> dict[str, Any]:
    """One prompt of the list (see the module docstring); never raises.

    Args:
        live: a runner holds the run; when none does, what the record calls
            ``running`` was interrupted and is shown so.
    """
    entry: dict[str, Any] = {"id": prompt_id, "error": None}
    try:
        record, last_at = fold_prompt_log(source.layout.prompt_log(prompt_id))
    except PromptRunnerError as exc:
        entry["error"] = str(exc)
        record, last_at = {"attempts": []}, None
    status = record.get("status") or "pending"
    if not live and status in ("running", "repairing"):
        status = "interrupted"
    attempts = [_attempt(a) for a in record.get("attempts", []) if isinstance(a, dict)]
    if not live:
        for a in attempts:
            if a["status"] == "running":
                a["status"] = "interrupted"
    commit_info = _mapping(record.get("commit_info"))
    commits = _mapping(commit_info.get("commits"))
    steers = _audit(source.layout.interventions(prompt_id))
    entry.update(
        {
            "name": record.get("name"),
            "status": status,
            "reason": record.get("reason"),
            "updated_at": last_at,
            "steer_count": record.get("steer_count") or len(steers),
            "cost_usd": record.get("cost_usd"),
            "attempts": attempts,
            "last_verifier": _report(record.get("last_verifier")),
            "commits": {str(k): str(v) for k, v in commits.items() if isinstance(v, str)},
            "interventions": [
                {
                    "at": s.get("at"),
                    "author": s.get("author"),
                    "text": capped(s.get("text") or "", 4000),
                    "attempt": s.get("attempt"),
                    "delivery": s.get("delivery"),
                }
                for s in steers
            ],
            "amendments": [
                {
                    "at": a.get("at"),
                    "author": a.get("author"),
                    "direction": a.get("direction"),
                    "operation": a.get("operation"),
                    "reason": a.get("reason"),
                    "phase": a.get("phase"),
                    "change": capped(a.get(str(a.get("operation"))) or "", 2000),
                }
                for a in _audit(source.layout.amendments(prompt_id))
            ],
        }
    )
    return entry


def prompt_list(source: RunSource, *, live: bool) -> list[dict[str, Any]]:
    """Every prompt of :func:`prompt_ids`, as :func:`prompt_entry`."""
    return [prompt_entry(source, pid, live=live) for pid in prompt_ids(source)]


def commit_diff(source: RunSource, repo: str, sha: str) -> str | None:
    """``git show`` of a commit a prompt of this run recorded (stat and patch), capped.

    Only commits named in a prompt record of ``source`` are shown, in the repo
    the record names (looked up in the packet's manifest), so the page cannot
    make the server read another repository or object.

    Returns:
        The text, or ``None`` when no prompt of this run recorded that commit.

    Raises:
        PromptRunnerError: the manifest cannot be read, or git failed (the message says why).
    """
    if not _SHA.fullmatch(sha):
        return None
    recorded = any(
        entry["commits"].get(repo) == sha
        for entry in (prompt_entry(source, pid, live=True) for pid in prompt_ids(source))
    )
    if not recorded:
        return None
    _, repos = manifest_repos(source.packet)
    path = next((r.path for r in repos if r.name == repo), None)
    if path is None:
        raise PromptRunnerError(f"the manifest names no repo {repo!r} any more")
    result = git.run_git(path, "show", "--no-color", "--stat", "--patch", "--format=fuller", sha)
    if not result.ok:
        reason = result.start_error or result.stderr.strip() or f"exit {result.returncode}"
        raise PromptRunnerError(f"{path}: `git show {sha}` failed: {reason}")
    return capped(result.stdout, MAX_DIFF)
