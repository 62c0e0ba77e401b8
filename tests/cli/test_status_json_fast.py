"""Issue 19: `status --json` is indented by orjson where that prints json.dumps' text,
and by the standard library everywhere else -- the same bytes either way."""

from __future__ import annotations

import io
import json
import math
from contextlib import redirect_stdout
from typing import Any

import pytest

from prompt_runner.cli import _out

DOCS: list[Any] = [
    {"a": 1, "b": [], "c": {}, "d": [1, {"e": None, "f": True}], "g": "caf\u00e9 \u2028 \x1f \x7f"},
    {"cost_usd": 0.0, "x": 0.1, "y": 123.456, "z": -0.0, "big": 1e16, "huge": 1.5e300},
    {"u64": 2**64 - 1, "neg": -(2**63), "past": 2**70},
    {"small": 1e-05},
    {"small": 9.99e-05},
    {"tiny": [1e-7, 2.5e-10]},
    {"nan": math.nan},
    {"inf": [math.inf, -math.inf]},
    {"text": "pre-commit re-ran 0.00001 times; 1e-7 is a string here"},
    {1: "an int key"},
    {"lone": "\ud800"},
]


def _printed(doc: Any, *, decoded: bool) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        _out.emit_json(doc, decoded=decoded)
    return out.getvalue()


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: next(iter(d)) if isinstance(d, dict) else "?")
def test_the_fast_path_prints_what_json_dumps_prints(doc: Any) -> None:
    expected = json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
    assert _printed(doc, decoded=True) == expected
    assert _printed(doc, decoded=False) == expected


def test_orjson_indents_a_plain_state_document() -> None:
    doc = {"prompts": {"01": {"status": "completed", "attempts": [{"cost_usd": 0.25}]}}}
    assert _out._indented(doc) == json.dumps(doc, indent=2, ensure_ascii=False)
    assert _out._indented({"small": 1e-05}) is None  # the standard library's text
    assert _out._indented({"nan": math.nan}) is None
