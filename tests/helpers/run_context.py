"""Build what the run pipeline builds, from a dict-built packet, without the CLI.

Like tox's ``tox_project`` fixture (a project from a dict), for the runner::

    ctx = run_context(tmp_path, prompts={"01": {"verify": {"files_exist": ["a.txt"]}}})

is the :class:`RunContext` ``pipeline.run_context`` makes for a run of that
packet (``tests/helpers/packets.py``: a real packet and a real git repo
``app``) -- the real simulated provider, an in-memory store and the no-op
committer unless given, and a console writing to a string (:func:`said`).
``planned(tmp_path, prompts={...})`` is the resolved plan alone, for the steps
that run before a context exists (``prepare_run``, ``hold_locks``, ``open_run``).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from prompt_runner import api
from prompt_runner.committer import Committer, NoopCommitter
from prompt_runner.planning import Plan
from prompt_runner.render.text import Console
from prompt_runner.runner.context import Callbacks, RunContext
from prompt_runner.runner.opening import OpenedRun
from prompt_runner.runner.pipeline import run_context as pipeline_context
from prompt_runner.state.memstore import MemoryStore
from prompt_runner.state.store import RuntimeStore
from tests.helpers.packets import make_packet

RUN_ID = "20260101T000000Z-abcdef"
"""The run id of a context built without opening a run."""


def planned(
    tmp_path: Path,
    prompts: dict[str, dict[str, Any]],
    *,
    manifest: dict[str, Any] | None = None,
    bodies: dict[str, str] | None = None,
    **options: Any,
) -> Plan:
    """The plan of a packet built from ``prompts`` (see ``make_packet``) under
    ``options`` (:class:`RunOptions` fields, as ``prompt_runner.plan`` takes them)."""
    packet = make_packet(tmp_path, prompts, manifest=manifest, bodies=bodies)
    return api.plan(packet, **options)


def console() -> Console:
    """An unstyled console writing to a ``StringIO`` (read it with :func:`said`)."""
    return Console(io.StringIO(), styled=False)


def run_context(
    tmp_path: Path,
    prompts: dict[str, dict[str, Any]],
    *,
    manifest: dict[str, Any] | None = None,
    bodies: dict[str, str] | None = None,
    store: RuntimeStore | None = None,
    committer: Committer | None = None,
    opened: OpenedRun | None = None,
    callbacks: Callbacks | None = None,
    **options: Any,
) -> RunContext:
    """A run context for ``prompts`` as the pipeline builds it.

    Args:
        store: the runtime store (default: a fresh in-memory one).
        committer: the committer (default: the no-op committer).
        opened: what opening the run decided (default: a fresh, not resumed
            run :data:`RUN_ID` with nothing skipped, foreign or adopted).
        **options: :class:`RunOptions` fields for the plan.
    """
    p = planned(tmp_path, prompts, manifest=manifest, bodies=bodies, **options)
    return pipeline_context(
        p,
        store if store is not None else MemoryStore(),
        committer if committer is not None else NoopCommitter(),
        console(),
        opened if opened is not None else OpenedRun(RUN_ID, resumed=False),
        callbacks=callbacks,
    )


def said(source: RunContext | Console) -> str:
    """Everything the runner said on the console so far."""
    out = source.console if isinstance(source, RunContext) else source
    out.flush()
    stream = out.stream
    assert isinstance(stream, io.StringIO)
    return stream.getvalue()
