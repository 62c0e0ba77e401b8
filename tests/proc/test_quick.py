"""proc.start_quick against real processes: the same result as proc.run, a new session,
whole output on both pipes, a missing executable, the deadline on the whole group,
what the leader left behind, and an abandoned child (watch's git without subprocess)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from prompt_runner import proc
from prompt_runner.proc.quick import Quick, start_quick


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def gone_soon(pid: int, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def started(argv: list[str], **kwargs: object) -> Quick:
    env = kwargs.pop("env", dict(os.environ))
    child = start_quick(argv, env=env, **kwargs)  # type: ignore[arg-type]
    assert isinstance(child, Quick), child
    return child


@pytest.mark.parametrize(
    "code",
    [
        "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)",
        "import sys; sys.stdout.buffer.write(b'\\xff bad utf-8')",
        "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
    ],
)
def test_the_result_is_proc_run_s_for_the_same_child(tmp_path: Path, code: str) -> None:
    quick = started([sys.executable, "-c", code]).result()
    ran = proc.run([sys.executable, "-c", code], cwd=os.getcwd(), env=dict(os.environ))
    assert (quick.returncode, quick.stdout, quick.stderr, quick.timeout, quick.ok) == (
        ran.returncode,
        ran.stdout,
        ran.stderr,
        ran.timeout,
        ran.ok,
    )
    assert quick.argv == (sys.executable, "-c", code)


def test_git_through_start_git_reads_what_git_in_the_repo_reads(git_repo: Path) -> None:
    from prompt_runner import git

    (git_repo / "new.txt").write_text("x\n")
    child = git.start_git(git_repo, "status", "--porcelain")
    assert not isinstance(child, proc.ProcResult)
    assert child.result().stdout == git.run_git(git_repo, "status", "--porcelain").stdout
    assert child.result().stdout == "?? new.txt\n"
    assert child.result() is child.result()  # asked twice: the same result


def test_the_child_leads_a_new_session_with_stdin_from_dev_null() -> None:
    code = "import os, sys; print(os.getsid(0) == os.getpid(), repr(sys.stdin.read()))"
    assert started([sys.executable, "-c", code]).result().stdout == "True ''\n"


def test_whole_output_of_both_pipes_however_large() -> None:
    code = (
        "import sys\n"
        "for _ in range(40):\n"
        "    sys.stdout.write('o' * 50000); sys.stderr.write('e' * 50000)\n"
    )
    res = started([sys.executable, "-c", code]).result()
    assert res.ok and res.stdout == "o" * 2_000_000 and res.stderr == "e" * 2_000_000


def test_the_environment_is_the_one_passed_and_its_path_finds_the_program(
    tmp_path: Path,
) -> None:
    env = {"PATH": str(Path(sys.executable).parent), "ONLY_HERE": "yes"}
    name = Path(sys.executable).name
    res = started([name, "-c", "import os; print(sorted(os.environ))"], env=env).result()
    assert res.ok and "'ONLY_HERE'" in res.stdout and "'HOME'" not in res.stdout


def test_a_missing_executable_is_a_result_not_an_exception(tmp_path: Path) -> None:
    res = start_quick(["definitely-not-a-command-xyz"], env={"PATH": str(tmp_path)})
    assert isinstance(res, proc.ProcResult)
    assert res.returncode is None and res.missing and not res.ok
    assert "definitely-not-a-command-xyz" in (res.start_error or "")
    assert proc.run(["definitely-not-a-command-xyz"], cwd=tmp_path, env={}).missing


def test_the_deadline_ends_the_whole_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "grandchild.pid"
    code = (
        "import signal, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', "
        "'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(60)\n"
    )
    began = time.monotonic()
    res = started([sys.executable, "-c", code], timeout_ms=1500, grace_s=0.3).result()
    assert res.timed_out and res.timeout == "deadline" and not res.ok
    assert res.stdout == "started\n"  # what it wrote before the deadline is kept
    assert time.monotonic() - began < 10
    assert gone_soon(int(pidfile.read_text()))


def test_what_the_leader_left_in_its_group_is_ended_when_it_exits(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        "print(child.pid)\n"
    )
    res = started([sys.executable, "-c", code]).result()
    assert res.ok
    assert gone_soon(int(res.stdout))


def test_an_abandoned_child_and_its_group_are_ended_and_reaped(tmp_path: Path) -> None:
    child = started([sys.executable, "-c", "import time; time.sleep(60)"], grace_s=0.3)
    pid = child.pid
    assert alive(pid)
    child.abandon()
    assert not alive(pid)
    with pytest.raises(ChildProcessError):  # reaped: no zombie left for anyone
        os.waitpid(pid, os.WNOHANG)


def test_importing_quick_loads_no_subprocess_or_threading() -> None:
    code = (
        "import sys\n"
        "from prompt_runner import git\n"
        "from prompt_runner.proc import quick\n"
        "r = git.start_git('.', '--version').result()\n"
        "print(r.ok, [m for m in ('subprocess', 'threading', 'dataclasses', 'typing')"
        " if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "True []\n"


def test_the_frozen_values_behave_as_the_frozen_dataclasses_they_were(tmp_path: Path) -> None:
    import copy
    import pickle

    from prompt_runner.git import RemoteTip, StatusEntry, Upstream
    from prompt_runner.state.lock import PidIdentity
    from prompt_runner.watch import RepoRef

    values = [
        proc.ProcRequest(("git", "status"), tmp_path, {"A": "1"}, deadline_ms=5),
        proc.ProcResult(("git",), 0, stdout="out", timeout="deadline", duration_ms=3),
        StatusEntry("R ", "new", "old"),
        StatusEntry("??", "x"),
        Upstream("refs/remotes/o/m", "o/m", "o", "refs/heads/m", None),
        RemoteTip(None, "unreachable"),
        PidIdentity(42, 7),
        RepoRef("app", tmp_path),
    ]
    for value in values:
        assert copy.copy(value) == value and copy.deepcopy(value) == value
        assert pickle.loads(pickle.dumps(value)) == value
        with pytest.raises(AttributeError):
            value.anything = 1  # type: ignore[attr-defined]
    assert StatusEntry("??", "x") == StatusEntry(code="??", path="x", orig_path=None)
    assert StatusEntry("??", "x") != ("??", "x", None)  # a value, not a tuple
    assert hash(PidIdentity(42, 7)) == hash(PidIdentity(42, 7))
    assert PidIdentity(42, 7) != PidIdentity(42, None)
    assert repr(RemoteTip("abc")) == "RemoteTip(sha='abc', error=None)"
    assert proc.ProcResult(("x",), None).ok is False and proc.ProcResult(("x",), 0).ok
    assert proc.ProcRequest(("x",), tmp_path).grace_s == proc.DEFAULT_GRACE_S


def test_the_path_searched_is_os_get_exec_path() -> None:
    """``start_quick`` looks ``argv[0]`` up where ``os.get_exec_path`` would (its
    copy skips that function's ``warnings`` import on the watch path)."""
    import os

    from prompt_runner.proc.quick import _exec_path

    for env in (None, {}, {"PATH": ""}, {"PATH": "/a::/b"}, {"PATH": "/x", "HOME": "/"}):
        assert _exec_path(env) == os.get_exec_path(env), env
    assert _exec_path({b"PATH": b"/bytes"}) == os.get_exec_path({b"PATH": b"/bytes"})  # type: ignore[dict-item]


def test_stdin_bytes_reach_the_child_whole_while_its_output_is_read() -> None:
    """Two megabytes in and out at once: neither side's pipe may stall the other."""
    data = bytes(range(256)) * 8192  # 2 MiB, every byte value
    code = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])"
    res = started([sys.executable, "-c", code], stdin=data).result()
    assert res.ok, res.stderr
    expected = subprocess.run(
        [sys.executable, "-c", code], input=data, capture_output=True, check=True
    ).stdout
    assert res.stdout == expected.decode("utf-8", "replace")


def test_a_child_that_never_reads_its_stdin_still_ends_with_its_status() -> None:
    res = started(
        [sys.executable, "-c", "import sys; sys.exit(4)"], stdin=b"x" * 1_000_000
    ).result()
    assert res.returncode == 4 and res.timeout is None


def test_the_deadline_holds_while_stdin_is_still_being_written(tmp_path: Path) -> None:
    # the child sleeps without reading: the pipe fills, the deadline still ends it
    child = started(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        stdin=b"y" * 1_000_000,
        timeout_ms=500,
    )
    began = time.monotonic()
    res = child.result()
    assert res.timeout == "deadline" and time.monotonic() - began < 10
    assert gone_soon(child.pid)


@pytest.mark.parametrize("restore", [False, True])
def test_restore_signals_starts_the_child_with_sigpipe_and_sigxfsz_at_default(
    restore: bool,
) -> None:
    """Python ignores SIGPIPE (and SIGXFSZ); a child that runs the user's programs
    (git's hooks) gets them back at their default actions, as ``subprocess`` does."""
    argv = ["sh", "-c", "grep SigIgn /proc/$$/status"]
    res = started(argv, restore_signals=restore).result()
    assert res.ok, res.stderr
    ignored = int(res.stdout.split()[1], 16)
    sigpipe, sigxfsz = 1 << (13 - 1), 1 << (25 - 1)
    if restore:
        assert ignored & (sigpipe | sigxfsz) == 0
    else:
        assert ignored & sigpipe


def test_a_background_process_holding_the_pipes_does_not_outlast_its_finished_leader() -> None:
    """``sh -c 'sleep 30 & echo started'``: the leader is done at once; what it left
    holds stdout, is ended EXIT_DRAIN_S later, and the result is the leader's."""
    began = time.monotonic()
    res = started(["sh", "-c", "sleep 30 & echo started; exit 3"], timeout_ms=20_000).result()
    assert time.monotonic() - began < 10
    assert (res.returncode, res.stdout, res.timeout) == (3, "started\n", None)


def test_a_process_outside_the_group_holding_the_pipes_stops_the_reading_not_the_result(
    tmp_path: Path,
) -> None:
    # setsid puts the sleeper in a session of its own: the group's end cannot reach it
    pid_file = tmp_path / "pid"
    code = (
        "import os, subprocess, sys\n"
        f"p = subprocess.Popen(['sleep', '30'], start_new_session=True, stdout=sys.stdout)\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "print('out', flush=True)\n"
    )
    began = time.monotonic()
    res = started([sys.executable, "-c", code], timeout_ms=20_000).result()
    try:
        assert time.monotonic() - began < 10
        assert (res.returncode, res.stdout, res.timeout) == (0, "out\n", None)
    finally:
        os.kill(int(pid_file.read_text()), 9)
