"""What a killed runner's leftovers are not: its verification's files.

A resumed run adopts an interrupted prompt's uncommitted work as "dirty now
minus dirty as it started" (``lifecycle.adopt_interrupted_work``). A runner
killed while its contract's ``commands`` ran, or after they ran and before the
commit, also left what those commands wrote (``coverage.xml``,
``.pytest_cache/``) and, mid-``regenerates``, an output's backup
(``<name>.prompt-runner-verifier-backup``, which the next verification puts
back): none of that is the session's work. So:

* as a session ends and before its contract's commands run, the prompt's
  record gets :data:`FIELD`, the target repos' dirty paths then
  (:func:`record_after_session`, git committer only); it is cleared as the
  next session begins (:func:`clear_after_session`) and as the prompt's next
  execution or repair starts (``engine.execute_prompt``,
  ``repair_run.repair_executor``), so it is there only while no session of
  the prompt could be writing;
* adoption then takes only what was dirty after that session (and the
  ``regenerates:`` outputs, which are the prompt's work), and never a backup
  (:func:`is_verifier_backup`); pre-flight verification counts the same as
  the prompt's possible work (``lifecycle.session_bounds``,
  ``preverify.possible_work``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..verifier.regenerates import BACKUP_SUFFIX
from . import workspace
from .context import RunContext

FIELD = "dirty_after_session"
"""The prompt record's key: per target repo, the sorted dirty paths (work-tree
relative) as its last session ended, before its contract's commands ran;
``None`` (or absent) while a session may be writing, or when there were more
than :data:`CAP`."""

CAP = 5000
"""Most paths recorded (as ``engine.DIRTY_AT_START_CAP``); beyond it, ``None``."""


def is_verifier_backup(path: str) -> bool:
    """True for a ``regenerates:`` output's backup (``verifier/regenerates.py``):
    a killed verification's, put back by the next one, never anyone's work."""
    return path.endswith(BACKUP_SUFFIX)


def record_after_session(ctx: RunContext, prompt_id: str, snap: workspace.Snapshot) -> None:
    """Record :data:`FIELD` from ``snap`` (the post-session snapshot, taken before
    the contract's commands run); git committer only, as ``dirty_at_start``.

    Raises:
        StorageError: the prompt record could not be written.
    """
    if ctx.committer.name != "git":
        return
    dirty = {name: sorted(paths) for name, paths in workspace.dirty_paths(snap).items()}
    value = dirty if sum(len(p) for p in dirty.values()) <= CAP else None
    ctx.store.update_prompt(prompt_id, {FIELD: value})
    ctx.after_session.add(prompt_id)


def clear_after_session(ctx: RunContext, prompt_id: str) -> None:
    """A session of ``prompt_id`` is about to start: :data:`FIELD` no longer
    bounds its work (one write, only when this run recorded one).

    Raises:
        StorageError: the prompt record could not be written.
    """
    if prompt_id in ctx.after_session:
        ctx.store.update_prompt(prompt_id, {FIELD: None})
        ctx.after_session.discard(prompt_id)


def session_work(record: Mapping[str, Any] | None, repo: str) -> set[str] | None:
    """The paths of ``repo`` dirty as the prompt's last session ended (:data:`FIELD`
    of its ``record``), or ``None`` when not known (a session may have been
    writing when its runner died, or it was not recorded)."""
    after = record.get(FIELD) if record else None
    paths = after.get(repo) if isinstance(after, Mapping) else None
    return {p for p in paths if isinstance(p, str)} if isinstance(paths, list) else None
