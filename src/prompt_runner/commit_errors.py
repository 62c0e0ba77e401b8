"""Why a git call of the committer failed, as one sentence (SPEC 3.5).

A held ``index.lock`` says which file and what to do; a commit a hook rejected
quotes the hook's own output (its last :data:`HOOK_OUTPUT_LINES` lines).
"""

from __future__ import annotations

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
