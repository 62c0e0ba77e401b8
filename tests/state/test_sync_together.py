"""``sync_together``: appends held back by several appenders, fsynced all at once."""

from __future__ import annotations

import errno
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from prompt_runner.errors import StorageError
from prompt_runner.state import lines
from prompt_runner.state.lines import LineAppender, sync_together
from prompt_runner.state.store import FileStore

WINDOW_MS = 60_000  # no fsync on append: everything waits for the flush


def _target(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


_REAL_FSYNC = os.fsync


def _recording(synced: list[str]) -> Callable[[int], None]:
    """An ``os.fsync`` that notes the file of each call in ``synced``."""

    def fsync(fd: int) -> None:
        synced.append(_target(fd))
        _REAL_FSYNC(fd)

    return fsync


pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")


def test_every_held_back_file_and_a_new_files_directory_are_fsynced_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = tmp_path / "progress.log"
    old.write_bytes(b"01:completed:2026-01-01T00:00:00Z\n")
    made = LineAppender(tmp_path / "prompts" / "02.jsonl", fsync_interval_ms=WINDOW_MS)
    kept = LineAppender(old, fsync_interval_ms=WINDOW_MS)
    clean = LineAppender(tmp_path / "clean.log", fsync_interval_ms=WINDOW_MS)
    clean.flush()  # created, synced: nothing held back
    made.append_line(b"{}\n")
    kept.append_line(b"02:completed:2026-01-01T00:00:01Z\n")
    assert made.dirty and kept.dirty

    real_fsync = os.fsync
    # Three fsyncs are expected in flight at once: each waits (up to 10 s) for the others.
    barrier = threading.Barrier(3, timeout=10)
    synced: list[str] = []
    together: list[bool] = []

    def fsync(fd: int) -> None:
        synced.append(_target(fd))
        try:
            barrier.wait()
            together.append(True)
        except threading.BrokenBarrierError:
            together.append(False)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    sync_together([made, kept, clean])
    assert sorted(synced) == sorted(
        [str(tmp_path / "prompts" / "02.jsonl"), str(tmp_path / "prompts"), str(old)]
    )
    assert together == [True, True, True]  # in flight at the same time, not one after another
    assert not made.dirty and not kept.dirty

    synced.clear()
    made.append_line(b"{}\n")  # the directory entry is durable now: only the file again
    monkeypatch.setattr(os, "fsync", _recording(synced))
    sync_together([made, kept])
    assert synced == [str(tmp_path / "prompts" / "02.jsonl")]
    for appender in (made, kept, clean):
        appender.close()


def test_a_failed_fsync_names_its_file_and_keeps_only_its_appends_held_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = LineAppender(tmp_path / "good.log", fsync_interval_ms=WINDOW_MS)
    bad = LineAppender(tmp_path / "bad.log", fsync_interval_ms=WINDOW_MS)
    good.append_line(b"a\n")
    bad.append_line(b"b\n")
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        if _target(fd).endswith("bad.log"):
            raise OSError(errno.EIO, "Input/output error")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with pytest.raises(StorageError) as caught:
        sync_together([good, bad])
    assert "bad.log" in str(caught.value)
    assert not good.dirty
    assert bad.dirty  # not known durable: the next flush tries again
    monkeypatch.setattr(os, "fsync", real_fsync)
    bad.flush()
    assert not bad.dirty
    good.close()
    bad.close()


def test_a_group_committed_store_holds_progress_lines_for_its_flush(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(tmp_path, fsync_interval_ms=WINDOW_MS)
    store.update_prompt("01", {"status": "running"})
    synced: list[str] = []
    monkeypatch.setattr(os, "fsync", _recording(synced))
    store.update_prompt("01", {"status": "completed"})
    store.append_progress("01", "completed", "no_changes")
    assert synced == []  # inside the window: held back, both
    assert store.read_progress()["01"].status == "completed"  # written, only not yet synced
    store.flush()
    assert str(tmp_path / "progress.log") in synced
    assert str(tmp_path / "prompts" / "01.jsonl") in synced
    assert str(tmp_path / "prompts") in synced
    store.close()


def test_a_store_without_a_window_still_fsyncs_each_progress_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = FileStore(tmp_path)
    synced: list[str] = []
    monkeypatch.setattr(os, "fsync", _recording(synced))
    store.append_progress("01", "completed", "no_changes")
    assert str(tmp_path / "progress.log") in synced
    store.close()


def test_without_a_thread_to_be_had_the_fsyncs_run_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = LineAppender(tmp_path / "a.log", fsync_interval_ms=WINDOW_MS)
    second = LineAppender(tmp_path / "b.log", fsync_interval_ms=WINDOW_MS)
    first.append_line(b"a\n")
    second.append_line(b"b\n")

    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(lines, "_POOL", None)  # its threads are yet to be started
    monkeypatch.setattr(threading.Thread, "start", no_thread)
    sync_together([first, second])
    assert not first.dirty and not second.dirty
    first.close()
    second.close()
