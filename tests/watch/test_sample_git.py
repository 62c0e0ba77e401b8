"""A watch sample's facts on real repos and real runs, as git and the pid file say them.

The sample starts each repo's ``git status`` and ``git rev-list`` with
``os.posix_spawn`` (``git -C DIR``, proc/quick.py) before its walk and reads them
after it; these hold what it reports to what git itself prints in that repo, for
each state a long run passes through: a dirty file, a new commit, a clone ahead
of and behind its bare remote, no commit yet, not a repo, a git that cannot be
found; and a run in progress or ended. ``watch --once --json`` starts with no
``dataclasses``, ``typing``, ``subprocess`` or ``threading``, and without
argparse where the line is one the parser reads exactly so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.state.lock import current_identity
from prompt_runner.watch import facts
from tests.conftest import git
from tests.helpers.gitrepo import make_git_repo


def make_packet(tmp_path: Path, repos: dict[str, Path]) -> Path:
    packet = tmp_path / "packet"
    (packet / "prompts").mkdir(parents=True)
    lines = "".join(f'  {name}:\n    path: "{path}"\n' for name, path in repos.items())
    (packet / "prompt_runner_packet.md").write_text(
        f'---\nname: "git-facts"\nrepos:\n{lines}---\n# Facts\n'
    )
    return packet


def git_says(repo: Path) -> tuple[int, int]:
    """``(dirty, commits)`` as git itself prints them in ``repo``."""
    status = git(repo, "status", "--porcelain")
    dirty = sum(1 for line in status.splitlines() if line.strip())
    return dirty, int(git(repo, "rev-list", "--count", "HEAD").strip())


def details(sample: dict[str, object]) -> dict[str, tuple[object, object, object]]:
    rows = sample["repo_details"]
    assert isinstance(rows, list)
    return {r["name"]: (r["dirty"], r["commits"], r["error"]) for r in rows}


def test_dirty_files_and_new_commits_read_as_git_prints_them(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", {"a.txt": "a\n", "b.txt": "b\n"})
    packet = make_packet(tmp_path, {"app": repo})
    assert details(facts.sample(packet)) == {"app": (0, 1, None)}

    (repo / "a.txt").write_text("changed\n")  # modified
    (repo / "new.txt").write_text("new\n")  # untracked
    (repo / "b.txt").unlink()  # deleted
    assert git_says(repo) == (3, 1)
    assert details(facts.sample(packet)) == {"app": (3, 1, None)}

    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "second")
    assert git_says(repo) == (0, 2)
    sample = facts.sample(packet)
    assert details(sample) == {"app": (0, 2, None)}
    assert (sample["dirty"], sample["commits"]) == (0, 2)


def test_a_clone_ahead_of_and_behind_its_bare_remote(tmp_path: Path) -> None:
    origin = make_git_repo(tmp_path / "origin", {"a.txt": "a\n"})
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(origin), str(bare)], check=True)
    ahead = tmp_path / "ahead"
    behind = tmp_path / "behind"
    for clone in (ahead, behind):
        subprocess.run(["git", "clone", "-q", str(bare), str(clone)], check=True)
    (ahead / "b.txt").write_text("b\n")
    git(ahead, "add", "-A")
    git(ahead, "commit", "-q", "-m", "ahead")
    git(ahead, "push", "-q", "origin", "HEAD")
    (ahead / "c.txt").write_text("c\n")
    git(ahead, "add", "-A")
    git(ahead, "commit", "-q", "-m", "not pushed")
    git(behind, "fetch", "-q")  # knows of the remote's commit, has not merged it
    assert "behind 1" in git(behind, "status", "-sb")
    assert "ahead 1" in git(ahead, "status", "-sb")

    packet = make_packet(tmp_path, {"ahead": ahead, "behind": behind})
    sample = facts.sample(packet)
    assert details(sample) == {"ahead": (0, 3, None), "behind": (0, 1, None)}
    assert git_says(ahead) == (0, 3) and git_says(behind) == (0, 1)
    assert (sample["repos"], sample["dirty"], sample["commits"]) == (2, 0, 4)


def test_no_commit_yet_not_a_repo_and_a_missing_path(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    subprocess.run(["git", "init", "-q", str(empty)], check=True)
    (empty / "x.txt").write_text("x\n")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "f.txt").write_text("f\n")
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory\n")
    packet = make_packet(
        tmp_path,
        {"empty": empty, "plain": plain, "gone": tmp_path / "gone", "file": a_file},
    )
    sample = facts.sample(packet)
    assert details(sample) == {
        "empty": (1, 0, None),
        "plain": (None, None, "not_git_repo"),
        "gone": (None, None, "path_not_found"),
        "file": (None, None, "not_a_directory"),
    }
    assert (sample["dirty"], sample["commits"]) == (None, None)


def test_a_git_that_cannot_be_found_reads_unknown_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    packet = make_packet(tmp_path, {"app": repo})
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    sample = facts.sample(packet)
    assert details(sample) == {"app": (None, None, "git_status_failed")}


def test_a_run_in_progress_and_a_run_that_ended(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    packet = make_packet(tmp_path, {"app": repo})
    state = packet / ".prompt_runner"
    (state / "logs").mkdir(parents=True)
    log = state / "logs" / "prompt-07-20260101T000000.000000Z-1.log"
    log.write_text("working\n")

    (state / "run.pid").write_text(current_identity().render())  # this process: alive
    running = facts.sample(packet)
    assert (running["runner"], running["pid"], running["prompt"]) == ("up", os.getpid(), "07")
    assert running["newest_mtime"] == max(log.stat().st_mtime, (repo / "README.md").stat().st_mtime)

    (state / "run.pid").unlink()  # the run ended and released its lock
    ended = facts.sample(packet)
    assert (ended["runner"], ended["pid"], ended["prompt"]) == ("down", None, "07")
    assert details(ended) == details(running) == {"app": (0, 1, None)}


def test_watch_once_json_starts_without_the_heavy_standard_modules(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo")
    packet = make_packet(tmp_path, {"app": repo})
    (packet / ".prompt_runner").mkdir()  # a run's state root, where the manifest reading is kept
    probe = (
        "import contextlib, io, json, sys\n"
        "from prompt_runner.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    code = main(['watch', sys.argv[1], '--once', '--json'])\n"
        "loaded = [m for m in ('dataclasses', 'inspect', 'typing', 'subprocess', 'threading',"
        " 'argparse', 'gettext', 'locale')"
        " if m in sys.modules]\n"
        "print(json.dumps({'code': code, 'loaded': loaded, 'out': out.getvalue()}))\n"
    )
    for _ in range(2):  # the first reads the manifest with YAML and keeps it; the second not
        ran = subprocess.run(
            [sys.executable, "-c", probe, str(packet)], capture_output=True, text=True, check=True
        )
        doc = json.loads(ran.stdout)
        sample = json.loads(doc["out"])
        assert (sample["dirty"], sample["commits"]) == (0, 1)
    assert (doc["code"], doc["loaded"]) == (0, [])


# --------------------------------------------------------------------------- argparse-free


def _printed(capsys: pytest.CaptureFixture[str], call: Any) -> tuple[int | None, list[str]]:
    code = call()
    lines = capsys.readouterr().out.splitlines()
    return code, [re.sub(r'"at": "[^"]*"|WATCH \d\d:\d\dZ', "AT", line) for line in lines]


@pytest.mark.parametrize(
    "rest",
    [
        ["PACKET", "--once", "--json"],
        ["--once", "PACKET"],
        ["--json", "--once", "PACKET/prompt_runner_packet.md"],
        ["--once", "--json"],  # the current directory's packet
        ["--once"],
    ],
)
def test_watch_once_without_argparse_prints_what_the_parsed_command_prints(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rest: list[str],
) -> None:
    from prompt_runner.cli import main, watching
    from prompt_runner.cli.exits import Invocation

    repo = make_git_repo(tmp_path / "repo")
    (repo / "dirty.txt").write_text("x\n")
    packet = make_packet(tmp_path, {"app": repo})
    monkeypatch.chdir(packet)
    argv = ["watch", *(word.replace("PACKET", str(packet)) for word in rest)]
    fast = _printed(capsys, lambda: watching.serve_once(argv))
    parsed = _printed(
        capsys, lambda: main._command(argv, Invocation(json="--json" in argv, debug=False))
    )
    assert fast == parsed
    assert fast[0] == 0 and len(fast[1]) == 1 and ("dirty" in fast[1][0])


@pytest.mark.parametrize(
    "rest",
    [
        ["PACKET"],  # not --once: the loop
        ["PACKET", "--once", "--once"],
        ["PACKET", "--onc"],  # an abbreviation argparse would take
        ["PACKET", "--once", "--interval", "5"],
        ["PACKET", "--once", "--for", "1h"],
        ["--once", "--workspace", "W"],
        ["PACKET", "PACKET", "--once"],
        ["--once", "-"],
        ["--once", str(Path("no") / "such")],
        ["--once", "--json", "--", "PACKET"],
    ],
)
def test_watch_lines_the_parser_must_read_take_the_full_command(
    tmp_path: Path, rest: list[str]
) -> None:
    from prompt_runner.cli import watching

    packet = make_packet(tmp_path, {"app": make_git_repo(tmp_path / "repo")})
    argv = ["watch", *(word.replace("PACKET", str(packet)) for word in rest)]
    assert watching.serve_once(argv) is None


def test_a_relative_state_dir_takes_the_full_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prompt_runner.cli import watching

    packet = make_packet(tmp_path, {"app": make_git_repo(tmp_path / "repo")})
    monkeypatch.setenv("PROMPT_RUNNER_STATE_DIR", "relative/state")
    assert watching.serve_once(["watch", str(packet), "--once"]) is None
