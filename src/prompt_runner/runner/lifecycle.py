"""Run lifecycle guards and bookkeeping around the attempt loop.

What happens before a run may start (nothing unfinished is sent, a lost
progress log is not mistaken for a new run), when it opens (uncommitted user
changes named, a crashed run's records settled, amendments waiting for the
next run claimed) and when it is interrupted.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from .. import git
from ..control.amendments import claim_pending
from ..control.verifying import changed_contracts
from ..errors import StateError, UserError
from ..packet.loader import Packet
from ..planning import Plan, PromptPlan
from ..render.text import Console
from ..state._clock import iso_now
from ..state.layout import StateLayout
from ..state.records import AttemptStatus, PromptStatus
from ..state.store import RuntimeStore
from . import leftovers, workspace
from .context import RunContext
from .judging import regenerated_outputs
from .shown import listed
from .workspace import Carry, Snapshot

PLACEHOLDER_WORD = "prompt_runner:placeholder"
"""Text every scaffold placeholder marker holds (``packet.lint.context.PLACEHOLDER_MARKER``
matches nothing without it; a test pins it): a body without it is not searched, and
the run does not import the lint room (~5 ms of start-up)."""


def check_ready_to_send(p: Plan, console: Console) -> None:
    """Refuse to send an unfinished scaffold; warn about unverifiable prompts.

    Raises:
        UserError: a selected prompt's body still has scaffold placeholder markers
            (the template's instructions would be sent as the task).
    """
    for pp in p.selected_prompts():
        names: list[str] = []
        if PLACEHOLDER_WORD in pp.prompt.body:
            from ..packet.lint.context import PLACEHOLDER_MARKER  # lazy: see PLACEHOLDER_WORD

            names = PLACEHOLDER_MARKER.findall(pp.prompt.body)
        if names:
            raise UserError(
                f"the body still has scaffold placeholders ({', '.join(names)})",
                file=p.packet.display(pp.prompt.file),
                fix="write those sections and delete their `<!-- prompt_runner:placeholder` "
                "lines before running it",
            )
        if pp.prompt.contract.is_empty():
            console.say(
                f"warning: [{pp.id}] has no verify items: nothing can check its work, so it "
                "completes whenever the session ends; add a `verify:` contract"
            )


def check_progress_not_lost(store: RuntimeStore) -> None:
    """``--remaining`` with no progress.log while state records completions: the
    resume source was lost; refuse instead of re-running everything."""
    root = store.root
    progress = StateLayout(root).progress_log if root is not None else None
    if progress is None or progress.exists():
        return
    done = sorted(
        pid
        for pid, record in store.load_state().get("prompts", {}).items()
        if record.get("status") == PromptStatus.COMPLETED
    )
    if done:
        raise StateError(
            f"is missing, but the state records completed prompts ({', '.join(done)})",
            file=progress,
            fix="restore progress.log from a backup, or name the prompts to run "
            "(or pass --all) instead of --remaining",
        )


CONTRACT_CHANGED = "contract_changed"
"""The status ``--remaining`` sees for a completion judged under another contract."""


def reopen_changed_contracts(
    packet: Packet,
    root: Path | None,
    progress: Mapping[str, str],
    records: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, str]:
    """``progress`` with each completed prompt whose completion was judged under
    another contract than its prompt file's now (amended with ``--persist`` after
    it completed, or edited) marked :data:`CONTRACT_CHANGED`: not completed for
    ``--remaining`` (see ``control/verifying.py``). ``records``: the prompt
    records already read from ``root``, if any (``changed_contracts``).

    Raises:
        StateError: a prompt log is corrupt.
    """
    out = dict(progress)
    if root is None:
        return out
    done = [k for k, v in progress.items() if v == PromptStatus.COMPLETED]
    for prompt_id in changed_contracts(packet, root, done, records):
        out[prompt_id] = CONTRACT_CHANGED
    return out


INTERRUPTED_RERUN = "interrupted_rerun"
"""The status ``--remaining`` sees for a completed prompt a later run re-ran and lost."""


def reopen_interrupted_reruns(store: RuntimeStore, progress: Mapping[str, str]) -> dict[str, str]:
    """``progress`` with each prompt ``progress.log`` calls completed but the state
    left ``running``, ``repairing`` or ``interrupted`` marked
    :data:`INTERRUPTED_RERUN`: a later run (``--new-run``, ids, ``--all``) re-ran
    it and died or was stopped before the re-run ended, so its work is not known
    to be whole and ``--remaining`` runs it again (the run it resumes then settles
    the record, see :func:`settle_interrupted`).

    Raises:
        StateError: ``state.json`` is damaged.
    """
    out = dict(progress)
    unfinished = (PromptStatus.RUNNING, PromptStatus.REPAIRING, PromptStatus.INTERRUPTED)
    for prompt_id, record in store.load_state().get("prompts", {}).items():
        if out.get(prompt_id) == PromptStatus.COMPLETED and record.get("status") in unfinished:
            out[prompt_id] = INTERRUPTED_RERUN
    return out


def claim_amendments(p: Plan, root: Path, run_id: str, console: Console) -> None:
    """A new run adopts the run-local amendments made while no run was unfinished."""
    for prompt_id in p.selected:
        count = claim_pending(root, prompt_id, run_id)
        if count:
            console.say(
                f"[{prompt_id}] this run enforces {count} run-local contract amendment(s) "
                "(see `control contract`)"
            )


def settle_interrupted(store: RuntimeStore, console: Console) -> dict[str, dict[str, Any]]:
    """Resuming: record what a dead run left "running" as interrupted.

    Returns the interrupted prompts' records (as they were), by prompt id:
    those a dead runner left running, those a live runner recorded
    ``interrupted`` as a stop, Ctrl-C or SIGTERM ended their session, and those
    recorded ``commit_failed`` (verified, but a hook or git refused the commit,
    in a prompt over several repos perhaps after some repos were committed) --
    either way the session's work may sit uncommitted
    (:func:`adopt_interrupted_work`).
    """
    interrupted: dict[str, dict[str, Any]] = {}
    state = store.load_state()
    for prompt_id, record in state.get("prompts", {}).items():
        attempts = record.get("attempts", [])
        for key, attempt in enumerate(attempts, start=1):
            if attempt.get("status") == AttemptStatus.RUNNING:
                store.finish_attempt(
                    prompt_id,
                    key,
                    {"status": AttemptStatus.INTERRUPTED, "reason": "the runner died"},
                )
        if record.get("status") in (PromptStatus.RUNNING, PromptStatus.REPAIRING):
            store.update_prompt(
                prompt_id,
                {"status": PromptStatus.INTERRUPTED, "reason": "the runner died mid-prompt"},
            )
            console.say(f"[{prompt_id}] was interrupted when the previous runner died")
            interrupted[prompt_id] = record
        elif record.get("status") == PromptStatus.INTERRUPTED:
            interrupted[prompt_id] = record  # ended by a stop: its runner recorded it
        elif record.get("status") == PromptStatus.COMMIT_FAILED:
            interrupted[prompt_id] = record  # verified work its failed commit left
    return interrupted


def adopt_interrupted_work(
    p: Plan,
    interrupted: Mapping[str, Mapping[str, Any]],
    foreign: dict[str, set[str]],
    console: Console,
) -> dict[str, dict[str, set[str]]]:
    """Give an interrupted prompt back the work its dead runner left uncommitted
    (or a ``commit_failed`` prompt the verified work its refused commit left).

    A runner that dies after a session wrote files but before the commit
    leaves them dirty; the next run would otherwise take them for the user's
    own changes and never commit them. Each prompt records the dirty paths of
    its target repos when it starts (``dirty_at_start``); what is dirty now
    and was not then is that prompt's work -- except what its contract's
    commands wrote: when the runner died after a session ended (verifying, or
    before the commit), the record says what was dirty then
    (``leftovers.FIELD``) and only that, with the ``regenerates:`` outputs, is
    the prompt's; and never a ``regenerates:`` output's backup
    (``<name>.prompt-runner-verifier-backup``, put back by the next
    verification). For each interrupted prompt this run will execute, those
    paths are removed from ``foreign`` (in place) and returned per repo, to be
    committed with the prompt; the rest stays the user's, uncommitted.
    """
    adopted: dict[str, dict[str, set[str]]] = {}
    for prompt_id in p.selected:
        record = interrupted.get(prompt_id)
        at_start = record.get("dirty_at_start") if record else None
        if not isinstance(at_start, dict):
            continue
        pp = p.prompt(prompt_id)
        bounds = session_bounds(pp, p.packet.repos, record)
        mine: dict[str, set[str]] = {}
        for repo in pp.prompt.targets:
            before = at_start.get(repo)
            if not isinstance(before, list) or repo not in foreign:
                continue
            paths = {x for x in foreign[repo] - set(before) if not leftovers.is_verifier_backup(x)}
            if repo in bounds:
                paths &= bounds[repo]
            if paths:
                mine[repo] = paths
                foreign[repo] -= paths
        if mine:
            adopted[prompt_id] = mine
            shown = listed(sorted(path for paths in mine.values() for path in paths))
            failed = record is not None and record.get("status") == PromptStatus.COMMIT_FAILED
            what = "its failed commit" if failed else "its interrupted run"
            console.say(
                f"[{prompt_id}] {what} left uncommitted work ({shown}); "
                "it is committed with the prompt when the prompt completes"
            )
    return adopted


def session_bounds(
    pp: PromptPlan, repos: Mapping[str, Path], record: Mapping[str, Any] | None
) -> dict[str, set[str]]:
    """Per target repo of ``pp`` whose record says what was dirty as its last
    session ended (``leftovers.FIELD``: its runner died verifying or before
    the commit), the most its uncommitted work can be: those paths and the
    outputs of its ``regenerates:`` commands (``repos``: name -> directory).
    Repos it does not say (a session may have been writing) are left out.
    """
    bounds: dict[str, set[str]] = {}
    regenerated: dict[str, set[str]] | None = None
    for repo in pp.prompt.targets:
        bound = leftovers.session_work(record, repo)
        if bound is None:
            continue
        if regenerated is None:  # git calls only for a declared output
            regenerated = regenerated_outputs(pp, repos, pp.prompt.contract)
        bounds[repo] = bound | regenerated.get(repo, set())
    return bounds


def cleaned_message(text: str) -> str:
    """``text`` as ``git commit --cleanup=whitespace`` stores it: each line's
    trailing whitespace gone, runs of blank lines made one, blank lines at
    either end gone, one final newline (``""`` for a blank message)."""
    lines: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""


FOUND_COMMIT_SLACK_S = 1
"""Seconds a found commit's committer time may precede the prompt's recorded
``started_at`` (whole seconds) and still be its commit."""


def found_commit(repo: Path, start: str, message: str, started_at: str | None) -> str | None:
    """The commit a runner killed right after committing a prompt left in ``repo``.

    The rule is strict, so that a user's own commit is never claimed: walking
    ``repo``'s HEAD back along first parents to ``start`` (the HEAD recorded as
    the prompt started), the first commit after ``start`` is the prompt's when
    its only parent is ``start`` (or, for a ``start`` of
    :data:`~prompt_runner.runner.workspace.UNBORN`, it is the repo's root
    commit), its message is ``message`` as git stores it
    (:func:`cleaned_message`) and its committer time is not before
    ``started_at`` (ISO 8601 UTC; :data:`FOUND_COMMIT_SLACK_S` of slack).
    Commits made on top of it later are not the prompt's and are not named.
    One git process, two when HEAD moved (this is a resumed run's check, not a
    prompt's).

    Returns:
        The commit's sha, or ``None`` (HEAD did not move past ``start``, the
        history does not go through it, or the first commit is not the
        prompt's).
    """
    unborn = start == workspace.UNBORN  # then the prompt's commit is the repo's root
    span = "HEAD" if unborn else f"{start}..HEAD"
    walk = git.run_git(repo, "rev-list", "--first-parent", "--reverse", span)
    first = walk.stdout.split("\n", 1)[0].strip() if walk.ok else ""
    if not first:
        return None
    shown = git.run_git(repo, "show", "-s", "--format=%P%x00%ct%x00%B", first)
    parts = shown.stdout.split("\0", 2) if shown.ok else []
    if len(parts) != 3 or parts[0].split() != ([] if unborn else [start]):
        return None
    when, body = parts[1], parts[2]  # a newline `--format` adds is blank: cleaned off
    if cleaned_message(body) != cleaned_message(message):
        return None
    if started_at is not None:
        try:
            began = datetime.fromisoformat(started_at).timestamp()
            if int(when) < began - FOUND_COMMIT_SLACK_S:
                return None
        except ValueError:
            return None
    return first


def found_commits(
    pp: PromptPlan, repos: Mapping[str, Path], record: Mapping[str, Any]
) -> dict[str, str]:
    """Per target repo of ``repos``, the commit an interrupted execution of ``pp``
    made before its runner died (:func:`found_commit`), from the HEADs its
    ``record`` saved as it started (``head_at_start``). Names sharing one work
    tree name the commit once, under the first (as the committer does).

    Returns:
        repo name -> sha; empty when the record saved no HEADs or none is found.
    """
    starts = record.get("head_at_start")
    if not isinstance(starts, Mapping):
        return {}
    message = pp.prompt.commit_message
    started_at = record.get("started_at")
    began = started_at if isinstance(started_at, str) else None
    out: dict[str, str] = {}
    for name, path in repos.items():
        start = starts.get(name)
        if not isinstance(start, str):
            continue
        sha = found_commit(path, start, message, began)
        if sha is not None and sha not in out.values():
            out[name] = sha
    return out


def without_adopted(snap: Snapshot, adopted: Mapping[str, Mapping[str, set[str]]]) -> Snapshot:
    """``snap`` minus the rows of paths adopted by interrupted prompts (they are
    prompts' work, not the user's; see :func:`adopt_interrupted_work`)."""
    taken: dict[str, set[str]] = {}
    for per_repo in adopted.values():
        for repo, paths in per_repo.items():
            taken.setdefault(repo, set()).update(paths)
    if not taken:
        return snap
    out: Snapshot = {}
    for name, value in snap.items():
        if value is None or name not in taken:
            out[name] = value
        else:
            out[name] = value._replace(
                rows=tuple(r for r in value.rows if r.path not in taken[name])
            )
    return out


def selected_target_repos(p: Plan) -> dict[str, Path]:
    """The repos the selected prompts target (name -> directory, sorted by name)."""
    names = sorted({t for pp in p.selected_prompts() for t in pp.prompt.targets} - {"packet"})
    return {n: p.packet.repos[n] for n in names if n in p.packet.repos}


def foreign_changes(p: Plan) -> tuple[dict[str, set[str]], Carry]:
    """The uncommitted changes already in the target repos, per repo (the
    engine warns again if a prompt edits one of them), and the snapshot as a
    :class:`~prompt_runner.runner.workspace.Carry` the first session may start
    from. Said by :func:`warn_foreign_changes` once the interrupted prompts
    have taken back their own (:func:`adopt_interrupted_work`). A clone inside a
    target repo that the packet declares as a repo of its own is not a change
    of the outer repo (git lists it there as untracked ``dir/`` for good)."""
    repos = selected_target_repos(p)
    snap = workspace.snapshot(repos)
    dirty = workspace.dirty_paths(snap)
    if any(path.endswith("/") for paths in dirty.values() for path in paths):
        for name, inner in workspace.nested_roots(repos, p.packet.repos).items():
            if name in dirty:
                dirty[name] -= {f"{path}/" for path in inner}
    return dirty, workspace.Carry.now(snap, repos)


def warn_foreign_changes(found: Mapping[str, set[str]], console: Console) -> None:
    """Say which uncommitted changes already sit in the target repos: the runner
    commits only each prompt's own work, so these stay uncommitted. A killed
    verification's ``regenerates:`` backup is not named: it is no one's change,
    and the next verification puts it back."""
    for name, found_paths in sorted(found.items()):
        paths = {p for p in found_paths if not leftovers.is_verifier_backup(p)}
        if paths:
            shown = listed(sorted(paths))
            console.say(
                f"warning: repo {name!r} already has uncommitted changes ({shown}); "
                "the runner commits only each prompt's own work, so these stay uncommitted "
                "unless a prompt edits one of them or its contract names one as an output"
            )


def record_interruption(ctx: RunContext) -> None:
    """Ctrl-C / SIGTERM mid-prompt: say so in state instead of leaving "running"."""
    prompt_id = ctx.position.prompt_id
    if not prompt_id:
        return
    key = ctx.position.attempt_key
    try:
        if key is not None:
            ctx.store.finish_attempt(
                prompt_id,
                key,
                {"status": AttemptStatus.INTERRUPTED, "completed_at": iso_now(millis=True)},
            )
        record = ctx.store.load_prompt(prompt_id)
        if record.get("status") in (PromptStatus.RUNNING, PromptStatus.REPAIRING, None):
            ctx.store.update_prompt(
                prompt_id, {"status": PromptStatus.INTERRUPTED, "reason": "the run was interrupted"}
            )
    except Exception as exc:  # never mask the interruption itself
        # a StorageError's sentence as it is; anything else named by its type too
        shown = str(exc) if isinstance(exc, OSError) and str(exc) else repr(exc)
        ctx.console.say(f"warning: could not record the interruption: {shown}")
