"""Issue 19: `control events --json` prints the stream's lines as stored once each
is decoded to a JSON object -- every line the runner writes comes out byte for
byte; what is not an event line is left out, as the record loop skips it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path
from types import EllipsisType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompt_runner.control import client, streams
from prompt_runner.control.plane import ControlPlane
from prompt_runner.providers.events import Event
from prompt_runner.render.text import Console
from prompt_runner.state import jsonl
from prompt_runner.state.jsonl import dumps_lenient
from tests.control._helpers import control, make_packet

# (the line as stored, what --json prints for it: None = left out, ... = as stored)
ODD_LINES: list[tuple[bytes, bytes | EllipsisType | None]] = [
    (b'{"kind":"assistant_text","at_ms":1,"text":"plain"}', ...),
    (b"", None),
    (b"   ", None),
    # the standard library's floats, and an integer past 64 bits (orjson reads it as a
    # float; the text printed is the stored one, exact)
    (b'{"kind":"usage","cost_usd":1e-05,"tokens":12345678901234567890123}', ...),
    (b'{"kind":"usage","cost_usd":0.00001}', ...),  # orjson's form of the same float
    (b'{"kind":"x","value":NaN,"other":-Infinity}', ...),  # json reads it, orjson refuses
    ('{"kind":"x","text":"café \u2028 \\t \\"q\\" é"}'.encode(), ...),  # raw UTF-8
    (b'{"kind":"x","text":"caf\\u00e9 \\ud83d\\ude00","nested":{"a":[1,2.5,{"b":null}]}}', ...),
    # a lone surrogate: the runner writes the line ASCII-escaped (orjson refuses it)
    (b'{"kind":"x","path":"odd\\udc80name","text":"caf\\u00e9"}', ...),
    (b'{"kind":"dup","a":1,"a":2}', ...),  # another tool's: a key twice, as it stands
    (b'{"kind":"spaced" , "at_ms" : 3 }', ...),  # another tool's spacing
    (b'{"kind": "usage", "at_ms": 1, "big": 1180591620717411303424,"prompt_id":"01"}', ...),
    (b'{"kind":"crlf"}\r', ...),
    # UTF-16 and a byte order mark: the standard library reads them, the runner never
    # writes them; printed as the runner would write the record, in UTF-8
    ('{"kind":"utf16","t":"é"}'.encode("utf-16-le"), '{"kind":"utf16","t":"é"}'.encode()),
    (b'\xef\xbb\xbf{"kind":"bom"}', b'{"kind":"bom"}'),
    (b"[1, 2]", None),  # valid JSON, not an object
    (b'"just a string"', None),
    (b"null", None),
    (b"{not json", None),
    (b"\xff\xfe garbage", None),
    (b'{"kind":"bad utf-8 \xff"}', None),
]


def _printed(stored: bytes, shown: bytes | EllipsisType | None) -> bytes:
    if shown is None:
        return b""
    return (stored if shown is ... else shown) + b"\n"


def _write(packet: Path, lines: list[bytes], tail: bytes = b"") -> Path:
    events = control(packet).events_path
    events.parent.mkdir(parents=True, exist_ok=True)
    events.write_bytes(b"".join(line + b"\n" for line in lines) + tail)
    return events


def _written_by_a_plane(packet: Path) -> bytes:
    """A stream written by the runner's plane: odd values and both encoders."""
    plane = ControlPlane(
        packet / ".prompt_runner", run_id="r1", packet="p", console=Console(None, {}), notify=False
    )
    plane.start()
    events = [
        Event("session_started", {"session_id": "s", "provider": "simulated"}),
        Event("assistant_text", {"text": 'café \u2028 "q" \\ \x1f \U0001f600'}),
        Event("usage", {"input_tokens": 3, "cost_usd": 1e-05}),
        Event("usage", {"input_tokens": 1, 3: "int key"}),  # type: ignore[dict-item] # json's
        Event("file_change", {"path": Path("odd/x.txt")}),  # default=str
        Event("assistant_text", {"text": "lone \ud800 surrogate"}),  # written ASCII-escaped
        Event("usage", {"big": 2**70, "cost_usd": 2.5e-07}),
        Event("tool_use", {"tool": "Read", "input": {"deep": [[[{"x": None}]]]}}),
        Event("assistant_text", {}),
    ]
    for prompt_id in ("01", "02"):
        for event in events:
            plane.on_event(prompt_id, event)
        plane.on_events(prompt_id, events[:3], [None, None, None])
    plane.finish("completed")
    return control(packet).events_path.read_bytes()


@pytest.mark.parametrize("small", [False, True])
def test_the_runners_lines_are_printed_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    monkeypatch.setattr(streams, "_small", lambda end: small)  # the standard library's path
    packet = make_packet(tmp_path, {"01": {}})
    stored = _written_by_a_plane(packet)
    assert b"\\ud800" in stored and "café".encode() in stored and b"0.00001" in stored
    # an event orjson cannot encode (an integer past 64 bits) is written through
    # render.sinks' standard-library encoder, spaced: as stored too
    assert len([line for line in stored.splitlines() if b'"big": ' in line]) == 2
    expected = stored
    assert b"".join(streams.event_json_blocks(packet)) == expected
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "control", "events", str(packet), "--json"],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == expected
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    assert records == list(client.iter_events(packet))  # the records the library yields


@pytest.mark.parametrize("small", [False, True])
@pytest.mark.parametrize("chunk", [jsonl.CHUNK_BYTES, 7])
def test_other_lines_are_printed_as_they_stand_and_the_rest_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, small: bool
) -> None:
    monkeypatch.setattr(streams, "CHUNK_BYTES", chunk)  # 7: every line crosses a chunk
    monkeypatch.setattr(streams, "_small", lambda end: small)  # the standard library's path
    packet = make_packet(tmp_path, {"01": {}})
    stored = [line for line, _ in ODD_LINES] * 3
    _write(packet, stored, tail=b'{"kind":"torn","at')  # a final line without its newline
    expected = b"".join(_printed(line, shown) for line, shown in ODD_LINES) * 3
    got = b"".join(streams.event_json_blocks(packet))
    assert got == expected
    records = list(client.iter_events(packet))
    assert [json.loads(line) for line in got.splitlines()] == records  # the same events
    assert b"".join(streams.event_json_blocks(packet, from_current=True)) == b""


@pytest.mark.parametrize("small", [False, True])
def test_a_line_nested_deeper_than_orjson_writes_is_printed_as_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    monkeypatch.setattr(streams, "_small", lambda end: small)
    packet = make_packet(tmp_path, {"01": {}})
    deep = b'{"kind":"x","v":' + b"[" * 300 + b"]" * 300 + b"}"
    _write(packet, [deep, b'{"kind":"after"}'])
    assert b"".join(streams.event_json_blocks(packet)) == deep + b'\n{"kind":"after"}\n'


def test_the_cli_prints_the_same_bytes_and_from_current_nothing(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    _write(packet, [line for line, _ in ODD_LINES], tail=b'{"kind":"torn"')
    args = [sys.executable, "-m", "prompt_runner", "control", "events", str(packet), "--json"]
    proc = subprocess.run(args, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"".join(_printed(line, shown) for line, shown in ODD_LINES)
    current = subprocess.run([*args, "--from", "current"], capture_output=True, timeout=120)
    assert (current.returncode, current.stdout) == (0, b"")


def test_following_prints_the_same_lines_and_a_compact_end_record(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    stored = _written_by_a_plane(packet)  # the run has ended: following reads it and stops
    assert b"".join(streams.event_json_blocks(packet, follow=True)) == b"".join(
        streams.event_json_blocks(packet)
    )
    cut = stored[: stored.rindex(b'{"kind":"run_finished"')]  # as if the runner left no end
    control(packet).events_path.write_bytes(cut)
    *lines, end = b"".join(streams.event_json_blocks(packet, follow=True)).splitlines()
    assert b"\n".join(lines) + b"\n" == b"".join(streams.event_json_blocks(packet))
    record = streams.run_end_record(control(packet))
    assert end == dumps_lenient(record).encode() and record["kind"] == "run_finished"


_SCALARS = (
    st.text(max_size=8)
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.none()
)
_RECORDS = st.dictionaries(
    st.text(max_size=6),
    st.recursive(
        _SCALARS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
        max_leaves=6,
    ),
    max_size=5,
)


@pytest.fixture(scope="module")
def one_packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_packet(tmp_path_factory.mktemp("p"), {"01": {}})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(_RECORDS, min_size=1, max_size=6), ascii=st.booleans(), small=st.booleans())
def test_any_object_line_comes_out_as_stored(
    one_packet: Path, records: list[dict[str, object]], ascii: bool, small: bool
) -> None:
    """Lines as another tool would write them (spaced, maybe ASCII-escaped) and as
    the runner's two encoders do: each is printed as stored, by either reading."""
    import orjson

    lines = []
    for record in records:
        text = dumps_lenient(record)
        lines.append(json.dumps(record, ensure_ascii=ascii).encode())  # another tool
        lines.append(text.encode("utf-8", "surrogatepass"))  # the standard library's
        if any("\ud800" <= c <= "\udfff" for c in text):
            lines.pop()  # the runner writes those ASCII-escaped (dumps_lenient's fallback)
            lines.append(json.dumps(record, separators=(",", ":")).encode())
        with contextlib.suppress(orjson.JSONEncodeError):  # not NaN, big ints, surrogates
            lines.append(orjson.dumps(record))  # orjson's
    _write(one_packet, lines)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(streams, "_small", lambda end: small)  # either reading
        got = b"".join(streams.event_json_blocks(one_packet))
    assert got == b"".join(line + b"\n" for line in lines)
