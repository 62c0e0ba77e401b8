"""Why a git call of the committer failed, as one sentence (SPEC 3.5).

A held ``index.lock`` says which file and what to do: while a git process
still runs in that repository (:func:`lock_holders` -- e.g. a ``git commit``
whose hook outlived a runner killed with ``kill -9``), to wait for it or run
``prompt-runner stop``, never to delete the lock under it; only a lock no live
git holds gets the advice to delete it. A commit a hook rejected quotes the
hook's own output (its last :data:`HOOK_OUTPUT_LINES` lines).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from . import proc

HOOK_OUTPUT_LINES = 40
"""Most lines of a rejecting hook's output quoted in the commit error."""


def failure_line(res: proc.ProcResult) -> str:
    """The most telling line of a git failure: its ``fatal:``/``error:`` line if
    any; a held index lock as a sentence saying what to do."""
    if res.timed_out:
        return "timed out"
    text = (res.stderr or res.stdout).strip() or res.start_error or f"exit {res.returncode}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:
        if "index.lock': File exists" in line:
            lock = line.split("'")[1] if line.count("'") >= 2 else "index.lock"
            holders = lock_holders(Path(lock)) if lock != "index.lock" else []
            if holders:
                return f"{lock} exists: {still_running(holders)}"
            return (
                f"{lock} exists: another git process is working in this repository, or "
                "one that crashed left the lock behind; when no git process is running "
                "there, delete that file and run again"
            )
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    said = [line for line in lines if not line.startswith("hint:")]  # git's advice, not why
    if "sparse-checkout definition" in text:
        return sparse_line(said)
    return said[-1] if said else lines[-1] if lines else text


def lock_holders(lock: Path) -> list[int]:
    """The live git processes (pids, sorted) that may hold ``lock`` (a
    ``<git dir>/index.lock``): those of this user running in its work tree
    (git works from the work-tree root; a ``git commit`` stays there while its
    hooks run) or with the lock open. Never this process. Read only when a
    lock is found, so the scan (``psutil``, a few ms) costs nothing otherwise.
    Never raises: a process that cannot be read is not counted."""
    import psutil  # lazy: only a held lock needs it

    git_dir = os.path.realpath(lock.parent)
    tops = {git_dir}
    if os.path.basename(git_dir) == ".git":
        tops.add(os.path.dirname(git_dir))  # the work tree of a plain repository
    lock_path = os.path.join(git_dir, lock.name)
    found: list[int] = []
    try:
        processes = list(psutil.process_iter(["pid", "name", "cwd"]))
    except psutil.Error:
        return found
    for process in processes:
        info = process.info
        name = info.get("name") or ""
        if info.get("pid") == os.getpid() or not name.startswith("git"):
            continue
        cwd = info.get("cwd")
        inside = isinstance(cwd, str) and any(
            cwd == top or cwd.startswith(top.rstrip(os.sep) + os.sep) for top in tops
        )
        if not inside:
            try:
                inside = any(f.path == lock_path for f in process.open_files())
            except psutil.Error:
                inside = False
        if inside:
            try:
                if process.status() == psutil.STATUS_ZOMBIE:
                    continue
            except psutil.Error:
                continue
            found.append(int(info["pid"]))
    return sorted(found)


def still_running(holders: Sequence[int]) -> str:
    """The advice for an index lock a live git process holds (``holders``, from
    :func:`lock_holders`): wait or stop it, never delete the lock."""
    pids = ", ".join(str(pid) for pid in holders)
    which = "a git process (pid" if len(holders) == 1 else "git processes (pids"
    return (
        f"{which} {pids}) is still running in this repository, perhaps from an "
        "earlier run; wait for it to finish, or run `prompt-runner stop` if an earlier "
        "run left it; do not delete the lock while it runs"
    )


def sparse_line(said: Sequence[str]) -> str:
    """Git's refusal of paths outside the sparse-checkout cone (``git add``
    prints it as a paragraph, then the paths, then ``hint:`` lines), as one
    sentence naming the paths and the fix."""
    start = next((i for i, line in enumerate(said) if line.endswith("index:")), None)
    paths = list(said[start + 1 :]) if start is not None else []
    reason = " ".join(said[: start + 1] if start is not None else said).rstrip(":")
    dirs = sorted({path.rpartition("/")[0] or path for path in paths})
    fix = (
        f"widen the sparse checkout to take them (`git sparse-checkout add {' '.join(dirs)}`) "
        "or turn it off (`git sparse-checkout disable`)"
    )
    return f"{reason}: {', '.join(paths)}; {fix}" if paths else f"{reason}; {fix}"


def commit_failure(res: proc.ProcResult, hooks: Sequence[str], hooks_dir: Path) -> str:
    """Why ``git commit`` failed: a rejecting hook with its own output (capped at
    :data:`HOOK_OUTPUT_LINES` lines), else git's telling line.

    Args:
        res: the ``git commit`` call.
        hooks: the repo's executable hooks that can reject a commit, in run order.
        hooks_dir: where they live (named in the sentence).
    """
    text = "\n".join(x for x in (res.stdout.strip(), res.stderr.strip()) if x)
    own = any(
        line.startswith(("fatal:", "error:")) or "index.lock" in line for line in text.splitlines()
    )
    if not hooks or own or res.timed_out or res.start_error:
        return f"git commit failed: {failure_line(res)}"
    which = " or ".join(hooks)
    lines = text.splitlines()
    if len(lines) > HOOK_OUTPUT_LINES:
        cut = len(lines) - HOOK_OUTPUT_LINES
        lines = [f"[{cut} earlier lines cut]", *lines[-HOOK_OUTPUT_LINES:]]
    said = "\n".join(f"    {line}" for line in lines) if lines else "    (it printed nothing)"
    return (
        f"the {which} hook rejected the commit (git commit exit {res.returncode}; "
        f"hooks in {hooks_dir}); its output:\n{said}"
    )
