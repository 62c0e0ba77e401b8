"""Append-only JSONL: one line per append, torn tails, readers, group commit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prompt_runner.errors import StateError
from prompt_runner.state.jsonl import JsonlWriter, read_from, read_records, repair_torn_tail
from prompt_runner.state.lines import LineAppender


def test_append_writes_one_line_per_record(tmp_path: Path) -> None:
    path = tmp_path / "a" / "log.jsonl"
    with JsonlWriter(path) as writer:
        writer.append({"n": 1, "text": "line\nbreak"})
        writer.append({"n": 2, "nested": {"é": [1, 2]}})
    raw = path.read_bytes()
    assert raw.count(b"\n") == 2
    assert read_records(path, strict=True) == [
        {"n": 1, "text": "line\nbreak"},
        {"n": 2, "nested": {"é": [1, 2]}},
    ]


def test_reopen_appends_without_truncating(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with JsonlWriter(path) as writer:
        writer.append({"n": 1})
    with JsonlWriter(path) as writer:
        writer.append({"n": 2})
    assert [r["n"] for r in read_records(path, strict=True)] == [1, 2]


def test_unsafe_record_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    with JsonlWriter(path) as writer:
        with pytest.raises(ValueError):
            writer.append({"x": float("inf")})
        with pytest.raises(TypeError):
            writer.append({"x": {1, 2}})
    assert path.read_bytes() == b""


def test_closed_writer_refuses(tmp_path: Path) -> None:
    writer = JsonlWriter(tmp_path / "log.jsonl")
    writer.close()
    writer.close()
    with pytest.raises(ValueError):
        writer.append({"n": 1})


def test_torn_tail_is_moved_aside_and_not_glued(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":2,"half')
    writer = JsonlWriter(path)
    writer.append({"n": 3})
    writer.close()
    assert path.read_bytes() == b'{"n":1}\n{"n":3}\n'
    torn = writer.torn_path
    assert torn is not None
    assert torn.name.startswith("log.jsonl.torn.")
    assert torn.read_bytes() == b'{"n":2,"half'
    assert read_records(path, strict=True) == [{"n": 1}, {"n": 3}]


def test_repair_torn_tail_cases(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    assert repair_torn_tail(path) is None  # missing
    path.write_bytes(b"")
    assert repair_torn_tail(path) is None  # empty
    path.write_bytes(b'{"n":1}\n')
    assert repair_torn_tail(path) is None  # clean
    path.write_bytes(b"no newline at all")
    torn = repair_torn_tail(path)
    assert torn is not None and torn.read_bytes() == b"no newline at all"
    assert path.read_bytes() == b""


def test_repair_of_long_tail_scans_back_across_chunks(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    tail = b"x" * 200_000
    path.write_bytes(b'{"n":1}\n' + tail)
    torn = repair_torn_tail(path)
    assert torn is not None and torn.read_bytes() == tail
    assert path.read_bytes() == b'{"n":1}\n'


def test_two_repairs_get_distinct_torn_files(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"a")
    first = repair_torn_tail(path)
    path.write_bytes(b"b")
    second = repair_torn_tail(path)
    assert first is not None and second is not None and first != second
    assert {first.read_bytes(), second.read_bytes()} == {b"a", b"b"}


def test_read_records_strict_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\nnot json\n{"n":3}\n')
    with pytest.raises(StateError) as info:
        read_records(path, strict=True)
    assert str(path) in str(info.value) and "line 2" in str(info.value)
    assert read_records(path, strict=False) == [{"n": 1}, {"n": 3}]


def test_read_records_non_object_line_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\n[1,2]\n')
    with pytest.raises(StateError, match="line 2"):
        read_records(path, strict=True)


def test_read_records_ignores_torn_final_line_even_strict(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":')
    assert read_records(path, strict=True) == [{"n": 1}]
    assert path.read_bytes() == b'{"n":1}\n{"n":'  # readers never repair
    assert read_records(tmp_path / "missing.jsonl", strict=True) == []


def test_read_from_returns_only_new_complete_lines(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    assert read_from(path, 0) == ([], 0)
    path.write_bytes(b'{"n":1}\n{"n":2}\n')
    records, offset = read_from(path, 0)
    assert records == [{"n": 1}, {"n": 2}]
    assert offset == len(b'{"n":1}\n{"n":2}\n')
    assert read_from(path, offset) == ([], offset)

    with path.open("ab") as fh:
        fh.write(b'{"n":3}\n{"n":4')  # the second one is torn (in flight)
    records, offset2 = read_from(path, offset)
    assert records == [{"n": 3}]
    assert offset2 == offset + len(b'{"n":3}\n')

    with path.open("ab") as fh:
        fh.write(b"}\n")  # the writer completes it
    records, offset3 = read_from(path, offset2)
    assert records == [{"n": 4}]
    assert offset3 == path.stat().st_size


def test_read_from_reads_only_bytes_after_offset(tmp_path: Path) -> None:
    """Garbage before the offset is never looked at, so the read is O(new bytes)."""
    path = tmp_path / "log.jsonl"
    prefix = b"garbage that is not json\n" * 1000
    path.write_bytes(prefix + b'{"n":1}\n')
    records, offset = read_from(path, len(prefix), strict=True)
    assert records == [{"n": 1}]
    assert offset == path.stat().st_size


def test_read_from_restarts_when_file_shrank(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\n{"n":2}\n')
    _, offset = read_from(path, 0)
    path.write_bytes(b'{"n":9}\n')  # replaced (e.g. archived and restarted)
    assert read_from(path, offset) == ([{"n": 9}], 8)


def test_read_from_strict_and_lenient(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b'{"n":1}\nbad\n')
    assert read_from(path, 0) == ([{"n": 1}], 12)
    with pytest.raises(StateError, match="line 2"):
        read_from(path, 0, strict=True)
    with pytest.raises(ValueError):
        read_from(path, -1)


def test_group_commit_counts_fsyncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    monkeypatch.setattr(os, "fsync", counting_fsync)

    every = JsonlWriter(path)
    for n in range(20):
        every.append({"n": n})
    assert len(calls) == 20
    every.close()
    assert len(calls) == 20  # nothing left to sync

    calls.clear()
    grouped = JsonlWriter(path, fsync_interval_ms=60_000)
    for n in range(20):
        grouped.append({"n": n})
    assert calls == []  # inside one window: no fsync yet
    grouped.close()
    assert len(calls) == 1  # one on close
    assert len(read_records(path, strict=True)) == 40


def test_group_commit_syncs_again_after_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real_fsync = os.fsync
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"")
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd))[1])
    writer = JsonlWriter(path, fsync_interval_ms=20)
    writer.append({"n": 1})
    assert calls == []
    time.sleep(0.05)
    writer.append({"n": 2})
    assert len(calls) == 1
    writer.flush()
    assert len(calls) == 1  # already clean
    writer.append({"n": 3})
    writer.flush()
    assert len(calls) == 2
    writer.close()


def test_negative_interval_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        JsonlWriter(tmp_path / "x.jsonl", fsync_interval_ms=-1)


def test_line_appender_refuses_multi_line(tmp_path: Path) -> None:
    with LineAppender(tmp_path / "x.log") as appender:
        for bad in (b"no newline", b"two\nlines\n"):
            with pytest.raises(ValueError):
                appender.append_line(bad)


_WRITER = """
import sys
from pathlib import Path
from prompt_runner.state.jsonl import JsonlWriter
w = JsonlWriter(Path(sys.argv[1]), fsync_interval_ms=int(sys.argv[2]))
print("ready", flush=True)
n = 0
while True:
    n += 1
    w.append({"n": n, "pad": "y" * (n % 5000)})
"""


@pytest.mark.parametrize("interval", [0, 5])
def test_writer_killed_mid_append_loop_leaves_parseable_lines(
    tmp_path: Path, interval: int
) -> None:
    path = tmp_path / "log.jsonl"
    for _round in range(3):  # three writers in turn, each SIGKILLed mid-loop
        proc = subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), str(interval)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    # Simulate the worst case too: a torn tail at the very end.
    with path.open("ab") as fh:
        fh.write(b'{"n": -1, "pad": "yy')
    repair_torn_tail(path)
    assert path.read_bytes().endswith(b"\n")
    records = read_records(path, strict=True)
    assert len(records) > 10
    assert all(set(r) == {"n", "pad"} for r in records)
