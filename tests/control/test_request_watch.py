"""The inotify backend of control/request_watch.py (issue 19): real files, a real
thread, the kernel's real limits; polling stays the fallback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from prompt_runner.control.plane import ControlPlane, PromptInfo
from prompt_runner.control.request_watch import OWNER_CHECK_MS, RequestWatch
from prompt_runner.control.requests import build_request
from prompt_runner.control.store import ControlStore
from prompt_runner.render.text import Console
from prompt_runner.runner.position import Position

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")

VIEW = {"log_mode": "compact", "tool_output": "summary", "thinking": "hide", "diff": "none"}


class _Session:
    session_id = "s1"

    def wait(self, timeout_s: float | None = None) -> object | None:
        return None  # silent for as long as the test lasts

    def interrupt(self) -> None:
        return None


class _Calls:
    def __init__(self) -> None:
        self.count = 0
        self.event = threading.Event()

    def __call__(self) -> None:
        self.count += 1
        self.event.set()

    def wait(self, timeout_s: float) -> bool:
        got = self.event.wait(timeout_s)
        self.event.clear()
        return got


def _rename_in(directory: Path, name: str) -> None:
    tmp = directory.parent / f".{name}.tmp"
    tmp.write_text("{}")
    os.rename(tmp, directory / name)  # as ControlStore.write_request does


def _watch(directory: Path, calls: _Calls) -> RequestWatch:
    watch = RequestWatch(directory, calls, backend="inotify")
    watch.start()
    assert watch.wait_ready(10), watch.failure
    assert watch.backend == "inotify"
    assert calls.wait(5)  # the first look, for what landed before the watch was live
    return watch


def test_a_request_is_applied_at_once_with_no_tick(tmp_path: Path) -> None:
    plane = ControlPlane(
        tmp_path,
        run_id="r1",
        packet="p",
        console=Console(None, dict(VIEW)),
        prompts={"01": PromptInfo("One", "simulated", None, 3)},
        position=Position("01", 1, "run"),
        poll_interval_s=3600.0,  # no event-boundary look-up either
        notify=True,
    )
    plane.start()
    try:
        watch = plane.request_watch
        assert watch is not None and watch.wait_ready(10), watch and watch.failure
        assert watch.backend == "inotify"
        plane.tick("01", _Session())  # the session starts; no tick follows
        store = ControlStore(tmp_path)
        sent = time.monotonic()
        name = store.write_request(
            build_request("set_view", {"diff": "stat"}, run_id=None, author="t")
        )
        receipt = store.request_outcome_path(name)
        while not receipt.exists():
            assert time.monotonic() - sent < 5, "the inotify watch never decided the request"
            time.sleep(0.001)
        assert json.loads(receipt.read_text())["outcome"] == "applied"
        assert plane.console.view["diff"] == "stat"
        while (store.requests_dir / name).exists():  # removed after its receipt
            assert time.monotonic() - sent < 5, "the decided request was never removed"
            time.sleep(0.001)
    finally:
        plane.finish("completed")


def test_only_an_arriving_entry_wakes_the_watch(tmp_path: Path) -> None:
    calls = _Calls()
    watch = _watch(tmp_path, calls)
    try:
        _rename_in(tmp_path, "a")
        assert calls.wait(5), "a renamed-in request did not wake the watch"
        (tmp_path / "b").write_text("written in place")  # closed after writing: wakes
        assert calls.wait(5)
        before = calls.count
        (tmp_path / "a").unlink()  # the plane removing a decided request: no wake
        (tmp_path / "b").unlink()
        assert not calls.wait(0.3)
        assert calls.count == before
    finally:
        watch.stop()


def test_stop_ends_the_blocked_thread_at_once(tmp_path: Path) -> None:
    calls = _Calls()
    watch = _watch(tmp_path, calls)
    thread = watch._thread
    assert thread is not None
    time.sleep(0.05)  # blocked in poll(2) by now
    started = time.monotonic()
    watch.stop(timeout_s=5)
    took = time.monotonic() - started
    assert not thread.is_alive()
    assert took < OWNER_CHECK_MS / 1000 * 0.8, took  # woken by the pipe, not the timeout
    assert not watch.watching
    watch.stop()  # idempotent


def test_the_directory_removed_and_recreated_is_watched_again(tmp_path: Path) -> None:
    requests = tmp_path / "requests"
    requests.mkdir()
    calls = _Calls()
    watch = _watch(requests, calls)
    try:
        shutil.rmtree(requests)
        deadline = time.monotonic() + 5
        while watch.watching:
            assert time.monotonic() < deadline, "the watch did not see its directory go"
            time.sleep(0.005)
        requests.mkdir()
        assert calls.wait(5), "the watch was not re-armed (it calls back when it is)"
        assert watch.watching
        _rename_in(requests, "after")
        assert calls.wait(5), "a request in the recreated directory did not wake the watch"
        moved = tmp_path / "moved-away"  # moved away: the watch follows the path, not the inode
        requests.rename(moved)
        requests.mkdir()
        assert calls.wait(5)
        _rename_in(moved, "old-inode")
        _rename_in(requests, "new")
        assert calls.wait(5)
        assert watch.watching
    finally:
        watch.stop()
    assert not watch.watching


_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from prompt_runner.control.plane import ControlPlane, PromptInfo
    from prompt_runner.control.requests import build_request
    from prompt_runner.control.store import ControlStore
    from prompt_runner.render.text import Console
    from prompt_runner.runner.position import Position

    class Session:
        session_id = "s1"
        def wait(self, timeout_s=None): return None
        def interrupt(self): return None

    root = Path(sys.argv[1])
    view = {"log_mode": "compact", "tool_output": "summary", "thinking": "hide", "diff": "none"}
    plane = ControlPlane(root, run_id="r1", packet="p", console=Console(None, view),
                         prompts={"01": PromptInfo("One", "simulated", None, 3)},
                         position=Position("01", 1, "run"), notify=True)
    plane.start()
    watch = plane.request_watch
    watching = watch.wait_ready(10)
    handle = Session()
    plane.tick("01", handle)
    store = ControlStore(root)
    name = store.write_request(build_request("set_view", {"diff": "stat"}, run_id=None, author="t"))
    receipt = store.request_outcome_path(name)
    deadline = time.monotonic() + 2
    while not receipt.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    before_tick = receipt.exists()
    plane.tick("01", handle)  # the polling path
    out = {"watching": watching, "backend": watch.backend, "failure": watch.failure,
           "before_tick": before_tick, "outcome": json.loads(receipt.read_text())["outcome"],
           "diff": plane.console.view["diff"]}
    plane.finish("completed")
    print(json.dumps(out))
    """
)


def _child(tmp_path: Path, limit: str | None = None, *, hide_inotify: bool = False) -> dict:
    code = _CHILD
    if hide_inotify:
        code = "import sys; sys.modules['inotify_simple'] = None\n" + code
    argv = [sys.executable, "-c", code, str(tmp_path)]
    if limit is not None:
        # a new user namespace has its own inotify limits (/proc/sys/user): the
        # machine's are left alone
        shell = f'echo 0 > /proc/sys/user/{limit} && exec "$@"'
        probe = ["unshare", "--user", "--map-root-user", "sh", "-c", shell, "sh", "true"]
        tried = subprocess.run(probe, capture_output=True, text=True, timeout=60)
        if tried.returncode != 0:
            pytest.skip(f"no user namespace with its own inotify limits: {tried.stderr.strip()}")
        argv = probe[:-1] + argv
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result: dict = json.loads(done.stdout.splitlines()[-1])
    return result


def test_the_watch_limit_reached_falls_back_to_polling(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is not installed")
    got = _child(tmp_path, "max_inotify_watches")
    assert got["watching"] is False
    assert "watch limit" in got["failure"]
    assert got["before_tick"] is False  # nothing watches: the tick brings it in
    assert got["outcome"] == "applied" and got["diff"] == "stat"


def test_no_inotify_instance_left_falls_back_to_polling(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare(1) is not installed")
    got = _child(tmp_path, "max_inotify_instances")
    assert got["watching"] is False
    assert "no inotify instance" in got["failure"]
    assert got["outcome"] == "applied" and got["diff"] == "stat"


def test_without_inotify_simple_watchfiles_watches(tmp_path: Path) -> None:
    got = _child(tmp_path, hide_inotify=True)
    assert got["backend"] == "watchfiles" and got["watching"] is True, got
    assert got["before_tick"] is True  # notified, not polled
    assert got["outcome"] == "applied" and got["diff"] == "stat"


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _linked_in(root: Path, other: Path) -> Path:
    """A request hard-linked into ``requests/``: the kernel reports IN_CREATE only,
    which the watch does not wake for -- a change only the tick's listing finds."""
    source = ControlStore(other)
    source.init()
    name = source.write_request(
        build_request("set_view", {"diff": "stat"}, run_id=None, author="t")
    )
    os.link(source.requests_dir / name, ControlStore(root).requests_dir / name)
    return ControlStore(root).request_outcome_path(name)


def _clocked_plane(root: Path, clock: _Clock) -> ControlPlane:
    plane = ControlPlane(
        root,
        run_id="r1",
        packet="p",
        console=Console(None, dict(VIEW)),
        prompts={"01": PromptInfo("One", "simulated", None, 3)},
        position=Position("01", 1, "run"),
        clock=clock,
        notify=True,
    )
    plane.start()
    watch = plane.request_watch
    assert watch is not None and watch.wait_ready(10), watch and watch.failure
    return plane


def test_while_the_watch_is_live_the_tick_lists_once_a_second(tmp_path: Path) -> None:
    from prompt_runner.control.plane_requests import WATCHED_LIST_S

    clock = _Clock()
    root = tmp_path / "run"
    plane = _clocked_plane(root, clock)
    try:
        handle = _Session()
        plane.tick("01", handle)  # the first tick lists
        receipt = _linked_in(root, tmp_path / "other")
        time.sleep(0.2)  # had the watch woken, it would have decided by now
        assert not receipt.exists()
        clock.now += WATCHED_LIST_S / 2
        plane.tick("01", handle)  # the watch is live and reported nothing: no listing
        assert not receipt.exists()
        clock.now += WATCHED_LIST_S / 2
        plane.tick("01", handle)  # a second after the last listing: listed
        assert json.loads(receipt.read_text())["outcome"] == "applied"
        assert plane.console.view["diff"] == "stat"
    finally:
        plane.finish("completed")


def test_a_change_the_watch_could_not_decide_is_listed_at_the_next_tick(tmp_path: Path) -> None:
    clock = _Clock()
    plane = _clocked_plane(tmp_path, clock)
    try:
        handle = _Session()
        plane.tick("01", handle)
        # the watch's call comes while the plane has no session to decide it in (as
        # after a steer was taken, before the resumed session's first tick)
        with plane._lock:
            receipt = _request_in(tmp_path)
            plane._handle = None
            deadline = time.monotonic() + 5
            while plane._notified == plane._listed[1]:
                plane._lock.release()
                time.sleep(0.005)
                plane._lock.acquire()
                assert time.monotonic() < deadline, "the watch never reported the request"
            plane._handle = handle
        assert not receipt.exists()
        plane.tick("01", handle)  # no time has passed: listed for the reported change
        assert json.loads(receipt.read_text())["outcome"] == "applied"
    finally:
        plane.finish("completed")


def _request_in(root: Path) -> Path:
    store = ControlStore(root)
    name = store.write_request(build_request("set_view", {"diff": "stat"}, run_id=None, author="t"))
    return store.request_outcome_path(name)
