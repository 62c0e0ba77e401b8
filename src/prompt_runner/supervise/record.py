"""The supervisor record: who a detached run is, and how it is contained.

``<supervisor_dir>/record.json`` (:class:`~prompt_runner.state.layout.SupervisorLayout`),
replaced atomically by ``start`` (when it launches, and again once the run
is live) and by ``stop`` (when it has ended the run)::

    {"schema": "prompt_runner.supervisor/v1", "schema_version": 1,
     "containment": "process_group", "pid": 4242, "start_time": 912345,
     "unit": null, "marker": "9f...", "earlier_markers": ["1c..."],
     "argv": ["/usr/bin/python3", "-m", "prompt_runner", "run", ...],
     "cwd": "...", "env_names": ["PATH", "PROMPT_RUNNER_STATE_DIR", ...],
     "state_dir": "...", "stdout": ".../runner.out.log", "stderr": "...",
     "started_at": "2026-08-10T12:00:00Z", "live_at": "...", "run_id": "...",
     "stopped_at": null, "stop": null}

``pid`` + ``start_time`` (``/proc/<pid>/stat`` field 22) name the runner
process for its whole life, so a recycled pid is never taken for the run
(:func:`prompt_runner.state.lock.identity_alive`). ``marker`` is the value of
``PROMPT_RUNNER_SUPERVISED_RUN`` every process of this launch inherits
(``supervise/members.py``); ``earlier_markers`` keeps the last launches' so
``stop`` still finds what they left. ``env_names`` lists the variables the
runner was given -- names only: values (API keys among them) are never
recorded. ``stop`` is the last stop's summary (``stopped_by``, ``ended``,
``left``). A damaged record is an error naming the file (the fix: delete it
once no process of the run is left), never silently replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import StateError
from ..state.atomic import read_json_object, write_json_atomic
from ..state.lock import PidIdentity

SCHEMA = "prompt_runner.supervisor/v1"
SCHEMA_VERSION = 1
MAX_EARLIER_MARKERS = 10
FIX = "delete it once no process of the run is left (`prompt-runner stop` finds them)"


@dataclass(frozen=True)
class SupervisorRecord:
    """The record (see the module docstring for each key).

    Attributes:
        containment: ``process_group`` or ``systemd_user``.
        pid, start_time: the runner's identity (``systemd_user``: the unit's
            main pid once known, else the starter's view of it).
        unit: the transient unit's name (``systemd_user``), else ``None``.
        marker: this launch's token; earlier_markers: the previous ones.
        argv, cwd, env_names: what was started, where, with which variables.
        state_dir: the run's state root.
        stdout, stderr: the runner's log files.
        started_at: when it was launched; live_at: when it was seen live
            (ISO 8601 UTC, ``None`` until then).
        run_id: the run id it runs (once live).
        stopped_at: when ``stop`` ended it; stop: that stop's summary.
    """

    containment: str
    pid: int
    start_time: int | None
    marker: str
    argv: tuple[str, ...]
    cwd: str
    state_dir: str
    stdout: str
    stderr: str
    started_at: str
    env_names: tuple[str, ...] = ()
    unit: str | None = None
    earlier_markers: tuple[str, ...] = ()
    live_at: str | None = None
    run_id: str | None = None
    stopped_at: str | None = None
    stop: Mapping[str, Any] | None = field(default=None)

    @property
    def identity(self) -> PidIdentity:
        """The runner's pid and start time."""
        return PidIdentity(self.pid, self.start_time)

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every marker token of this record (this launch's first)."""
        return (self.marker, *self.earlier_markers)

    def updated(self, **changes: Any) -> SupervisorRecord:
        """A copy with ``changes``."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The record as ``record.json`` holds it."""
        doc = asdict(self)
        doc["argv"] = list(self.argv)
        doc["env_names"] = list(self.env_names)
        doc["earlier_markers"] = list(self.earlier_markers)
        doc["stop"] = dict(self.stop) if self.stop is not None else None
        return {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, **doc}


def read_record(path: Path) -> SupervisorRecord | None:
    """The record at ``path``, or ``None`` when there is none.

    Raises:
        StateError: the file is not a supervisor record (the message names
            the file and says to delete it).
    """
    doc = read_json_object(path, fix=FIX)
    if doc is None:
        return None
    try:
        if doc.get("schema") != SCHEMA:
            raise ValueError(f"schema is {doc.get('schema')!r}, not {SCHEMA!r}")
        return SupervisorRecord(
            containment=str(doc["containment"]),
            pid=_int(doc["pid"]),
            start_time=None if doc.get("start_time") is None else _int(doc["start_time"]),
            marker=str(doc["marker"]),
            argv=tuple(str(a) for a in doc["argv"]),
            cwd=str(doc["cwd"]),
            state_dir=str(doc["state_dir"]),
            stdout=str(doc["stdout"]),
            stderr=str(doc["stderr"]),
            started_at=str(doc["started_at"]),
            env_names=tuple(str(n) for n in doc.get("env_names") or ()),
            unit=_text(doc.get("unit")),
            earlier_markers=tuple(str(m) for m in doc.get("earlier_markers") or ()),
            live_at=_text(doc.get("live_at")),
            run_id=_text(doc.get("run_id")),
            stopped_at=_text(doc.get("stopped_at")),
            stop=doc.get("stop") if isinstance(doc.get("stop"), dict) else None,
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise StateError(f"is not a supervisor record ({exc})", file=path, fix=FIX) from exc


def write_record(path: Path, record: SupervisorRecord) -> None:
    """Replace the record at ``path`` atomically and durably.

    Raises:
        StorageError: it cannot be written.
    """
    write_json_atomic(path, record.to_dict())


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{value!r} is not an integer")
    return value


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
