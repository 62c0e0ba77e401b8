"""Run journal durability (catalog C4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.errors import StateError
from prompt_runner.state.journal import Journal, MemoryJournal, read_journal


def _journal_path(tmp_path: Path) -> Path:
    return tmp_path / "runs" / "R1" / "journal.jsonl"


def test_records_have_the_shape_and_contiguous_seq(tmp_path: Path) -> None:
    path = _journal_path(tmp_path)
    with Journal(path, "R1") as journal:
        first = journal.append("run_started", {"targets": ["01", "02"]})
        journal.append("run_finished", {"status": "failed"})
    assert set(first) == {"schema", "run_id", "seq", "at", "type", "data"}
    assert first["schema"] == 1 and first["run_id"] == "R1" and first["seq"] == 1
    records = read_journal(path)
    assert [r["seq"] for r in records] == [1, 2]
    assert [r["type"] for r in records] == ["run_started", "run_finished"]
    assert records[0]["data"] == {"targets": ["01", "02"]}


def test_reopening_appends_without_truncating(tmp_path: Path) -> None:
    path = _journal_path(tmp_path)
    with Journal(path, "R1") as journal:
        journal.append("run_started", {})
    with Journal(path, "R1") as journal:
        assert journal.last_seq == 1
        journal.append("run_resumed", {})
        assert [r["seq"] for r in journal.records()] == [1, 2]
    assert [r["type"] for r in read_journal(path)] == ["run_started", "run_resumed"]


def test_torn_final_record_is_quarantined_and_seq_stays_contiguous(tmp_path: Path) -> None:
    path = _journal_path(tmp_path)
    with Journal(path, "R1") as journal:
        journal.append("run_started", {})
        journal.append("run_finished", {})
    with path.open("ab") as fh:
        fh.write(b'{"schema":1,"run_id":"run"')
    with Journal(path, "R1") as journal:
        assert journal.torn_path is not None
        assert journal.torn_path.name.startswith("journal.jsonl.torn.")
        assert journal.torn_path.read_bytes() == b'{"schema":1,"run_id":"run"'
        journal.append("run_resumed", {})
    lines = path.read_bytes().splitlines()
    assert [json.loads(line)["seq"] for line in lines] == [1, 2, 3]
    assert len(list(path.parent.glob("journal.jsonl.torn.*"))) == 1


def test_earlier_corruption_is_rejected_and_file_left_alone(tmp_path: Path) -> None:
    path = _journal_path(tmp_path)
    with Journal(path, "R1") as journal:
        journal.append("run_started", {})
    original = path.read_bytes()
    path.write_bytes(b"broken\n" + original + b'{"torn')
    with pytest.raises(StateError) as info:
        Journal(path, "R1")
    assert "journal corrupt at line 1" in str(info.value)
    assert str(path) in str(info.value)
    assert path.read_bytes() == b"broken\n" + original + b'{"torn'  # nothing quarantined
    with pytest.raises(StateError, match="line 1"):
        read_journal(path)


def test_seq_gap_is_corruption(tmp_path: Path) -> None:
    path = _journal_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(
        '{"schema":1,"run_id":"R1","seq":1,"at":"x","type":"a","data":{}}\n'
        '{"schema":1,"run_id":"R1","seq":3,"at":"x","type":"b","data":{}}\n'
    )
    with pytest.raises(StateError, match="journal corrupt at line 2"):
        read_journal(path)


def test_unsafe_data_writes_nothing(tmp_path: Path) -> None:
    path = _journal_path(tmp_path)
    with Journal(path, "R1") as journal:
        with pytest.raises(ValueError):
            journal.append("x", {"bad": float("nan")})
        journal.append("ok", {})
    assert [r["seq"] for r in read_journal(path)] == [1]


def test_memory_journal_numbers_and_keeps() -> None:
    journal = MemoryJournal("R1")
    journal.append("a", {"k": [1]})
    record = journal.append("b", {})
    assert record["seq"] == 2
    assert [r["type"] for r in journal.records()] == ["a", "b"]
    dropped = MemoryJournal("R1", keep=False)
    assert dropped.append("a", {})["seq"] == 1
    assert dropped.append("b", {})["seq"] == 2
    assert dropped.records() == []
