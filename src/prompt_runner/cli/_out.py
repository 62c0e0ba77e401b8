"""Output helpers for CLI handlers (the only place the CLI writes)."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..render.printable import printable

_emitted = False  # this process already printed its one --json document


def emit_json(doc: Any) -> None:
    global _emitted
    _emitted = True
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")


def emit_error(doc: dict[str, Any]) -> None:
    """The one-line error document a failed ``--json`` command prints on stdout."""
    sys.stdout.write(json.dumps(doc, ensure_ascii=False) + "\n")


def json_emitted() -> bool:
    """Whether :func:`emit_json` already printed this process's document."""
    return _emitted


def say(text: str = "") -> None:
    """A human line on stdout; control characters shown escaped (render/printable.py)."""
    sys.stdout.write(printable(text) + "\n")


def warn(text: str) -> None:
    """A human line on stderr, made printable like :func:`say`'s."""
    sys.stderr.write(printable(text) + "\n")
