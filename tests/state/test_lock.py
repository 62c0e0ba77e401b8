"""The run lock with real processes: live, stale, recycled, legacy, racing, killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prompt_runner.errors import InfrastructureError, LockHeldError
from prompt_runner.state.lock import (
    PidIdentity,
    RunLock,
    current_identity,
    identity_alive,
    parse_proc_stat,
    process_start_time,
    read_pid_file,
)

DEAD_PID = 2147483646
needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "300"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def _ticks(pid: int) -> int:
    start = process_start_time(pid)
    assert start is not None
    return start


# -- identities --------------------------------------------------------------------


@needs_proc
def test_start_time_is_proc_field_22(sleeper: subprocess.Popen[bytes]) -> None:
    text = Path(f"/proc/{sleeper.pid}/stat").read_text()
    field22 = int(text[text.rfind(")") + 2 :].split()[19])
    assert process_start_time(sleeper.pid) == field22
    assert current_identity() == PidIdentity(os.getpid(), process_start_time(os.getpid()))


def test_parse_proc_stat_handles_spaces_and_parentheses() -> None:
    tail = " ".join(["S", *[str(n) for n in range(4, 22)], "987654", "0", "0"])
    assert parse_proc_stat(f"123 (a b) (c)) d) {tail}") == ("S", 987654)
    assert parse_proc_stat("garbage") is None
    assert parse_proc_stat("1 (x) S 2 3") is None


@needs_proc
def test_command_name_with_spaces_and_parens(tmp_path: Path) -> None:
    odd = tmp_path / "x) (y z"
    odd.symlink_to(Path(subprocess.check_output(["which", "sleep"], text=True).strip()))
    proc = subprocess.Popen([str(odd), "300"])
    try:
        comm = Path(f"/proc/{proc.pid}/stat").read_text()
        assert "(x) (y z)" in comm  # the kernel really reports the odd name
        start = process_start_time(proc.pid)
        assert start is not None
        assert identity_alive(PidIdentity(proc.pid, start))
    finally:
        proc.kill()
        proc.wait()


@needs_proc
def test_zombie_is_not_alive() -> None:
    proc = subprocess.Popen(["true"])
    deadline = time.monotonic() + 10
    while Path(f"/proc/{proc.pid}/stat").read_text().split(")")[-1].split()[0] != "Z":
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        assert process_start_time(proc.pid) is None
        assert not identity_alive(PidIdentity(proc.pid, None))
    finally:
        proc.wait()


def test_identity_alive_rules(sleeper: subprocess.Popen[bytes]) -> None:
    real = _ticks(sleeper.pid)
    assert identity_alive(PidIdentity(sleeper.pid, real))
    assert identity_alive(PidIdentity(sleeper.pid, None))  # legacy: assume alive
    assert not identity_alive(PidIdentity(sleeper.pid, 0))  # recycled pid
    assert not identity_alive(PidIdentity(DEAD_PID, None))
    assert process_start_time(DEAD_PID) is None
    assert process_start_time(0) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (b"123 456\n", PidIdentity(123, 456)),
        (b"123\n", PidIdentity(123, None)),
        (b"  77   8  ", PidIdentity(77, 8)),
        (b"not-a-pid\n", None),
        (b"", None),
        (b"1 2 3\n", None),
        (b"0 5\n", None),
        (b"-4 5\n", None),
        (b"\xff\xfe", None),
        (b"\xd9\xa3 1\n", None),  # non-ASCII digits
    ],
)
def test_read_pid_file_never_raises(tmp_path: Path, text: bytes, expected: object) -> None:
    path = tmp_path / "run.pid"
    path.write_bytes(text)
    assert read_pid_file(path) == expected


def test_read_pid_file_missing_or_directory(tmp_path: Path) -> None:
    assert read_pid_file(tmp_path / "missing") is None
    assert read_pid_file(tmp_path) is None


# -- acquire / release -------------------------------------------------------------


def test_acquire_writes_identity_and_release_removes(tmp_path: Path) -> None:
    path = tmp_path / ".prompt_runner" / "run.pid"
    with RunLock(path) as lock:
        assert lock.held
        assert path.read_text() == f"{os.getpid()} {_ticks(os.getpid())}\n"
        assert read_pid_file(path) == current_identity()
    assert not path.exists()
    assert [p.name for p in path.parent.iterdir()] == []  # no temp or aside files


def test_pid_file_removed_when_body_raises(tmp_path: Path) -> None:
    path = tmp_path / "run.pid"
    with pytest.raises(RuntimeError), RunLock(path):
        raise RuntimeError("run failed")
    assert not path.exists()


def test_live_holder_is_refused_and_file_untouched(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    path = tmp_path / "run.pid"
    content = f"{sleeper.pid} {_ticks(sleeper.pid)}\n".encode()
    path.write_bytes(content)
    before = path.stat()
    with pytest.raises(LockHeldError) as info:
        RunLock(path).acquire()
    assert info.value.exit_code == 3
    assert info.value.pid == sleeper.pid
    assert str(sleeper.pid) in str(info.value) and str(path) in str(info.value)
    assert path.read_bytes() == content
    assert path.stat().st_ino == before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.pid"]


def test_legacy_live_pid_is_refused(tmp_path: Path, sleeper: subprocess.Popen[bytes]) -> None:
    path = tmp_path / "run.pid"
    path.write_bytes(f"{sleeper.pid}\n".encode())
    with pytest.raises(LockHeldError):
        RunLock(path).acquire()
    assert path.read_bytes() == f"{sleeper.pid}\n".encode()


@pytest.mark.parametrize("kind", ["recycled", "dead", "dead-legacy", "garbage", "empty"])
def test_stale_files_are_taken_over(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], kind: str
) -> None:
    content = {
        "recycled": f"{sleeper.pid} 0\n",
        "dead": f"{DEAD_PID} 12345\n",
        "dead-legacy": f"{DEAD_PID}\n",
        "garbage": "not-a-pid\n",
        "empty": "",
    }[kind]
    path = tmp_path / "run.pid"
    path.write_text(content)
    lock = RunLock(path)
    lock.acquire()
    assert read_pid_file(path) == current_identity()
    lock.release()
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_second_lock_in_same_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "run.pid"
    with RunLock(path) as first:
        with pytest.raises(LockHeldError):
            RunLock(path).acquire()
        with pytest.raises(InfrastructureError):
            first.acquire()
        assert path.exists()
    assert not path.exists()


def test_release_keeps_a_file_that_is_no_longer_ours(tmp_path: Path) -> None:
    path = tmp_path / "run.pid"
    lock = RunLock(path)
    lock.acquire()
    path.write_text("999 1\n")  # someone else's now
    lock.release()
    assert path.read_text() == "999 1\n"
    lock.release()  # idempotent


_ATEXIT_CHILD = """
import sys
from pathlib import Path
from prompt_runner.state.lock import RunLock
RunLock(Path(sys.argv[1])).acquire()
print("held", flush=True)
sys.exit(4 if sys.argv[2] == "fail" else 0)
"""


@pytest.mark.parametrize("how", ["ok", "fail"])
def test_atexit_removes_the_file_on_exit(tmp_path: Path, how: str) -> None:
    path = tmp_path / "run.pid"
    done = subprocess.run(
        [sys.executable, "-c", _ATEXIT_CHILD, str(path), how],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.stdout == "held\n", done.stderr
    assert done.returncode == (4 if how == "fail" else 0)
    assert not path.exists()


_HOLD_CHILD = """
import sys, time
from pathlib import Path
from prompt_runner.state.lock import RunLock
RunLock(Path(sys.argv[1])).acquire()
print("held", flush=True)
time.sleep(300)
"""


def test_sigkilled_holder_leaves_stale_file_that_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "run.pid"
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD_CHILD, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline() == "held\n"
        ident = read_pid_file(path)
        assert ident is not None and ident.pid == child.pid and identity_alive(ident)
        with pytest.raises(LockHeldError):
            RunLock(path).acquire()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    assert read_pid_file(path) == ident  # SIGKILL skips atexit: the file stays
    assert not identity_alive(ident)
    with RunLock(path):
        assert read_pid_file(path) == current_identity()
    assert not path.exists()


_RACER = """
import sys, time
from pathlib import Path
from prompt_runner.errors import LockHeldError
from prompt_runner.state.lock import RunLock
path, go, done = (Path(a) for a in sys.argv[1:4])
while not go.exists():
    time.sleep(0.0005)
lock = RunLock(path)
try:
    lock.acquire()
except LockHeldError:
    print("held", flush=True)
    sys.exit(0)
print("won", flush=True)
while not done.exists():
    time.sleep(0.005)
lock.release()
"""


def test_racing_starters_exactly_one_wins(tmp_path: Path) -> None:
    for trial in range(20):
        trial_dir = tmp_path / f"t{trial}"
        trial_dir.mkdir()
        path = trial_dir / "run.pid"
        if trial % 2:
            path.write_text(f"{DEAD_PID} 1\n")  # both must take over a stale file
        go, done = trial_dir / "go", trial_dir / "done"
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", _RACER, str(path), str(go), str(done)],
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        time.sleep(0.15)  # let the interpreters start and spin on `go`
        go.touch()
        try:
            results = []
            for racer in racers:
                assert racer.stdout is not None
                results.append(racer.stdout.readline().strip())
            assert sorted(results) == ["held", "held", "won"], f"trial {trial}: {results}"
        finally:
            done.touch()
            for racer in racers:
                racer.wait(timeout=30)
                if racer.stdout is not None:
                    racer.stdout.close()
        assert not path.exists()
        assert sorted(p.name for p in trial_dir.iterdir()) == ["done", "go"]


def test_stale_removal_puts_back_a_file_that_changed_meanwhile(tmp_path: Path) -> None:
    """Takeover compares the renamed file with what was judged stale before deleting it."""
    path = tmp_path / "run.pid"
    path.write_text("4242 7\n")  # a new holder replaced the stale file we had read
    RunLock(path)._remove_stale(b"2147483646 1\n")
    assert path.read_text() == "4242 7\n"
    RunLock(path)._remove_stale(b"4242 7\n")  # matches: removed
    assert list(tmp_path.iterdir()) == []
