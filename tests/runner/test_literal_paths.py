"""Every path the runner hands git is literal: a file named like a pathspec pattern
(``pages/[id].tsx``, ``*.txt``, ``:(glob)**``) commits itself, never the user's files."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import prompt_runner
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

USER_TRACKED_EDIT = "README.md"
OUTPUT = "out.txt"  # what the contract names; the other session paths are found by git status


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def committed(repo: Path, rev: str = "HEAD") -> set[str]:
    out = git(repo, "show", "--no-renames", "-z", "--name-only", "--format=", rev)
    return {p for p in out.split("\0") if p.strip("\n")} - {""}


def session_packet(root: Path, paths: list[str]) -> Path:
    return make_packet(
        root,
        {
            "01": {
                "commit": "feat: pages",
                "simulate": {
                    "attempts": [{"writes": [{"path": p, "text": "x\n"} for p in [OUTPUT, *paths]]}]
                },
                "verify": {"files_exist": [OUTPUT]},
            }
        },
    )


def user_changes(repo: Path, names: list[str]) -> None:
    """The user's own uncommitted work: a tracked edit and untracked files."""
    (repo / USER_TRACKED_EDIT).write_text("# Repo\nmy edit in progress\n")
    for name in names:
        target = repo / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("mine\n")


def test_pattern_like_names_commit_only_themselves(tmp_path: Path) -> None:
    session = ["pages/[id].tsx", "*.txt", ":(glob)**", "-rf", "docs/?"]
    packet = session_packet(tmp_path, session)
    repo = tmp_path / "repo"
    mine = ["pages/i.tsx", "pages/d.tsx", "notes.txt", ".env", "docs/a", "src/main.py"]
    user_changes(repo, mine)
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert committed(repo) == {OUTPUT, *session}
    status = git(repo, "status", "--porcelain=v1", "-z", "-uall").split("\0")
    assert sorted(s[3:] for s in status if s) == sorted([USER_TRACKED_EDIT, *mine])
    assert "which already had uncommitted changes" not in proc.stdout.split("Starting run")[1]


# Characters git's pathspecs treat specially, plus a few plain ones.
SPECIAL = "*?[]:!()^\\"
NAME = st.text(alphabet=SPECIAL + "ab.", min_size=1, max_size=6).filter(
    lambda s: s not in (".", "..") and not s.startswith(".git")
)
LEADING_DASH = st.builds(lambda dash, name: ("-" if dash else "") + name, st.booleans(), NAME)
RELPATH = st.builds(lambda parts: "/".join(parts), st.lists(LEADING_DASH, min_size=1, max_size=2))


def disjoint(paths: list[str], taken: set[str]) -> bool:
    """No path is another's directory (a file and a directory cannot share a name)."""
    everything = set(paths) | taken
    return all(not any(q.startswith(p + "/") for q in everything) for p in everything)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    session=st.lists(RELPATH, min_size=1, max_size=4, unique=True),
    mine=st.lists(RELPATH, min_size=1, max_size=4, unique=True),
)
def test_a_session_s_commit_holds_exactly_its_own_paths_whatever_their_names(
    session: list[str], mine: list[str]
) -> None:
    mine = [p for p in mine if p not in session]
    session = [p for p in session if p != OUTPUT]
    if not disjoint(session + mine, set()):
        return  # a name that is both a file and a directory cannot exist
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        packet = session_packet(root, session)
        repo = root / "repo"
        user_changes(repo, mine)
        result = prompt_runner.run(packet, committer="git")
        assert result.exit_code == 0, result.message
        assert committed(repo) == {OUTPUT, *session}
        for name in mine:
            assert (repo / name).read_text() == "mine\n"
        left = git(repo, "status", "--porcelain=v1", "-z", "-uall").split("\0")
        assert sorted(s[3:] for s in left if s) == sorted([USER_TRACKED_EDIT, *mine])
