"""Output helpers for CLI handlers (the only place the CLI writes)."""

from __future__ import annotations

import json
import sys
from typing import Any


def emit_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")


def say(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def warn(text: str) -> None:
    sys.stderr.write(text + "\n")
