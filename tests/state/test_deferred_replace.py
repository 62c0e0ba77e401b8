"""A file replaced from a kept writer thread (``state.atomic.DeferredReplace``):
newest wins, a reader in the writer's process never sees an older file,
``flush``/``close`` wait, a failed write is raised once by the next call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from prompt_runner.errors import StorageError
from prompt_runner.state.atomic import DeferredReplace, read_json_object


def _doc(n: int) -> bytes:
    return json.dumps({"n": n, "pad": "x" * 200}).encode()


def test_an_in_process_reader_always_sees_the_newest_bytes(tmp_path: Path) -> None:
    # Without the reader's wait, a read right after a hand-over finds the file
    # one or more writes behind (the thread has not renamed yet) most times.
    path = tmp_path / "snap.json"
    writer = DeferredReplace(path)
    try:
        for n in range(300):
            writer.replace(_doc(n))
            assert read_json_object(path) == json.loads(_doc(n))
    finally:
        writer.close()
    assert json.loads(path.read_bytes())["n"] == 299
    assert [p.name for p in tmp_path.iterdir()] == ["snap.json"]  # no temp file left


def test_replace_returns_before_the_file_is_written_and_flush_waits(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    writer = DeferredReplace(path)
    for n in range(50):
        writer.replace(_doc(n))
    writer.flush()
    assert json.loads(path.read_bytes())["n"] == 49  # a plain read: flush made it current
    writer.replace(_doc(50))
    writer.close()
    assert json.loads(path.read_bytes())["n"] == 50
    assert not any(t.name == "replace snap.json" for t in threading.enumerate())
    writer.replace(_doc(51))  # a closed writer starts its thread again
    writer.close()
    assert json.loads(path.read_bytes())["n"] == 51


def test_the_file_never_goes_back_to_older_bytes(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    writer = DeferredReplace(path)
    seen: list[int] = []
    stop = threading.Event()

    def poll() -> None:  # a reader that does not wait (another process's view)
        while not stop.is_set():
            try:
                seen.append(json.loads(path.read_bytes())["n"])
            except FileNotFoundError:
                continue

    reader = threading.Thread(target=poll)
    reader.start()
    try:
        for n in range(500):
            writer.replace(_doc(n))
        writer.flush()
    finally:
        stop.set()
        reader.join()
        writer.close()
    assert seen == sorted(seen)  # whole files only (json.loads), in order
    assert json.loads(path.read_bytes())["n"] == 499


def test_a_failed_write_is_raised_once_by_the_next_call(tmp_path: Path) -> None:
    parent = tmp_path / "gone"
    parent.mkdir()
    path = parent / "snap.json"
    writer = DeferredReplace(path)
    writer.replace(_doc(1))
    writer.flush()
    (parent / "snap.json").unlink()
    parent.rmdir()
    parent.write_text("a file where the directory was\n")
    writer.replace(_doc(2))
    with pytest.raises(StorageError):
        writer.flush()
    writer.flush()  # reported once
    parent.unlink()
    writer.replace(_doc(3))  # the directory is made again by the write
    writer.close()
    assert json.loads(path.read_bytes())["n"] == 3


def test_bytes_handed_over_are_written_when_the_interpreter_exits(tmp_path: Path) -> None:
    path = tmp_path / "snap.json"
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from prompt_runner.state.atomic import DeferredReplace\n"
        "w = DeferredReplace(Path(sys.argv[1]))\n"
        "for n in range(100):\n    w.replace(b'{\"n\": %d}' % n)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, env=env)
    assert json.loads(path.read_bytes()) == {"n": 99}
