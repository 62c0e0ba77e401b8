"""Git's auto-maintenance, batched: the runner's commits do not start it, the
committer runs it every MAINTENANCE_EVERY commits and once as the run ends
(an interrupted run too), a user's ``maintenance.auto=false`` is respected, and
a failing or slow maintenance never fails a commit or a run.

Real git throughout. A repository with two packs and ``gc.autoPackLimit=1``
(``gc.autoDetach=false``, so git gc works in the foreground) is one where
``git gc --auto`` -- the default task of ``git maintenance run --auto`` --
repacks at once: after it, one pack and no loose objects."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from prompt_runner.committer import MAINTENANCE_EVERY, GitCommitter
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def objects(repo: Path) -> tuple[int, int]:
    """``(loose objects, packs)`` from ``git count-objects -v``."""
    fields = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return int(fields["count"]), int(fields["packs"])


def make_due(repo: Path) -> Path:
    """Give ``repo`` two packs and thresholds that make ``git gc --auto`` repack now."""
    for i in (1, 2):
        (repo / f"seed{i}.txt").write_text(f"seed {i}\n")
        git(repo, "add", "-A")
        git(repo, "-c", "maintenance.auto=false", "commit", "-q", "-m", f"seed {i}")
        git(repo, "repack", "-d", "-q")
    git(repo, "config", "gc.autoPackLimit", "1")
    git(repo, "config", "gc.autoDetach", "false")
    assert objects(repo) == (0, 2)
    return repo


def commit_one(committer: GitCommitter, repo: Path, name: str) -> None:
    (repo / name).write_text(f"{name}\n")
    result = committer.commit(prompt_id=name, message=f"add {name}", repos={"app": repo})
    assert result.ok, result.error
    assert result.commits


def test_the_setup_is_one_where_a_plain_commit_maintains(tmp_path: Path) -> None:
    """The control: git's own commit repacks such a repository by itself."""
    repo = make_due(make_git_repo(tmp_path / "repo"))
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a")
    assert objects(repo) == (0, 1)


def test_a_commit_defers_maintenance_to_maintain(tmp_path: Path) -> None:
    repo = make_due(make_git_repo(tmp_path / "repo"))
    committer = GitCommitter()
    commit_one(committer, repo, "a.txt")
    loose, packs = objects(repo)
    assert loose > 0 and packs == 2  # the commit left maintenance alone
    assert committer.maintain(due_only=True) == []  # 1 commit: not due yet
    assert objects(repo)[1] == 2
    assert committer.maintain() == []
    assert objects(repo) == (0, 1)
    assert git(repo, "log", "-1", "--format=%s").strip() == "add a.txt"
    assert committer.maintain() == []  # nothing committed since: nothing run
    assert objects(repo) == (0, 1)


def test_maintenance_is_due_every_n_commits(tmp_path: Path) -> None:
    repo = make_due(make_git_repo(tmp_path / "repo"))
    committer = GitCommitter()
    for i in range(MAINTENANCE_EVERY - 1):
        commit_one(committer, repo, f"f{i}.txt")
        assert committer.maintain(due_only=True) == []
    assert objects(repo)[1] == 2
    commit_one(committer, repo, "last.txt")
    assert committer.maintain(due_only=True) == []
    assert objects(repo) == (0, 1)
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 3 + MAINTENANCE_EVERY


def test_a_users_maintenance_auto_false_is_respected(tmp_path: Path) -> None:
    repo = make_due(make_git_repo(tmp_path / "repo"))
    git(repo, "config", "maintenance.auto", "false")
    committer = GitCommitter()
    commit_one(committer, repo, "a.txt")
    assert committer.maintain() == []
    loose, packs = objects(repo)
    assert loose > 0 and packs == 2


def test_a_failing_maintenance_is_a_line_not_an_error(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    git(repo, "config", "gc.auto", "notanumber")  # git gc dies reading it; commit never reads it
    committer = GitCommitter()
    commit_one(committer, repo, "a.txt")
    problems = committer.maintain()
    assert len(problems) == 1
    assert str(repo) in problems[0] and "gc.auto" in problems[0]
    assert committer.maintain() == []  # checked: not retried until the next commit


def test_a_slow_maintenance_is_ended_at_its_bound(tmp_path: Path) -> None:
    repo = make_due(make_git_repo(tmp_path / "repo"))
    hook = repo / ".git" / "hooks" / "pre-auto-gc"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nsleep 30\n")
    hook.chmod(0o755)
    committer = GitCommitter(maintenance_timeout_ms=500)
    commit_one(committer, repo, "a.txt")
    started = time.monotonic()
    problems = committer.maintain()
    assert time.monotonic() - started < 10
    assert len(problems) == 1 and "ended after 500 ms" in problems[0]


def written(prompt_ids: list[str], delay: str | None = None) -> dict[str, dict[str, object]]:
    prompts: dict[str, dict[str, object]] = {}
    for pid in prompt_ids:
        attempt: dict[str, object] = {"writes": [{"path": f"f{pid}.txt", "text": f"file {pid}"}]}
        if pid == delay:
            attempt = {"delay_ms": 30000}
        prompts[pid] = {"commit": f"step {pid}", "simulate": {"attempts": [attempt]}}
    return prompts


def test_a_run_commits_each_prompt_and_maintains_as_it_ends(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, written(["01", "02", "03"]))
    repo = make_due(tmp_path / "repo")
    res = cli("run", packet)
    assert res.returncode == 0, res.stderr
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert subjects == ["step 03", "step 02", "step 01", "seed 2", "seed 1", "initial"]
    assert objects(repo) == (0, 1)


def test_a_run_leaves_a_users_maintenance_auto_false_alone(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, written(["01", "02"]))
    repo = make_due(tmp_path / "repo")
    git(repo, "config", "maintenance.auto", "false")
    res = cli("run", packet)
    assert res.returncode == 0, res.stderr
    assert git(repo, "log", "--format=%s").splitlines()[:2] == ["step 02", "step 01"]
    loose, packs = objects(repo)
    assert loose > 0 and packs == 2


def test_a_failing_maintenance_does_not_fail_the_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, written(["01"]))
    repo = tmp_path / "repo"
    git(repo, "config", "gc.auto", "notanumber")
    res = cli("run", packet)
    assert res.returncode == 0, res.stderr
    assert git(repo, "log", "-1", "--format=%s").strip() == "step 01"
    assert "warning: git maintenance in" in res.stdout + res.stderr


def test_an_interrupted_run_maintains_as_it_ends(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, written(["01", "02"], delay="02"))
    repo = make_due(tmp_path / "repo")
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        progress = packet / ".prompt_runner" / "progress.log"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (
            progress.exists() and "01" in progress.read_text()
        ):
            time.sleep(0.05)
        assert "01" in progress.read_text()
        time.sleep(0.3)  # prompt 02's session is running
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert git(repo, "log", "-1", "--format=%s").strip() == "step 01"
    assert objects(repo) == (0, 1)


def test_maintenance_runs_in_the_foreground_whatever_gc_auto_detach_says(
    tmp_path: Path,
) -> None:
    # a new user's finding: git detaches an auto gc by default, so the runner's
    # call returned at once and gc outlived its bound, a Ctrl-C and the run
    repo = make_git_repo(tmp_path / "repo")
    many = repo / "many"
    many.mkdir()
    for i in range(3000):  # enough loose objects that a repack takes a while
        (many / f"{i}.txt").write_text(f"{i}\n")
    git(repo, "add", "-A")
    git(repo, "-c", "maintenance.auto=false", "commit", "-q", "-m", "many")
    git(repo, "config", "gc.auto", "256")  # git's default (6700) scaled down
    assert objects(repo)[0] > 3000
    committer = GitCommitter()
    commit_one(committer, repo, "a.txt")
    assert committer.maintain() == []
    # a detached gc would still be packing when maintain returned
    assert objects(repo)[0] == 0
    assert not (repo / ".git" / "gc.pid").exists()


def test_a_commit_message_is_kept_whatever_commit_cleanup_says(tmp_path: Path) -> None:
    # a new user's finding: with commit.cleanup=strip a "#42 ..." message was
    # stripped to nothing and the commit failed; a "# Ticket" line was dropped
    repo = make_git_repo(tmp_path / "repo")
    git(repo, "config", "commit.cleanup", "strip")
    committer = GitCommitter()
    for name, message in (("a.txt", "#42 fix the thing"), ("b.txt", "fix: two\n\n# Ticket: ABC-1")):
        (repo / name).write_text("x\n")
        result = committer.commit(prompt_id=name, message=message, repos={"app": repo})
        assert result.ok, result.error
        assert git(repo, "log", "-1", "--format=%B").strip() == message


def with_history(repo: Path, count: int) -> Path:
    """``count`` commits made by plain git with no maintenance: all loose, no graph."""
    for i in range(count):
        git(repo, "-c", "maintenance.auto=false", "commit", "-q", "--allow-empty", "-m", f"c{i}")
    return repo


def graph_written(repo: Path) -> bool:
    info = repo / ".git" / "objects" / "info"
    return (info / "commit-graph").exists() or (info / "commit-graphs").is_dir()


def test_maintenance_writes_the_commit_graph_when_git_says_it_is_due(tmp_path: Path) -> None:
    # watch's `git rev-list --count HEAD` read 301 loose commits in 6.9 ms, 2.3 with a graph
    repo = with_history(make_git_repo(tmp_path / "repo"), 110)
    committer = GitCommitter()
    commit_one(committer, repo, "a.txt")
    assert not graph_written(repo)  # the commit leaves it to maintain
    assert committer.maintain() == []
    assert graph_written(repo)
    git(repo, "commit-graph", "verify")  # raises on a bad graph
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 112  # initial + 110 + a.txt
    assert "maintenance" not in git(repo, "config", "--list", "--local")  # nothing written


def test_a_short_history_gets_no_commit_graph(tmp_path: Path) -> None:
    # git's own --auto rule (maintenance.commit-graph.auto: 100 commits not in the graph)
    repo = with_history(make_git_repo(tmp_path / "repo"), 20)
    committer = GitCommitter()
    commit_one(committer, repo, "a.txt")
    assert committer.maintain() == []
    assert not graph_written(repo)


def test_a_users_commit_graph_setting_is_respected(tmp_path: Path) -> None:
    for setting in ("false", "no", "0"):  # git's spellings of false
        repo = with_history(make_git_repo(tmp_path / f"repo-{setting}"), 110)
        git(repo, "config", "maintenance.commit-graph.enabled", setting)
        committer = GitCommitter()
        commit_one(committer, repo, "a.txt")
        assert committer.maintain() == []
        assert not graph_written(repo), setting


def test_maintenance_auto_false_also_means_no_commit_graph(tmp_path: Path) -> None:
    repo = with_history(make_git_repo(tmp_path / "repo"), 110)
    git(repo, "config", "maintenance.auto", "false")
    committer = GitCommitter()
    commit_one(committer, repo, "a.txt")
    assert committer.maintain() == []
    assert not graph_written(repo)
