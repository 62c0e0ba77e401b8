"""encode_body's orjson call without options first (issue 19): every payload still
encodes as the one JSON object ``to_dict()`` describes, whichever path takes it."""

from __future__ import annotations

import datetime
import decimal
import json

import pytest

from prompt_runner.providers.events import Event
from prompt_runner.render.sinks import encode_body

PAYLOADS = [
    {},
    {"text": "plain"},
    {"s": 'é\n"\\', "n": None, "f": 1.5, "l": [1, {"a": True}]},
    {1: "an int key"},  # needs orjson's OPT_NON_STR_KEYS
    {"d": datetime.date(2020, 1, 2)},
    {"x": decimal.Decimal("1.5")},  # no JSON type: default=str
    {"set": {1}},
    {"kind": "shadowed"},
    {"at_ms": 3},
    {"big": 2**70},  # past orjson's 64-bit integers
]


@pytest.mark.parametrize("data", PAYLOADS, ids=repr)
def test_each_payload_encodes_as_its_to_dict(data: dict[object, object]) -> None:
    event = Event("tool_use", data, 1_700_000_000_123)
    line = encode_body(event)
    expected = json.loads(json.dumps(event.to_dict(), default=str))
    assert json.loads(line) == expected
    assert line.startswith('{"kind":') and "\n" not in line


def test_a_lone_surrogate_still_encodes() -> None:
    event = Event("file_change", {"path": "bad\udc80name"}, 5)
    assert json.loads(encode_body(event))["path"] == "bad\udc80name"
