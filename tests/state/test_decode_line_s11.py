"""decode_line reads with orjson and falls back to json.loads for what orjson
refuses, so every line decodes (or fails) exactly as with json alone."""

from __future__ import annotations

import json
import math

import pytest

from prompt_runner.state.jsonl import decode_line
from prompt_runner.state.untrusted_json import JsonNestingError


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a":1,"b":[1.5,"x\\u00e9"],"c":null}',
        '{"name":"caf\u00e9 \u2603"}'.encode(),
        b'{"big":123456789012345678901234567890}',  # beyond 64 bits: orjson gives a float
        b'{"low":-9223372036854775809}',  # 19 digits, below int64
        b'{"sha":"1234567890123456789abc","n":1}',  # 19 digits in a string: still exact
        b'{"s":"\\ud800"}',  # a lone surrogate escape: orjson refuses
        b'{"a":1,"a":2}',  # a repeated key: the last wins in both
    ],
)
def test_a_line_decodes_as_json_loads_decodes_it(raw: bytes) -> None:
    assert decode_line(raw) == json.loads(raw.decode("utf-8"))


def test_nan_decodes_as_json_does() -> None:
    value = decode_line(b'{"x":NaN}')
    assert math.isnan(value["x"])


def test_too_deep_nesting_is_a_nesting_error() -> None:
    raw = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(JsonNestingError):
        decode_line(raw)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"[1,2]", "expected a JSON object, got list"),
        (b"\xff\xfe{}", "codec can't decode"),
        (b'{"a":', "Expecting value"),
    ],
)
def test_refused_lines_raise_json_s_own_errors(raw: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decode_line(raw)
