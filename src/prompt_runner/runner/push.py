"""``commits.push: after_prompt``: push the work branch after each completed prompt.

With the ``push`` run option ``after_prompt`` (a workspace's ``commits.push``,
or ``run --push after_prompt``), :func:`push_after_prompt` runs once a prompt
is recorded ``completed`` -- after its commit, so the commit is already local
and in ``progress.log`` whatever the push does. Each target repo of the
prompt (one per work tree) pushes its checked-out branch:

* to the remote plain ``git push`` pushes to (:func:`push_target`):
  ``branch.<b>.pushRemote``, else ``remote.pushDefault``, else the branch's
  upstream remote, else ``origin`` (or the repo's only remote; a workspace
  clone's ``origin`` is its manifest's ``remote``) -- onto the branch of the
  same name. Only where git itself would push elsewhere does it: with
  ``push.default=upstream`` onto the upstream's branch (when the push remote is
  the upstream's; git refuses otherwise, and so does this), and through the
  remote's own ``remote.<r>.push`` refspecs when it has some; with
  ``push.default=nothing`` (and no such refspecs) plain ``git push`` pushes
  nothing, and this refuses too. So ``git checkout
  -b my-feature origin/main`` pushes ``my-feature``, never ``main``. The ref
  recorded and said is the one git reports it updated. Nothing is forced, no
  upstream is set, no configuration is written.
* retried with backoff (:data:`BACKOFF_S`: 1 s, 2 s, 4 s) when git fails to
  reach the remote; a push that was *refused* -- by the remote (a
  ``pre-receive`` hook, a non-fast-forward), by the repo's own ``pre-push``
  hook, whatever the hook prints, or because the push remote names no remote
  -- is not retried, as asking again gets the same answer; its error quotes the
  hook's last lines. Nor is one the remote refused to authenticate (``could
  not read Username``, ``Authentication failed``, ``Permission denied
  (publickey)``) or one whose URL holds no repository (``Repository not
  found``, ``does not appear to be a git repository`` for a path this repo
  never reached): its error names the remote and says to fix the credentials
  or the URL.
  A small bounded loop, not a retry library: none is a dependency, and four
  tries need none.
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

import os
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
        remote: the remote to push to (default: git's push remote, see
            :func:`push_target`).
        env: the environment git inherits (default: the runner's).
        sleep: the backoff's sleep, seconds.
    """
    branch = git.current_branch(repo)
    head = git.head_sha(repo)
    if branch is None:
        return _failed(None, None, None, head, 0, "HEAD is detached, so there is no branch to push")
    target = push_target(repo, branch, remote=remote)
    if target.error is not None:
        return _failed(target.remote, branch, target.remote_ref, head, 0, target.error)
    chosen = target.remote
    assert chosen is not None  # a target without an error names its remote
    argv = ["git", "push", "--porcelain", chosen, target.refspec]
    error, dst = "", target.remote_ref
    for attempt, wait in enumerate((0.0, *BACKOFF_S), start=1):
        if wait:
            sleep(wait)
        res = proc.run(argv, cwd=repo, env=push_env(env), timeout_ms=PUSH_TIMEOUT_MS)
        dst = _updated_ref(res.stdout, f"refs/heads/{branch}") or target.remote_ref
        if res.ok:
            return PushOutcome("pushed", chosen, branch, dst, head, attempt, None, iso_now())
        rejected, error = push_failure(res, chosen, branch, dst, repo=repo)
        if rejected:
            break
    return _failed(chosen, branch, dst, head, attempt, error)


@dataclass(frozen=True)
class PushTarget:
    """Where :func:`push_repo` sends a branch: what plain ``git push`` would pick.

    Attributes:
        remote: the push remote (``None`` when there is none).
        refspec: the refspec handed to git: ``refs/heads/<b>`` (git maps it
            through ``remote.<r>.push`` when the remote has such refspecs, else
            onto the same name), or ``refs/heads/<b>:<upstream ref>`` under
            ``push.default=upstream``.
        remote_ref: the ref on the remote known before pushing (``None`` when
            git's mapping decides it; the outcome names the one git updated).
        error: why nothing can be pushed (one sentence with the fix), else ``None``.
    """

    remote: str | None
    refspec: str
    remote_ref: str | None
    error: str | None = None


def push_target(repo: Path, branch: str, *, remote: str | None = None) -> PushTarget:
    """The push remote and refspec of ``branch`` in ``repo``, as ``git push``
    chooses them (git-push(1), git-config(1) ``push.default``); never raises.

    The remote: ``remote`` when given, else ``branch.<b>.pushRemote``, else
    ``remote.pushDefault``, else ``branch.<b>.remote`` (git's
    ``%(push:remotename)``), else ``origin`` or the repo's only remote. The ref:
    the same branch name -- what ``push.default`` ``simple`` (in a triangular
    workflow), ``current`` and ``matching`` push, and what ``simple`` would
    refuse rather than push to a differently named upstream -- unless the
    remote has ``remote.<r>.push`` refspecs (git maps the branch through them)
    or ``push.default=upstream`` (onto the upstream's branch; refused, as git
    refuses it, when the push remote is not the upstream's remote). With
    ``push.default=nothing`` and no such refspecs, plain ``git push`` pushes
    nothing: the target is an error, as git's refusal is.
    """
    fmt = "%(push:remotename)%00%(upstream:remotename)%00%(upstream:remoteref)"
    res = git.run_git(repo, "for-each-ref", f"--format={fmt}", f"refs/heads/{branch}")
    fields = [*res.stdout.rstrip("\n").split("\0"), "", "", ""] if res.ok else ["", "", ""]
    push_remote, up_remote, up_ref = fields[:3]
    if push_remote == ".":  # the branch tracks a local branch: no remote of its own
        push_remote = ""
    chosen = remote or push_remote or _origin(repo)
    same = f"refs/heads/{branch}"
    if chosen is None:
        return PushTarget(
            None,
            same,
            None,
            "the repo has no remote to push to (no upstream, no origin); add one "
            "(git remote add origin URL) or set the push remote",
        )
    if _config(repo, "--get-all", f"remote.{chosen}.push"):
        return PushTarget(chosen, same, None)  # git maps the branch by the remote's refspecs
    default = _config(repo, "--get", "push.default")
    if default == "nothing":
        return PushTarget(
            chosen,
            same,
            None,
            "push.default is 'nothing', so plain git push pushes nothing and neither does "
            f"this; set push.default to 'simple' or 'current', or give remote.{chosen}.push "
            "a refspec",
        )
    if default == "upstream" and up_ref and up_remote != ".":
        if up_remote != chosen:
            return PushTarget(
                chosen,
                same,
                None,
                f"push.default is 'upstream' but {branch}'s push remote {chosen!r} is not "
                f"its upstream's remote {up_remote!r}, so git would not push it either; "
                f"set branch.{branch}.pushRemote to {up_remote!r}, or push.default to "
                "'current' or 'simple'",
            )
        return PushTarget(chosen, f"{same}:{up_ref}", up_ref)
    return PushTarget(chosen, same, same)


def branch_onto(branch: str, remote_ref: str | None) -> str:
    """``branch``, or ``branch:<the remote's ref>`` when the push went to a ref
    of another name (``my-fix:main``, ``feat:refs/for/feat``)."""
    if remote_ref is None or remote_ref == f"refs/heads/{branch}":
        return branch
    return f"{branch}:{remote_ref.removeprefix('refs/heads/')}"


def _updated_ref(porcelain: str, src: str) -> str | None:
    """The remote ref ``git push --porcelain`` reports for ``src`` (its
    ``<flag>\t<src>:<dst>\t<summary>`` line), else ``None``."""
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and len(parts[0]) == 1:
            got, sep, dst = parts[1].partition(":")
            if sep and got == src and dst:
                return dst
    return None


def _config(repo: Path, *args: str) -> str:
    """``git config <args>``'s value (stripped), ``''`` when unset."""
    res = git.run_git(repo, "config", *args)
    return res.stdout.strip() if res.ok else ""


def push_failure(
    res: proc.ProcResult,
    remote: str,
    branch: str,
    remote_ref: str | None = None,
    *,
    repo: Path | None = None,
) -> tuple[bool, str]:
    """``(final, sentence)`` for a failed ``git push --porcelain``; never raises.

    ``final`` (asking again gets the same answer, so it is not retried) when:

    * the remote refused the ref (a ``!`` line: a non-fast-forward, a
      ``pre-receive`` hook's ``[remote rejected]``) -- quoting its reason and
      its last ``remote:`` lines (:data:`REMOTE_LINES`);
    * ``repo``'s own ``pre-push`` hook refused it (the repo has one, and git
      gave up -- ``error: failed to push some refs`` -- with no ``fatal:``
      line) -- quoting the hook's last output lines (:data:`REMOTE_LINES`);
    * ``remote`` is no remote of ``repo`` and git could not read it as a
      repository either (``'nosuch' does not appear to be a git repository``).

    Else (unreachable, timed out) ``(False, git's telling line)``: worth a retry.

    Args:
        res: the failed push's result.
        remote: the remote pushed to.
        branch: the local branch pushed.
        remote_ref: the ref on the remote, named when it is not ``branch``'s
            own name (``git push origin my-fix:main``).
        repo: the repo pushed from (``None``: neither the pre-push hook nor the
            remote's name is looked up, so only the remote's refusal is final).
    """
    where = f"git push {remote} {branch_onto(branch, remote_ref)}"
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
    # git reaches the remote before it runs the pre-push hook, so a failure to
    # reach it ends in git's own fatal: line; a hook refusal ends in git's
    # "failed to push some refs" whatever the hook printed (fatal: lines too)
    gave_up = bool(lines) and lines[-1].startswith("error: failed to push")
    if repo is not None and gave_up and _has_hook(repo, "pre-push"):
        said = [  # the hook's stdout reaches git's (after no porcelain line), its stderr git's
            *(ln.strip() for ln in res.stdout.splitlines() if not _porcelain(ln)),
            *(ln for ln in lines if not ln.startswith("error: failed to push")),
        ]
        quoted = f" ({' / '.join(said[-REMOTE_LINES:])})" if said else ""
        return True, f"{where} was rejected by the repo's pre-push hook{quoted}"
    telling = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
    reason = telling or (lines[-1] if lines else res.start_error or f"exit {res.returncode}")
    final = _final_remote_failure(lines, remote, repo)
    if final is not None:
        return True, f"{where} failed: {reason}; {final}"
    if (
        repo is not None
        and "does not appear to be a git repository" in reason
        and not any(c in remote for c in "/:")  # a name, not a URL
        and not _config(repo, "--get", f"remote.{remote}.url")
    ):
        return True, (
            f"{where} failed: {remote!r} is no remote of this repo ({reason}); name one "
            f"that git remote lists in branch.{branch}.pushRemote or remote.pushDefault, "
            f"or add it (git remote add {remote} URL)"
        )
    return False, f"{where} failed: {reason}"


AUTH_SIGNS = (
    "authentication failed",
    "could not read username",
    "could not read password",
    "permission denied (publickey",
    "permission denied, please try again",
    "the requested url returned error: 401",
    "the requested url returned error: 403",
    "invalid username or password",
)
"""git's words (lowercased) for a push the remote refused to authenticate."""

MISSING_SIGNS = ("repository not found", "does not appear to be a git repository")
"""git's words (lowercased) for a remote repository that does not exist."""


def _final_remote_failure(lines: list[str], remote: str, repo: Path | None) -> str | None:
    """The fix for a push that failed for credentials or a missing repository
    (asking again gets the same answer), else ``None`` (worth a retry).

    A local path that is no repository is final only when this repo never
    reached it (no ``refs/remotes/<remote>/``): one it pushed to before may be
    on a drive that comes back."""
    said = " ".join(lines).lower()
    url = (_config(repo, "--get", f"remote.{remote}.url") if repo is not None else "") or remote
    if any(sign in said for sign in AUTH_SIGNS):
        return (
            f"the remote {remote!r} ({url}) refused the credentials; set up credentials "
            "that may push there (a credential helper or token for https, an ssh key "
            "loaded in ssh-agent for ssh), as pushes run without prompting"
        )
    if "host key verification failed" in said:
        return (
            f"ssh does not know the host key of the remote {remote!r} ({url}); add it to "
            "~/.ssh/known_hosts (ssh to the host once), as pushes run without prompting"
        )
    if not any(sign in said for sign in MISSING_SIGNS) and not (
        "fatal: repository '" in said and "' not found" in said
    ):
        return None
    local = not any(c in url for c in ":") or url.startswith("file://")
    if local and repo is not None:
        if not _config(repo, "--get", f"remote.{remote}.url"):
            return None  # no remote of this name: push_failure says so
        if git.run_git(repo, "for-each-ref", "--count=1", f"refs/remotes/{remote}/").stdout.strip():
            return None  # reached before: it may come back
    return (
        f"the remote {remote!r} points at {url}, where there is no repository; fix its URL "
        f"(git remote set-url {remote} URL) or create the repository there"
    )


def _porcelain(line: str) -> bool:
    """Whether ``line`` is ``git push --porcelain``'s own (or blank)."""
    parts = line.split("\t")
    return (
        not line.strip()
        or line.startswith("To ")
        or line == "Done"
        or (len(parts) >= 2 and len(parts[0]) == 1)
    )


def _has_hook(repo: Path, name: str) -> bool:
    """Whether ``repo`` has an executable hook ``name`` where git runs it
    (``core.hooksPath`` or the git dir's ``hooks/``)."""
    res = git.run_git(repo, "rev-parse", "--git-path", f"hooks/{name}")
    if not res.ok or not res.stdout.strip():
        return False
    path = Path(repo) / res.stdout.strip()  # an absolute answer stays itself
    return path.is_file() and os.access(path, os.X_OK)


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
        where = f"{outcome.remote} {branch_onto(outcome.branch or '', outcome.remote_ref)}"
        if outcome.ok:
            ctx.console.say(f"↑ {prompt_id} pushed {name} to {where} ({(outcome.head or '')[:12]})")
        else:
            ctx.console.say(
                f"warning: [{prompt_id}] the push of {name} failed after {outcome.attempts} "
                f"tr{'y' if outcome.attempts == 1 else 'ies'}: {outcome.error}; the local branch "
                "is unchanged and the next push of this repo sends what it holds"
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
