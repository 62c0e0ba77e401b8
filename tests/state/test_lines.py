"""The line primitives the control store shares: batches, shared appends, exclusive
creation, streaming reads, the lenient encoder and checked object reads."""

from __future__ import annotations

import dataclasses
import enum
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prompt_runner.errors import StateError
from prompt_runner.state.atomic import create_file, is_temp_name, read_json_object, temp_name
from prompt_runner.state.jsonl import dumps_lenient, iter_from, read_from
from prompt_runner.state.lines import LineAppender, append_line_shared


def test_a_batch_is_one_write_and_the_tail_is_repaired_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"a":1}\n{"tor')
    writes: list[bytes] = []
    real_write = os.write

    def counting(fd: int, data: bytes) -> int:
        writes.append(bytes(data))
        return real_write(fd, data)

    with LineAppender(path) as appender:
        monkeypatch.setattr(os, "write", counting)
        appender.append_lines(b'{"b":2}\n{"c":3}\n')
        monkeypatch.undo()
        assert appender.torn_path is not None
        assert appender.torn_path.name.startswith("events.jsonl.torn.")
        with pytest.raises(ValueError):
            appender.append_lines(b'{"d":4}')
    assert writes == [b'{"b":2}\n{"c":3}\n']
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n{"c":3}\n'


def test_a_shared_append_ends_a_torn_line_and_cuts_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "amendments.jsonl"
    append_line_shared(path, b'{"n":1}\n')
    with path.open("ab") as f:
        f.write(b'{"n": 2, "in fli')
    append_line_shared(path, b'{"n":3}\n')
    assert path.read_bytes() == b'{"n":1}\n{"n": 2, "in fli\n{"n":3}\n'
    assert [r for r, _ in iter_from(path)] == [{"n": 1}, {"n": 3}]
    assert list(tmp_path.glob("sub/*.torn*")) == []
    with pytest.raises(ValueError):
        append_line_shared(path, b"no newline")


def test_create_file_is_exclusive_and_leaves_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "receipt.json"
    create_file(path, b"{}")
    with pytest.raises(FileExistsError):
        create_file(path, b"[]")
    assert path.read_bytes() == b"{}"

    def failing_write(fd: int, data: bytes) -> int:
        raise OSError(28, "No space left on device")

    other = tmp_path / "other.json"
    monkeypatch.setattr(os, "write", failing_write)
    with pytest.raises(OSError):
        create_file(other, b"{}")
    monkeypatch.undo()
    assert not other.exists()


def test_temp_names_are_recognised() -> None:
    assert is_temp_name(temp_name(Path("/x/snapshot.json")).name)
    assert is_temp_name(".receipt-1-ab.tmp")
    assert not is_temp_name("20260810-000000-000000-1.json")
    assert not is_temp_name("state.json")


def test_iter_from_streams_what_read_from_returns(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\n\nnot json\n[1]\n{"n":2}\n{"n":')
    records, end = read_from(path, 0)
    streamed = list(iter_from(path))
    assert [r for r, _ in streamed] == records == [{"n": 1}, {"n": 2}]
    assert streamed[-1][1] == end == len(b'{"n":1}\n\nnot json\n[1]\n{"n":2}\n')
    assert list(iter_from(path, streamed[0][1])) == streamed[1:]
    assert list(iter_from(path, 10**9)) == streamed  # replaced: read from 0
    assert list(iter_from(tmp_path / "missing.jsonl")) == []


class _Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class _Point:
    x: int


def test_dumps_lenient_encodes_what_json_cannot_hold() -> None:
    line = dumps_lenient(
        {
            "at": datetime(2026, 8, 10, 12, tzinfo=UTC),
            "colour": _Colour.RED,
            "tags": {"b", "a"},
            "raw": b"bytes",
            "point": _Point(1),
            "path": Path("a/b"),
            "name": "caf\udce9",
        }
    )
    assert line == (
        '{"at":"2026-08-10T12:00:00+00:00","colour":"red","tags":["a","b"],'
        '"raw":"bytes","point":{"x":1},"path":"a/b","name":"caf\\udce9"}'
    )
    line.encode("utf-8")  # always encodable


def test_read_json_object(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    assert read_json_object(path) is None
    path.write_text('{"a": 1}')
    assert read_json_object(path) == {"a": 1}
    for bad, why in (("[1]", "is not a JSON object"), ("{x", "is not valid JSON")):
        path.write_text(bad)
        with pytest.raises(StateError, match=why) as info:
            read_json_object(path, fix="delete it")
        assert str(path) in str(info.value) and "delete it" in str(info.value)
