"""``commits.push: after_prompt``: push the work branch after each completed prompt.

With the ``push`` run option ``after_prompt`` (a workspace's ``commits.push``,
or ``run --push after_prompt``), :func:`push_after_prompt` runs once a prompt
is recorded ``completed`` -- after its commit, so the commit is already local
and in ``progress.log`` whatever the push does. Each target repo of the
prompt (one per work tree) pushes its checked-out branch:

* to the branch's upstream remote, else ``origin`` (a workspace clone's
  ``origin`` is its manifest's ``remote``), onto the upstream's branch when
  pushing to the upstream's remote, else onto the branch of the same name.
  Nothing is forced, no upstream is set, no configuration is written.
* retried with backoff (:data:`BACKOFF_S`: 1 s, 2 s, 4 s) when git fails to
  reach the remote; a push the remote *rejected* (a hook, a non-fast-forward)
  is not retried, as asking again gets the same answer. A small bounded loop,
  not a retry library: none is a dependency, and four tries need none.
* non-interactive: ``GIT_TERMINAL_PROMPT=0``, and ssh in batch mode unless the
  user set ``GIT_SSH_COMMAND``/``GIT_SSH``; each try has a deadline
  (:data:`PUSH_TIMEOUT_MS`).

A failed push never fails the prompt or the run and never touches the local
commit: it is said on the console and recorded -- in the prompt's record
(``push``) and in the run meta of ``state.json`` (``push``, what ``status
--json`` shows and every watch sample carries)::

    {"status": "ok"|"failed", "at", "prompt_id", "failed": [repo, ...],
     "repos": {name: {"status": "pushed"|"failed", "remote", "branch",
                      "remote_ref", "head", "attempts", "error", "at", "prompt_id"}}}

The run meta keeps each repo's latest outcome, so a repo whose push failed
stays ``failed`` until a later push of it succeeds (the next prompt that
targets it sends every commit still missing on the remote).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .. import git, proc
from ..errors import StateError
from ..state._clock import iso_now
from ..state.atomic import read_json
from ..state.layout import StateLayout
from . import workspace
from .context import RunContext

AFTER_PROMPT = "after_prompt"
"""The ``push`` run option's value that pushes after each completed prompt."""

BACKOFF_S: tuple[float, ...] = (1.0, 2.0, 4.0)
"""Seconds to wait before the 2nd, 3rd and 4th try of a push git could not deliver."""

PUSH_TIMEOUT_MS = 120_000
"""Deadline of one ``git push``, in milliseconds."""

REMOTE_LINES = 5
"""Most ``remote:`` lines of a rejecting remote quoted in the error."""


@dataclass(frozen=True)
class PushOutcome:
    """How the push of one repo went.

    Attributes:
        status: ``pushed`` or ``failed``.
        remote: the remote pushed to (``None`` when none could be chosen).
        branch: the local branch (``None`` on a detached HEAD).
        remote_ref: the ref written on the remote (``refs/heads/main``).
        head: the sha pushed (``None`` when unknown).
        attempts: how many times git was run (0 when nothing could be tried).
        error: why it failed (one sentence), else ``None``.
        at: when the last try ended, ISO 8601 UTC.
    """

    status: str
    remote: str | None
    branch: str | None
    remote_ref: str | None
    head: str | None
    attempts: int
    error: str | None
    at: str

    @property
    def ok(self) -> bool:
        return self.status == "pushed"


def push_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of ``git push``: git's non-interactive pins, and ssh in
    batch mode unless the user chose an ssh command."""
    env = git.git_env(base)
    if "GIT_SSH_COMMAND" not in env and "GIT_SSH" not in env:
        env["GIT_SSH_COMMAND"] = "ssh -o BatchMode=yes"
    return env


def push_repo(
    repo: Path,
    *,
    remote: str | None = None,
    env: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> PushOutcome:
    """Push ``repo``'s checked-out branch (see the module docstring); never raises.

    Args:
        repo: the repo directory.
        remote: the remote to push to (default: the upstream's, else ``origin``).
        env: the environment git inherits (default: the runner's).
        sleep: the backoff's sleep, seconds.
    """
    branch = git.current_branch(repo)
    head = git.head_sha(repo)
    if branch is None:
        return _failed(None, None, None, head, 0, "HEAD is detached, so there is no branch to push")
    up = git.upstream(repo)
    chosen = remote or (up.remote if up else None) or _origin(repo)
    if chosen is None:
        return _failed(
            None,
            branch,
            None,
            head,
            0,
            "the repo has no remote to push to (no upstream, no origin); add one "
            "(git remote add origin URL) or set the push remote",
        )
    dst = up.remote_ref if up is not None and up.remote == chosen else f"refs/heads/{branch}"
    argv = ["git", "push", "--porcelain", chosen, f"refs/heads/{branch}:{dst}"]
    error = ""
    for attempt, wait in enumerate((0.0, *BACKOFF_S), start=1):
        if wait:
            sleep(wait)
        res = proc.run(argv, cwd=repo, env=push_env(env), timeout_ms=PUSH_TIMEOUT_MS)
        if res.ok:
            return PushOutcome("pushed", chosen, branch, dst, head, attempt, None, iso_now())
        rejected, error = push_failure(res, chosen, branch)
        if rejected:
            break
    return _failed(chosen, branch, dst, head, attempt, error)


def push_failure(res: proc.ProcResult, remote: str, branch: str) -> tuple[bool, str]:
    """``(rejected, sentence)`` for a failed ``git push --porcelain``: rejected
    when the remote refused the ref (a ``!`` line), quoting its reason and its
    last ``remote:`` lines; else git's telling line (unreachable, timed out)."""
    where = f"git push {remote} {branch}"
    if res.timed_out:
        return False, f"{where} timed out after {PUSH_TIMEOUT_MS // 1000} s"
    refused = [line for line in res.stdout.splitlines() if line.startswith("!")]
    if refused:
        reason = refused[0].split("\t")[-1].strip()
        said = [
            line.strip()
            for line in res.stderr.splitlines()
            if line.startswith("remote:") and line[7:].strip()
        ][-REMOTE_LINES:]
        quoted = f" ({' / '.join(said)})" if said else ""
        return True, f"{where} was rejected: {reason}{quoted}"
    lines = [line.strip() for line in res.stderr.splitlines() if line.strip()]
    telling = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
    reason = telling or (lines[-1] if lines else res.start_error or f"exit {res.returncode}")
    return False, f"{where} failed: {reason}"


def push_after_prompt(ctx: RunContext, prompt_id: str, repos: Mapping[str, Path]) -> None:
    """Push ``repos`` (a completed prompt's targets) when the run pushes after
    prompts; record and say each outcome. Never raises for a push's failure.

    Args:
        ctx: the run (its ``plan.options.push``, store, console, env and sleep).
        prompt_id: the prompt that just completed.
        repos: its target repos, name -> directory.
    """
    if ctx.plan.options.push != AFTER_PROMPT:
        return
    outcomes: dict[str, PushOutcome] = {}
    seen: set[Path] = set()
    for name, path in repos.items():
        tree = workspace.toplevel(path) or path
        if tree in seen:
            continue  # repos that share one work tree push once
        seen.add(tree)
        outcomes[name] = push_repo(path, env=ctx.env, sleep=ctx.sleep)
    if not outcomes:
        return
    for name, outcome in outcomes.items():
        where = f"{outcome.remote} {outcome.branch}"
        if outcome.ok:
            ctx.console.say(f"↑ {prompt_id} pushed {name} to {where} ({(outcome.head or '')[:12]})")
        else:
            ctx.console.say(
                f"warning: [{prompt_id}] the push of {name} failed after {outcome.attempts} "
                f"tr{'y' if outcome.attempts == 1 else 'ies'}: {outcome.error}; the commit stays "
                "local and the next push of this repo sends it"
            )
    record_push(ctx, prompt_id, outcomes)


def record_push(ctx: RunContext, prompt_id: str, outcomes: Mapping[str, PushOutcome]) -> None:
    """Save ``outcomes`` in the prompt's record and merge them into the run meta."""
    at = iso_now()
    now = {name: {**asdict(o), "prompt_id": prompt_id} for name, o in outcomes.items()}
    mine = "ok" if all(o.ok for o in outcomes.values()) else "failed"
    ctx.store.update_prompt(prompt_id, {"push": {"status": mine, "at": at, "repos": now}})
    repos = {**_previous_repos(ctx), **now}
    failed = sorted(name for name, entry in repos.items() if entry.get("status") != "pushed")
    ctx.store.set_run_meta(
        {
            "push": {
                "status": "failed" if failed else "ok",
                "at": at,
                "prompt_id": prompt_id,
                "failed": failed,
                "repos": repos,
            }
        }
    )


def _previous_repos(ctx: RunContext) -> dict[str, Any]:
    """Each repo's latest push outcome in the run meta (``state.json`` for a file
    store, which its writer rewrote when it last set it)."""
    root = ctx.store.root
    try:
        doc = ctx.store.load_state() if root is None else read_json(StateLayout(root).state_json)
    except (FileNotFoundError, StateError):
        return {}
    push = doc.get("push") if isinstance(doc, dict) else None
    repos = push.get("repos") if isinstance(push, dict) else None
    return dict(repos) if isinstance(repos, dict) else {}


def _origin(repo: Path) -> str | None:
    res = git.run_git(repo, "remote")
    names = res.stdout.split() if res.ok else []
    return "origin" if "origin" in names else (names[0] if len(names) == 1 else None)


def _failed(
    remote: str | None,
    branch: str | None,
    dst: str | None,
    head: str | None,
    attempts: int,
    error: str,
) -> PushOutcome:
    return PushOutcome("failed", remote, branch, dst, head, attempts, error, iso_now())
