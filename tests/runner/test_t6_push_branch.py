"""``push: after_prompt`` pushes the branch you are on where plain ``git push``
would: git's push remote, the same branch name -- never the upstream's branch
because the branch was started from it (new-user finding t6 #1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import prompt_runner
from prompt_runner.runner import push
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def bare(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    return path


def branches(remote: Path) -> dict[str, str]:
    out = git(remote, "for-each-ref", "--format=%(refname)%00%(objectname)")
    return dict(line.split("\0") for line in out.splitlines())


def commit(repo: Path, name: str) -> str:
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", name)
    return git(repo, "rev-parse", "HEAD")


def centralized(tmp_path: Path) -> tuple[Path, Path, str]:
    """``repo`` with origin ``remote.git``, on ``my-feature`` made by
    ``git checkout -b my-feature origin/main`` (so its upstream is origin/main)."""
    repo = tmp_path / "repo"
    remote = bare(tmp_path / "remote.git")
    if not repo.exists():
        subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
        commit(repo, "README.md")
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "-u", "origin", "main")
    git(repo, "checkout", "-q", "-b", "my-feature", "origin/main")
    return repo, remote, git(remote, "rev-parse", "main")


def test_a_branch_started_from_origin_main_is_pushed_to_its_own_name(tmp_path: Path) -> None:
    """The tester's run: the console said ``origin my-feature`` while origin's main
    got the commit; now my-feature is created and main is untouched, and the
    console, the prompt's record and state.json say so."""
    packet = make_packet(
        tmp_path,
        {"01": {"simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]}}},
    )
    repo, remote, main_before = centralized(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--push", "after_prompt"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    head = git(repo, "rev-parse", "HEAD")
    assert branches(remote) == {"refs/heads/main": main_before, "refs/heads/my-feature": head}
    assert f"pushed app to origin my-feature ({head[:12]})" in res.stdout
    app = prompt_runner.status(packet)["push"]["repos"]["app"]
    assert (app["remote"], app["branch"], app["remote_ref"]) == (
        "origin",
        "my-feature",
        "refs/heads/my-feature",
    )


def test_a_fork_workflow_pushes_to_the_push_default_remote(tmp_path: Path) -> None:
    """remote.pushDefault names the fork; the branch tracks upstream/main: the
    branch goes to the fork under its own name, the project is untouched."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    commit(repo, "README.md")
    project, fork = bare(tmp_path / "project.git"), bare(tmp_path / "fork.git")
    git(repo, "remote", "add", "upstream", str(project))
    git(repo, "remote", "add", "origin", str(fork))
    git(repo, "push", "-q", "upstream", "main")
    git(repo, "push", "-q", "origin", "main")
    git(repo, "fetch", "-q", "upstream")
    git(repo, "config", "remote.pushDefault", "origin")
    git(repo, "checkout", "-q", "-b", "my-fix", "upstream/main")
    project_before = branches(project)
    head = commit(repo, "fix.txt")
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert outcome.ok, outcome.error
    assert (outcome.remote, outcome.remote_ref) == ("origin", "refs/heads/my-fix")
    assert branches(project) == project_before
    assert branches(fork)["refs/heads/my-fix"] == head
    # branch.<b>.pushRemote comes before remote.pushDefault, as in git
    git(repo, "config", "branch.my-fix.pushRemote", "upstream")
    head = commit(repo, "more.txt")
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert outcome.ok and outcome.remote == "upstream", outcome
    assert branches(project) == {**project_before, "refs/heads/my-fix": head}


def test_push_default_upstream_pushes_onto_the_upstream_branch_and_says_so(
    tmp_path: Path,
) -> None:
    repo, remote, _ = centralized(tmp_path)
    git(repo, "config", "push.default", "upstream")
    head = commit(repo, "up.txt")
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert outcome.ok and outcome.remote_ref == "refs/heads/main", outcome
    assert branches(remote) == {"refs/heads/main": head}
    assert push.branch_onto("my-feature", outcome.remote_ref) == "my-feature:main"


def test_push_default_upstream_to_another_remote_is_refused_as_git_refuses_it(
    tmp_path: Path,
) -> None:
    repo, remote, main_before = centralized(tmp_path)
    other = bare(tmp_path / "other.git")
    git(repo, "remote", "add", "other", str(other))
    git(repo, "config", "push.default", "upstream")
    git(repo, "config", "branch.my-feature.pushRemote", "other")
    commit(repo, "x.txt")
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert not outcome.ok and outcome.attempts == 0
    assert "push.default is 'upstream'" in (outcome.error or "")
    assert "branch.my-feature.pushRemote" in (outcome.error or "")
    assert branches(remote) == {"refs/heads/main": main_before} and branches(other) == {}


def test_the_remotes_own_push_refspec_maps_the_branch_and_the_outcome_names_it(
    tmp_path: Path,
) -> None:
    """A Gerrit-style ``remote.origin.push = refs/heads/*:refs/for/*`` is what git
    honours; the outcome names the ref git reports it wrote."""
    repo, remote, main_before = centralized(tmp_path)
    git(repo, "config", "remote.origin.push", "refs/heads/*:refs/for/*")
    head = commit(repo, "review.txt")
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert outcome.ok and outcome.remote_ref == "refs/for/my-feature", outcome
    assert branches(remote) == {"refs/heads/main": main_before, "refs/for/my-feature": head}


def test_a_branch_tracking_a_local_branch_pushes_to_origin(tmp_path: Path) -> None:
    repo, remote, main_before = centralized(tmp_path)
    git(repo, "checkout", "-q", "main")
    git(repo, "checkout", "-q", "--track", "-b", "topic", "main")  # upstream: '.' main
    head = commit(repo, "t.txt")
    outcome = push.push_repo(repo, sleep=lambda _s: None)
    assert outcome.ok and (outcome.remote, outcome.remote_ref) == ("origin", "refs/heads/topic")
    assert branches(remote) == {"refs/heads/main": main_before, "refs/heads/topic": head}
