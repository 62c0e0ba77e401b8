"""The verification marker ``<state_root>/amendments/verifying.json`` (SPEC 5).

The runner says here which verification it is running (``control/verifying.py``
writes it); a writer of amendments reads it to tell which verification its
amendment applies to (``control/applies_to.py``), and ``control steer`` to
tell where a steer would land. Format (a live view written without fsync,
like the control snapshot, and only while holding the amendment lock, as it
is read; one left by a dead runner is ignored because its ``pid`` must be
the live holder of ``run.pid``)::

    {"schema_version": 1, "run_id": "...", "pid": 1234, "prompt": "01",
     "attempt": 2|null, "stage": "verifying"|"frozen"|"verified"|"recorded",
     "pass": true|false|null, "contract_fingerprint": "<sha256>", "at": ISO8601}

``attempt`` is ``null`` for the pre-flight verification of ``--remaining``.

Only the standard library at import time: ``control steer`` reads the marker
(:func:`locked_marker`) on the CLI's hot path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..state._clock import iso_now
from ..state.layout import StateLayout
from .audit import quiet_amendment_lock
from .runs import live_runner

TYPE_CHECKING = False  # typing costs import time on the CLI hot path
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1
RECORDED = "recorded"
JUDGING = frozenset({"verifying", "frozen", "verified"})
"""Marker stages while a prompt's last session is being judged (no session runs)."""


def marker_path(state_root: Path) -> Path:
    """``<state_root>/amendments/verifying.json``."""
    return StateLayout(state_root).verifying_marker


def new_marker(
    run_id: str, prompt_id: str, attempt: int | None, stage: str, passed: bool | None, fp: str
) -> dict[str, Any]:
    """A marker of this process for ``prompt_id``'s verification at ``stage`` (``fp``: the
    fingerprint of the contract it verifies), stamped now."""
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "pid": os.getpid(),
        "prompt": prompt_id,
        "attempt": attempt,
        "stage": stage,
        "pass": passed,
        "contract_fingerprint": fp,
        "at": iso_now(millis=True),
    }


def read_marker(state_root: Path) -> dict[str, Any] | None:
    """The verification marker of the live runner, or ``None``.

    ``None`` when there is none, it is unreadable, or its ``pid`` is not the
    live process holding ``<state_root>/run.pid`` (a runner that died). Hold
    the amendment lock to act on the answer (:func:`locked_marker` does).
    """
    try:
        doc = json.loads(marker_path(state_root).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not _held_by(state_root, doc.get("pid")):
        return None
    return doc


def locked_marker(state_root: Path) -> dict[str, Any] | None:
    """:func:`read_marker` under the amendment lock (a whole marker, never half of one)."""
    with quiet_amendment_lock(state_root):
        return read_marker(state_root)


def own_marker(state_root: Path) -> dict[str, Any] | None:
    """The marker when this process wrote it, else ``None`` (hold the amendment lock)."""
    try:
        doc = json.loads(marker_path(state_root).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) and doc.get("pid") == os.getpid() else None


def write_marker(state_root: Path, doc: Mapping[str, Any]) -> None:
    """Rewrite the marker in place; an I/O error only costs the receipts' precision.

    In place, not by temp file and rename: every writer and every reader that
    acts on it holds the amendment lock, and replacing (or unlinking) a file
    frees an inode, which costs milliseconds on a busy disk -- three times per
    verification.
    """
    path = marker_path(state_root)
    data = json.dumps(dict(doc), ensure_ascii=False).encode("utf-8")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except FileNotFoundError:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError:
            return
    except OSError:
        return
    try:
        os.pwrite(fd, data, 0)
        os.ftruncate(fd, len(data))
    except OSError:
        pass
    finally:
        os.close(fd)


def _held_by(state_root: Path, pid: object) -> bool:
    if not isinstance(pid, int):
        return False
    ident = live_runner(Path(state_root))
    return ident is not None and ident.pid == pid
