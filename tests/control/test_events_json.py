"""Issue 19: `control events --json` prints, a block at a time, exactly the lines
the record-by-record loop printed (json.dumps of each record, odd lines included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.control import client, streams
from prompt_runner.state import jsonl
from tests.control._helpers import make_packet
from tests.helpers.cli import cli

ODD_LINES = [
    b'{"kind":"assistant_text","at_ms":1,"text":"plain"}',
    b"",
    b"   ",
    b'{"kind":"usage","cost_usd":1e-05,"tokens":12345678901234567890123}',  # float, bigint
    b'{"kind":"x","value":NaN,"other":-Infinity}',  # json accepts, orjson refuses
    b'{"kind":"x","text":"caf\\u00e9 \\u2028 \\t \\"q\\" \xc3\xa9"}',
    b'{"kind":"x","text":"\\ud83d\\ude00","nested":{"a":[1,2.5,{"b":null}],"c":{}}}',
    b'{"kind":"dup","a":1,"a":2}',
    b"[1, 2]",  # valid JSON, not an object: skipped
    b'"just a string"',
    b"{not json",
    b'{"kind":"spaced" , "at_ms" : 3 }',
    b"\xff\xfe garbage",
]


def _expected(packet: Path) -> str:
    return "".join(
        json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in client.iter_events(packet)
    )


def _write(packet: Path, lines: list[bytes], tail: bytes = b"") -> None:
    events = packet / ".prompt_runner" / "control" / "events.jsonl"
    events.parent.mkdir(parents=True, exist_ok=True)
    events.write_bytes(b"\n".join(lines) + b"\n" + tail)


@pytest.mark.parametrize("chunk", [jsonl.CHUNK_BYTES, 7])
def test_json_blocks_are_the_record_loop_byte_for_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(streams, "CHUNK_BYTES", chunk)  # 7: every line crosses a chunk
    packet = make_packet(tmp_path, {"01": {}})
    _write(packet, ODD_LINES * 3, tail=b'{"kind":"torn","at')
    expected = _expected(packet)
    assert expected.count("\n") == 7 * 3  # the odd lines really are skipped
    got = "".join(streams.event_json_blocks(packet))
    assert got == expected
    assert "".join(streams.event_json_blocks(packet, from_current=True)) == ""


def test_the_cli_prints_the_same_lines(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    _write(packet, ODD_LINES)
    proc = cli("control", "events", packet, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _expected(packet)
    assert cli("control", "events", packet, "--json", "--from", "current").stdout == ""
