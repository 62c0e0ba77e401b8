"""``runs/current.json``: the identity of a state root's current run.

Written by the runner when a run starts, resumes or finishes (atomically)::

    {"schema_version": 1, "run_id": "...", "packet": "...", "fingerprint": "...",
     "started_at": "...", "status": "running"|"completed"|"failed"|..., ...}

Every reader goes through :func:`read_current_run`, so a damaged file is the
same :class:`~prompt_runner.errors.StateError` (exit 2) wherever it is met --
``run``, ``status``, ``control ...`` -- never ``None`` in one place and a
traceback in another. A field of the wrong JSON type (``{"run_id": 5}``, a
``status`` that is not a string, ...; state/current_run_shape.py) is such a
damaged file too: the error names the key. Only the standard library is
imported (``control`` commands read it on their hot path).
"""

from __future__ import annotations

from pathlib import Path

from prompt_runner.errors import StateError
from prompt_runner.state.atomic import SCHEMA_VERSION, read_json_object, write_json_atomic
from prompt_runner.state.current_run_shape import wrong_field

UNFINISHED_RUN = ("running", "repairing")
"""``runs/current.json`` statuses of a run still going (``RunStatus.RUNNING``, a
repair run's ``repairing``): with no live runner it was cut short."""

TYPE_CHECKING = False  # typing costs import time on the CLI hot path (`control status`)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

FIX = "delete it; the next run then starts a new run generation"
"""What a damaged ``runs/current.json`` error tells the user to do."""


def read_current_run(path: Path) -> dict[str, Any] | None:
    """The current-run document at ``path`` (``layout.current_run``), or ``None`` if missing.

    Raises:
        StateError: the file is not valid JSON, not a JSON object, or a known
            field of it has the wrong type (the message names the file, the key,
            and says to delete it), or cannot be read.
    """
    doc = read_json_object(path, fix=FIX)
    if doc is not None:
        wrong = wrong_field(doc)
        if wrong is not None:
            key, need = wrong
            raise StateError(need, file=path, key=key, fix=FIX)
    return doc


def current_run_id(path: Path) -> str | None:
    """The ``run_id`` of the document at ``path``, or ``None`` (no file, or no id recorded).

    Raises:
        StateError: as :func:`read_current_run`.
    """
    doc = read_current_run(path)
    run_id = doc.get("run_id") if doc else None
    return run_id if isinstance(run_id, str) else None


def write_current_run(path: Path, doc: Mapping[str, Any]) -> None:
    """Replace the document at ``path`` atomically and durably (``schema_version`` first).

    Raises:
        StorageError: the file cannot be written.
        TypeError / ValueError: ``doc`` is not JSON-safe (nothing is written).
    """
    write_json_atomic(path, {"schema_version": SCHEMA_VERSION, **doc})
