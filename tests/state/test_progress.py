"""progress.log: format, last-line-wins, corruption, torn tails."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from prompt_runner.errors import StateError
from prompt_runner.state.progress import (
    ProgressRecord,
    append_progress,
    parse_progress_line,
    read_progress,
)

SHA = "3f786850e387550fdab836ed7e6dc881de23001b"


def test_append_and_read_last_line_wins(tmp_path: Path) -> None:
    path = tmp_path / ".prompt_runner" / "progress.log"
    append_progress(path, "01", "failed", at="2025-01-02T03:04:05Z")
    append_progress(path, "02", "completed", "no_changes", at="2025-01-02T03:05:00Z")
    append_progress(path, "01", "completed", SHA, at="2025-01-02T03:06:00Z")
    assert path.read_text() == (
        "01:failed:2025-01-02T03:04:05Z\n"
        "02:completed:2025-01-02T03:05:00Z:no_changes\n"
        f"01:completed:2025-01-02T03:06:00Z:{SHA}\n"
    )
    assert read_progress(path) == {
        "01": ProgressRecord("01", "completed", "2025-01-02T03:06:00Z", SHA),
        "02": ProgressRecord("02", "completed", "2025-01-02T03:05:00Z", "no_changes"),
    }


def test_missing_file_is_empty(tmp_path: Path) -> None:
    assert read_progress(tmp_path / "progress.log") == {}


@pytest.mark.parametrize(
    "suffix", [None, SHA, f"app={SHA},docs={SHA}", "no_changes", "no_commit", "noop", "no_session"]
)
def test_suffixes_round_trip(tmp_path: Path, suffix: str | None) -> None:
    path = tmp_path / "progress.log"
    written = append_progress(path, "07", "completed", suffix)
    assert read_progress(path)["07"] == written
    assert written.suffix == suffix


def test_at_defaults_to_now_and_accepts_datetimes(tmp_path: Path) -> None:
    path = tmp_path / "progress.log"
    before = datetime.now(UTC).replace(microsecond=0)
    record = append_progress(path, "01", "completed")
    stamp = datetime.strptime(record.at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert before <= stamp <= datetime.now(UTC)
    plus2 = timezone(timedelta(hours=2))
    other = append_progress(path, "02", "failed", at=datetime(2025, 1, 2, 5, 0, 0, tzinfo=plus2))
    assert other.at == "2025-01-02T03:00:00Z"


@pytest.mark.parametrize(
    ("prompt_id", "status", "suffix"),
    [
        ("0:1", "completed", None),  # ids may not contain ':'
        ("0 1", "completed", None),
        ("", "completed", None),
        ("01", "Completed!", None),
        ("01", "completed", "deadbeef"),  # not a full sha
        ("01", "completed", "whatever"),
        ("01", "completed", f"app:{SHA}"),
    ],
)
def test_invalid_parts_are_refused(
    tmp_path: Path, prompt_id: str, status: str, suffix: str | None
) -> None:
    path = tmp_path / "progress.log"
    with pytest.raises(ValueError):
        append_progress(path, prompt_id, status, suffix)
    assert not path.exists() or path.read_bytes() == b""


def test_parse_reads_offsets_and_fractions() -> None:
    assert parse_progress_line("01:completed:2025-01-02T03:04:05.123+00:00:noop") == (
        ProgressRecord("01", "completed", "2025-01-02T03:04:05.123+00:00", "noop")
    )
    assert parse_progress_line("01:completed") is None
    assert parse_progress_line("01:completed:yesterday") is None


def test_corrupt_line_raises_with_line_number_and_fix(tmp_path: Path) -> None:
    path = tmp_path / "progress.log"
    path.write_text(
        "01:completed:2025-01-02T03:04:05Z\nthis is not a record\n02:failed:2025-01-02T03:04:05Z\n"
    )
    with pytest.raises(StateError) as info:
        read_progress(path)
    message = str(info.value)
    assert str(path) in message
    assert "line 2" in message
    assert "--remaining runs it again" in message
    assert info.value.exit_code == 2


def test_torn_final_line_is_ignored_then_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "progress.log"
    path.write_bytes(b"01:completed:2025-01-02T03:04:05Z\n02:compl")
    assert list(read_progress(path)) == ["01"]
    assert path.read_bytes().endswith(b"02:compl")  # plain reads do not write
    append_progress(path, "02", "failed", at="2025-01-02T03:05:00Z")
    assert path.read_text() == (
        "01:completed:2025-01-02T03:04:05Z\n02:failed:2025-01-02T03:05:00Z\n"
    )
    torn = list(tmp_path.glob("progress.log.torn.*"))
    assert len(torn) == 1 and torn[0].read_bytes() == b"02:compl"


def test_read_with_repair_moves_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "progress.log"
    path.write_bytes(b"01:completed:2025-01-02T03:04:05Z\n02:compl")
    assert list(read_progress(path, repair=True)) == ["01"]
    assert path.read_bytes() == b"01:completed:2025-01-02T03:04:05Z\n"
    assert len(list(tmp_path.glob("progress.log.torn.*"))) == 1


def test_blank_lines_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "progress.log"
    path.write_text("\n01:completed:2025-01-02T03:04:05Z\n\n")
    assert list(read_progress(path)) == ["01"]
