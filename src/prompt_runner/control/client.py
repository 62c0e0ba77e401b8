"""The control plane's client API (SPEC 5): read a run, follow it, send it requests.

Every function takes a packet directory (or its manifest) and works from any
process, live run or not. Reading (:func:`snapshot`, :func:`iter_events`,
:func:`iter_log`) never writes anything; sending (:func:`set_view`,
:func:`steer`, :func:`wake`) writes one request file and returns its name -- the runner
decides it at its next event boundary and records the outcome in the control
log. Amendments (:func:`amend`, :func:`relax`) are written directly to the
packet's ``amendments/`` audit file, so they work between runs too; the runner
reads them before every verification.

The senders and amendments also take ``state_dir=``: the state root to write
in, for a caller serving runs whose state lives elsewhere (the dashboard);
without it, ``$PROMPT_RUNNER_STATE_DIR``, else the packet's ``.prompt_runner``.

This module is the one door; the work is done by

* ``control/runs.py`` -- which run is current and whether it lives; the snapshot;
* ``control/streams.py`` -- streaming and following ``events.jsonl`` / ``log.jsonl``
  (1 MiB chunks from a byte offset; ``--follow`` waits with ``watchfiles``);
* ``control/sending.py`` -- requests, and refused commands in the control log;
* ``control/contracts.py`` -- a prompt's contract, ``amend`` and ``relax``.

The functions used by ``control status|events|log|view|steer`` import only
the standard library and the light ``control``/``state`` helpers; the
contract functions load the packet, so their module is imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .runs import (
    NO_RUN,
    control_store,
    current_run,
    current_run_id,
    run_is_live,
    snapshot,
    unfinished_run_id,
)
from .sending import (
    append_log_line,
    log_refusal,
    outcome,
    queue_view,
    refusals_logged,
    set_view,
    steer,
    steer_stage,
    stop_request,
    submit,
    wake,
)
from .streams import (
    CHUNK_BYTES,
    RUN_FINISHED,
    event_json_blocks,
    iter_events,
    iter_log,
    read_jsonl_stream,
    run_end_record,
)

if TYPE_CHECKING:
    from .contracts import amend, contract, relax

_CONTRACTS = frozenset({"amend", "contract", "relax"})

__all__ = [
    "CHUNK_BYTES",
    "NO_RUN",
    "RUN_FINISHED",
    "amend",
    "append_log_line",
    "contract",
    "control_store",
    "current_run",
    "current_run_id",
    "event_json_blocks",
    "iter_events",
    "iter_log",
    "log_refusal",
    "outcome",
    "queue_view",
    "read_jsonl_stream",
    "refusals_logged",
    "relax",
    "run_end_record",
    "run_is_live",
    "set_view",
    "snapshot",
    "steer",
    "steer_stage",
    "stop_request",
    "submit",
    "unfinished_run_id",
    "wake",
]


def __getattr__(name: str) -> Any:
    """``amend``, ``contract`` and ``relax``: ``control/contracts.py``, imported on first use."""
    if name in _CONTRACTS:
        from . import contracts  # lazy: loads the packet model and the runner (~250 ms)

        return getattr(contracts, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
