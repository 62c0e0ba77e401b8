"""Fitting a value on one summary line: flattened and cut, or as compact JSON."""

from __future__ import annotations

import json
from typing import Any


def one_line(text: str, limit: int = 160) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` chars with "…"."""
    text = str(text)
    head = text[: 4 * limit]  # enough to fill `limit`; a long text is not split whole
    flat = " ".join(head.split())
    if len(flat) <= limit and len(head) == len(text):
        return flat
    return flat[: limit - 1] + "…"


def compact_json(value: Any) -> str:
    """``value`` as compact JSON for a summary line (orjson, imported on first use)."""
    global _orjson_dumps
    if _orjson_dumps is None:
        import orjson  # lazy: `control events` prints lines without ever needing it

        _orjson_dumps = orjson.dumps
    try:
        encoded: bytes = _orjson_dumps(value, default=str)
        return encoded.decode("utf-8")
    except TypeError:
        return json.dumps(value, default=str)


_orjson_dumps: Any = None
