"""``watch``: liveness from the pid-file identity, quiet from mtimes, git counts (SPEC 8, J1-J3)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import UserError
from prompt_runner.state.lock import process_start_time
from prompt_runner.watch import facts as watch
from tests.conftest import git
from tests.helpers.gitrepo import make_git_repo

LINE = re.compile(
    r"^WATCH \d\d:\d\dZ runner=(UP|DOWN) prompt=(\S+) quiet=(\d+|\?)min repos=(\d+) "
    r"dirty=(\d+|\?) commits=(\d+|\?)$"
)
HOURS_3 = 3 * 3600


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args], capture_output=True, text=True, timeout=60
    )


def make_packet(tmp_path: Path, *, repo: Path | None = None, extra: str = "") -> Path:
    """Packet ``watch-packet`` with one repo (a real git repo with one commit)."""
    repo = repo or make_git_repo(tmp_path / "repo")
    packet = tmp_path / "packet"
    (packet / "prompts").mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text(
        f'---\nname: "watch-packet"\n{extra}repos:\n  app:\n    path: "{repo}"\n'
        "    default: true\n---\n# Watch\n"
    )
    return packet


def write_pid(packet: Path, text: str) -> None:
    state = packet / ".prompt_runner"
    state.mkdir(exist_ok=True)
    (state / "run.pid").write_text(text)


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """A live process unrelated to any run, whose command line mentions `prompt-runner run`."""
    proc = subprocess.Popen(["sh", "-c", "sleep 60; : prompt-runner run packet"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


def age(path: Path, seconds: float) -> None:
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp), follow_symlinks=False)


def age_tree(root: Path, seconds: float) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*filenames, *dirnames]:
            age(Path(dirpath) / name, seconds)
    age(root, seconds)


# --------------------------------------------------------------------------- J1 shape


def test_once_prints_one_line_and_json_prints_one_sample(tmp_path: Path) -> None:
    packet = make_packet(tmp_path)
    res = cli("watch", str(packet), "--once")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 1
    assert re.fullmatch(
        r"WATCH \d\d:\d\dZ runner=DOWN prompt=none quiet=\d+min repos=1 dirty=0 commits=1",
        lines[0],
    )
    res = cli("watch", str(packet), "--once", "--json")
    assert res.returncode == 0
    [line] = res.stdout.splitlines()
    doc = json.loads(line)
    assert doc["runner"] == "down" and doc["pid"] is None and doc["prompt"] is None
    assert doc["repos"] == 1 and doc["dirty"] == 0 and doc["commits"] == 1
    assert doc["packet"] == "watch-packet" and isinstance(doc["quiet_minutes"], int)


def test_a_directory_that_is_not_a_packet_is_bad_input(tmp_path: Path) -> None:
    res = cli("watch", str(tmp_path), "--once")
    assert res.returncode == 2 and "not a packet" in res.stderr
    with pytest.raises(UserError):
        watch.sample(tmp_path)


def test_format_line_degrades_honestly() -> None:
    sample: dict[str, Any] = {
        "at": "2026-01-02T16:57:03Z",
        "runner": "up",
        "prompt": "11",
        "quiet_minutes": 0,
        "repos": 3,
        "dirty": 0,
        "commits": 27,
    }
    assert (
        watch.format_line(sample)
        == "WATCH 16:57Z runner=UP prompt=11 quiet=0min repos=3 dirty=0 commits=27"
    )
    unknown = {**sample, "prompt": None, "quiet_minutes": None, "dirty": None, "commits": None}
    assert watch.format_line(unknown).endswith("prompt=none quiet=?min repos=3 dirty=? commits=?")


def test_nothing_measurable_reads_question_marks(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, repo=tmp_path / "missing")
    s = watch.sample(packet)
    assert s["quiet_minutes"] is None and s["dirty"] is None and s["commits"] is None
    assert s["repo_details"][0]["error"] == "path_not_found"
    assert "quiet=?min repos=1 dirty=? commits=?" in watch.format_line(s)


# --------------------------------------------------------------------------- J2 liveness


def test_no_pid_file_is_down_even_with_a_process_named_like_a_run(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    packet = make_packet(tmp_path)
    s = watch.sample(packet)
    assert s["runner"] == "down" and s["pid"] is None


def test_a_live_run_reads_up(tmp_path: Path) -> None:
    """A real `prompt-runner run` whose simulated session takes a while."""
    packet = make_packet(
        tmp_path,
        extra='profile: "simulated-default"\nprovider: "simulated"\n',
    )
    (packet / "prompts" / "01_slow.prompt.md").write_text(
        '---\nid: "01"\nsimulate:\n  attempts:\n    - delay_ms: 60000\n'
        "verify:\n  files_exist: [never.txt]\n---\n# Slow\n"
    )
    output = tmp_path / "run.out"
    with output.open("wb") as sink:
        run = subprocess.Popen(
            [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        pid_file = packet / ".prompt_runner" / "run.pid"
        deadline = time.monotonic() + 60
        while not pid_file.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert pid_file.exists(), f"the run never wrote run.pid: {output.read_text()[-2000:]}"
        res = cli("watch", str(packet), "--once", "--json")
        doc = json.loads(res.stdout)
        assert doc["runner"] == "up" and doc["pid"] == run.pid
        assert LINE.match(watch.format_line(watch.sample(packet)))
    finally:
        run.kill()
        run.wait()
    # killed with SIGKILL: run.pid stays behind, and still reads DOWN
    assert pid_file.exists()
    doc = watch.sample(packet)
    assert doc["runner"] == "down" and doc["pid"] is None and doc["last_pid"] == run.pid


def test_a_dead_run_whose_pid_file_remained_is_down(tmp_path: Path) -> None:
    packet = make_packet(tmp_path)
    proc = subprocess.Popen(["sleep", "30"])
    start = process_start_time(proc.pid)
    proc.kill()
    proc.wait()
    write_pid(packet, f"{proc.pid} {start}\n")
    res = cli("watch", str(packet), "--once", "--json")
    doc = json.loads(res.stdout)
    assert doc["runner"] == "down" and doc["pid"] is None and doc["last_pid"] == proc.pid


def test_a_live_unrelated_process_with_another_start_time_is_down(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    packet = make_packet(tmp_path)
    start = process_start_time(sleeper.pid)
    assert start is not None
    write_pid(packet, f"{sleeper.pid} {start + 1}\n")
    doc = json.loads(cli("watch", str(packet), "--once", "--json").stdout)
    assert doc["runner"] == "down" and doc["pid"] is None and doc["last_pid"] == sleeper.pid
    # the same pid with its real start time is that process: UP
    write_pid(packet, f"{sleeper.pid} {start}\n")
    assert watch.sample(packet)["runner"] == "up"


@pytest.mark.parametrize(
    ("text", "runner", "pid"),
    [
        ("{live}\n", "up", "live"),  # legacy file without a start time
        ("{live} 0\n", "down", "live"),
        ("2147483646\n", "down", 2147483646),
        ("not-a-pid\n", "down", None),
        ("", "down", None),
    ],
)
def test_pid_file_contents(
    tmp_path: Path,
    sleeper: subprocess.Popen[bytes],
    text: str,
    runner: str,
    pid: Any,
) -> None:
    packet = make_packet(tmp_path)
    write_pid(packet, text.format(live=sleeper.pid))
    s = watch.sample(packet)
    assert s["runner"] == runner
    recorded = sleeper.pid if pid == "live" else pid
    assert s["pid"] == (recorded if runner == "up" else None)  # a dead runner's is no runner's
    assert s["last_pid"] == (recorded if runner == "down" else None)


# --------------------------------------------------------------------------- J3 facts


def test_dirty_and_commits(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    packet = make_packet(tmp_path, repo=repo)
    (repo / "scratch.txt").write_text("x")
    (repo / "README.md").write_text("# Changed\n")
    s = watch.sample(packet)
    assert s["dirty"] == 2 and s["commits"] == 1
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    s = watch.sample(packet)
    assert s["dirty"] == 0 and s["commits"] == 2


def test_counts_sum_over_repos(tmp_path: Path) -> None:
    a = make_git_repo(tmp_path / "a")
    b = make_git_repo(tmp_path / "b", {"x.txt": "x"})
    git(b, "commit", "-q", "--allow-empty", "-m", "two")
    (b / "new.txt").write_text("n")
    packet = tmp_path / "packet"
    packet.mkdir()
    (packet / "prompt_runner_packet.md").write_text(
        f'---\nname: "two"\nrepos:\n  a: "{a}"\n  b:\n    path: "{b}"\n---\n'
    )
    s = watch.sample(packet)
    assert (s["repos"], s["dirty"], s["commits"]) == (2, 1, 3)


def test_quiet_comes_from_mtimes_not_event_timestamps(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    packet = make_packet(tmp_path, repo=repo)
    logs = packet / ".prompt_runner" / "logs"
    logs.mkdir(parents=True)
    (logs / "a.events.jsonl").write_text('{"e":{"t":"tu"},"t":1786332318176}\n')
    (logs / "b.events.jsonl").write_text('{"data":{},"ts":"2026-08-10T05:08:53Z"}\n')
    age_tree(packet, HOURS_3)
    age_tree(repo, HOURS_3)
    fresh = repo / "fresh.txt"
    fresh.write_text("new")
    assert watch.sample(packet)["quiet_minutes"] == 0

    fresh.unlink()
    age_tree(repo, HOURS_3)
    quiet = watch.sample(packet)["quiet_minutes"]
    assert quiet is not None and quiet >= 179

    for derived in ("_build", "deps", "node_modules", ".git", "x/node_modules/deep"):
        (repo / derived).mkdir(parents=True, exist_ok=True)
        (repo / derived / "out.bin").write_text("derived")
    quiet = watch.sample(packet)["quiet_minutes"]
    assert quiet is not None and quiet >= 179

    (repo / "lib.ex").write_text("defmodule X do end\n")
    assert watch.sample(packet)["quiet_minutes"] == 0


def test_a_fresh_log_counts_as_activity(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    packet = make_packet(tmp_path, repo=repo)
    age_tree(repo, HOURS_3)
    logs = packet / ".prompt_runner" / "logs"
    logs.mkdir(parents=True)
    (logs / "prompt-01-20260101-000000.log").write_text("x")
    assert watch.sample(packet)["quiet_minutes"] == 0


def test_prompt_comes_from_the_newest_prompt_log(tmp_path: Path) -> None:
    packet = make_packet(tmp_path)
    logs = packet / ".prompt_runner" / "logs"
    logs.mkdir(parents=True)
    old = logs / "prompt-04-20260101-101010.log"
    old.write_text("x")
    age(old, 600)
    (logs / "prompt-11-20260101-102010.log").write_text("x")
    (logs / "prompt-11-20260101-102010.events.jsonl").write_text("{}\n")
    assert watch.sample(packet)["prompt"] == "11"
    (logs / "prompt-setup-db-20261129T233105.742178Z-2.log").write_text("x")
    assert watch.sample(packet)["prompt"] == "setup-db"


def test_the_prompt_is_the_newest_name_that_matches_whatever_the_order(tmp_path: Path) -> None:
    """Names are matched only while they could be the newest: the answer is still
    the newest matching name's id, by mtime then name, in any listing order."""
    names = [
        "prompt-07-20260101-000000.log",
        "prompt-.log",  # the newest of all, but no prompt log
        "prompt-09-20260101-000000.log",
        "prompt-08-20260101-000000-2.log",
        "prompt-x.txt",
        "progress.log",
    ]
    mtimes = {names[0]: 5.0, names[1]: 9.0, names[2]: 7.0, names[3]: 7.0, names[4]: 8.0}
    mtimes[names[5]] = 9.5
    for order in (names, names[::-1], sorted(names), sorted(names, reverse=True)):
        entries = {name: mtimes[name] for name in order}
        assert watch.newest_prompt_log(tmp_path, entries=entries) == "09"
    assert watch.newest_prompt_log(tmp_path, entries={"prompt-.log": 1.0}) is None
    assert watch.newest_prompt_log(tmp_path, entries={}) is None


def test_the_logs_are_listed_once_for_the_newest_mtime_and_the_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One listing of logs/ gives both (newest_mtime's ``entries``), and the prompt is
    the one a listing of its own finds -- a directory named like a log included."""
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    (logs / "sub" / "prompt-99-20260101-000000.log").write_text("x")  # not directly in logs
    for name, ago in (
        ("prompt-04-20260101-101010.log", 600),
        ("prompt-07-20260101-101011.log", 60),
    ):
        (logs / name).write_text("x")
        age(logs / name, ago)
    (logs / "prompt-09-20260101-101012.log").mkdir()  # a directory's own mtime: the newest
    other = tmp_path / "repo"
    other.mkdir()
    (other / "prompt-12-20260101-101013.log").write_text("x")  # another root: not a log
    entries: dict[str, float] = {}
    listed: list[str] = []
    real_scandir = os.scandir

    def recording_scandir(path: Any) -> Any:
        listed.append(str(path))
        return real_scandir(path)

    monkeypatch.setattr(watch.os, "scandir", recording_scandir)
    newest = watch.newest_mtime([logs, other], entries=entries)
    assert set(entries) == {
        "sub",
        "prompt-04-20260101-101010.log",
        "prompt-07-20260101-101011.log",
        "prompt-09-20260101-101012.log",
    }
    assert newest == watch.newest_mtime([logs, other])
    listed.clear()
    assert watch.newest_prompt_log(logs, entries=entries) == "09"
    assert listed == []
    assert watch.newest_prompt_log(logs) == "09"


def test_the_walk_never_opens_a_pruned_tree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "tree"
    for rel in ("src/a.txt", "node_modules/pkg/index.js", ".git/objects/x", "src/_build/o"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    opened: list[str] = []
    real_open = os.open

    def recording_open(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(watch.os, "open", recording_open)
    newest = watch.newest_mtime([root])
    assert newest is not None
    assert sorted(Path(p).relative_to(root).as_posix() for p in opened) == [".", "src"]


def test_directories_do_not_count_only_files(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "old.txt").parent.mkdir(parents=True)
    (root / "old.txt").write_text("x")
    age(root / "old.txt", HOURS_3)
    (root / "new-empty-dir").mkdir()
    newest = watch.newest_mtime([root])
    assert newest is not None and time.time() - newest >= HOURS_3 - 5
    assert watch.newest_mtime([tmp_path / "missing"]) is None
    assert watch.newest_mtime([root / "new-empty-dir"]) is None


def test_newest_mtime_counts_symlinks_without_following_them(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "new.txt").write_text("x")
    (root / "link").symlink_to(outside, target_is_directory=True)
    age(root / "link", HOURS_3)
    age(root, HOURS_3)
    newest = watch.newest_mtime([root])
    assert newest is not None and time.time() - newest >= HOURS_3 - 5
    assert watch.newest_mtime([tmp_path / "missing"]) is None


def test_the_loop_emits_a_sample_per_interval(tmp_path: Path) -> None:
    packet = make_packet(tmp_path)
    samples: list[dict[str, Any]] = []
    sleeps: list[float] = []

    def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        watch.watch(packet, interval_s=5, emit=samples.append, sleep=fake_sleep)
    assert len(samples) == 2 and all(0 <= s <= 5 for s in sleeps)
    with pytest.raises(UserError, match="interval"):
        watch.watch(packet, interval_s=0, emit=samples.append)


def test_a_repo_without_commits_counts_zero(tmp_path: Path) -> None:
    repo = tmp_path / "empty"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.txt").write_text("a")
    packet = make_packet(tmp_path, repo=repo)
    s = watch.sample(packet)
    assert (s["commits"], s["dirty"]) == (0, 1)


def test_a_directory_that_is_not_git_reads_unknown_counts(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.txt").write_text("a")
    s = watch.sample(make_packet(tmp_path, repo=plain))
    assert s["dirty"] is None and s["commits"] is None and s["quiet_minutes"] == 0
    assert s["repo_details"][0]["error"] == "not_git_repo"
