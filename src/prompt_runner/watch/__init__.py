"""Supervision of a long run: the ``watch`` command's samples, judgement and evidence.

* :mod:`.facts` -- one sample of raw facts (``WATCH 16:57Z runner=UP prompt=11
  quiet=0min repos=3 dirty=0 commits=27``); it decides nothing. ``watch
  PACKET [--once]`` prints these.
* :mod:`.health` -- the run's state, progress, wait and push facts, and the
  judgement of one sample against what a bounded watch requires
  (``runtime_unhealthy``, ``not_running``, ``progress_stale``).
* :mod:`.bounded` -- ``watch --for D --every D``: sample for a bounded time,
  append every sample (fsynced) to ``acceptance/watch-<stamp>.jsonl``, end at
  the first unhealthy one, and write the final report atomically.

The facts' names are re-exported here (``from prompt_runner.watch import
sample``), as before this became a package.
"""

from __future__ import annotations

from .facts import (
    PRUNED_DIRS,
    SCHEMA,
    RepoRef,
    format_line,
    manifest_repos,
    newest_mtime,
    newest_prompt_log,
    sample,
    watch,
)

__all__ = [
    "PRUNED_DIRS",
    "SCHEMA",
    "RepoRef",
    "format_line",
    "manifest_repos",
    "newest_mtime",
    "newest_prompt_log",
    "sample",
    "watch",
]
