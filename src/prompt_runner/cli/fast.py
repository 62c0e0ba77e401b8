"""The argparse-free hit paths: a kept text printed before the parser loads.

``status [PACKET] --json`` (the state root's ``status-cache``,
state/status_cache.py) and ``list ...`` (the kept output in the user's cache
directory, cli/kept_output.py) print what they printed last time when it is
still the same text, and ``control status [PACKET] --json`` of a run that is
not ``running`` prints its snapshot -- without argparse, ``pathlib``,
``hashlib``, the error mapping's messages or the command's own modules. :func:`serve` takes a line
only in a form it reads exactly as the parser does: ``status`` or ``control
status`` with ``--json`` and at most one more word, an existing packet directory (or its
manifest) or, without one, a current directory that is a packet; anything
else -- another flag, an abbreviation, ``--state-dir``, a relative
``$PROMPT_RUNNER_STATE_DIR``, a missing or stale text, a ``run.pid`` -- goes
to the full command, which decides exactly as before (and keeps the text
anew). Nothing here raises but a write to stdout.
"""

from __future__ import annotations

import os

from ..state import layout_text

MANIFEST_NAME = "prompt_runner_packet.md"  # paths.MANIFEST_NAME (pathlib-free here)


def serve(argv: list[str]) -> int | None:
    """The exit code of ``argv`` when a kept text answered it, else ``None``
    (then the command runs as usual; nothing was printed)."""
    word = argv[:1]
    if word == ["status"]:
        return _status(argv[1:])
    if argv[:2] == ["control", "status"]:
        return _control_status(argv[2:])
    if word == ["list"]:
        from . import kept_output  # lazy: only list keeps its output there

        return 0 if kept_output.serve(argv) else None
    return None


def _json_root(rest: list[str]) -> str | None:
    """The state root of ``[PACKET] --json`` (either order), or ``None`` for any
    other line or where the parser would decide otherwise or fail."""
    if rest == ["--json"]:
        given = None
    elif len(rest) == 2 and rest.count("--json") == 1:
        given = rest[0] if rest[1] == "--json" else rest[1]
        if given.startswith("-") or given == "":
            return None
    else:
        return None
    packet = _packet_dir(given)
    if packet is None:
        return None
    root = layout_text.state_root(packet)
    if root is None or not os.path.isdir(root):
        return None
    return root


def _status(rest: list[str]) -> int | None:
    root = _json_root(rest)
    if root is None:
        return None
    from ..state import status_cache  # lazy: imported after the line is read

    kept = status_cache.open_kept(root)
    if kept is None:
        return None
    with kept:
        if os.path.exists(layout_text.run_pid(root)):
            return None  # a run holds the packet: the full command folds
        from ._out import emit_json_kept  # lazy: only a kept text is printed so

        emit_json_kept(kept)
    return 0


def _control_status(rest: list[str]) -> int | None:
    """``control status [PACKET] --json``: ``control/snapshot.json`` with its
    ``pending_requests``, as ``control.runs.snapshot`` reads it, printed as
    ``emit_json`` prints it -- for a snapshot that is not ``running`` (that one
    needs the run lock's liveness check: the full command)."""
    root = _json_root(rest)
    if root is None:
        return None
    try:
        with open(layout_text.snapshot(root), "rb") as f:
            raw = f.read()
    except OSError:
        return None  # none (the command's error says so), or unreadable (its error)
    import json  # lazy: the one document this path decodes and prints

    try:
        snap = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # RecursionError: nested too deeply to decode
        return None  # damaged: the full command decides (state/atomic.read_json)
    if not isinstance(snap, dict) or snap.get("status") == "running":
        return None
    if not _current_run_readable(root):
        return None  # damaged runs/current.json: the full command says so (exit 2)
    try:
        snap["pending_requests"] = len(os.listdir(layout_text.requests_dir(root)))
    except FileNotFoundError:
        snap["pending_requests"] = 0
    except OSError:
        return None
    from ._out import emit_json  # lazy: after the snapshot is known to be servable

    emit_json(snap)
    return 0


def _current_run_readable(root: str) -> bool:
    """``runs/current.json`` is absent or a JSON object whose fields have their
    types (what the full command's ``state/current_run.read_current_run`` accepts)."""
    import json  # lazy: loaded already by the one caller, which decoded the snapshot

    from ..state.current_run_shape import wrong_field  # lazy: imports only re (json's)

    try:
        with open(layout_text.current_run(root), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and wrong_field(doc) is None


def _packet_dir(given: str | None) -> str | None:
    """The packet directory the parser would pick (``positionals.place_packet``,
    ``paths.packet_root``), or ``None`` when it would be an error or is not sure."""
    if given is None:
        candidate = os.getcwd()
    else:
        candidate = os.path.expanduser(given)
        if os.path.basename(candidate) == MANIFEST_NAME and os.path.isfile(candidate):
            candidate = os.path.dirname(candidate) or "."
    if not os.path.isdir(candidate) or not os.path.isfile(os.path.join(candidate, MANIFEST_NAME)):
        return None
    return os.path.realpath(candidate)
