"""The git committer's children (``git add``, ``git commit``, started through
``posix_spawn``): a commit hook runs as from a shell -- SIGPIPE and SIGXFSZ at
their default actions, stdin not the runner's -- in the work tree, and a
commit message of any size and bytes arrives whole. Real runs, real git, real
hooks."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def test_a_commit_hook_sees_default_signals_and_the_work_tree(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: 01 — ünïcode",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            }
        },
    )
    repo = tmp_path / "repo"
    report = tmp_path / "hook-report.txt"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        "#!/bin/sh\n"
        f"grep SigIgn /proc/$$/status > '{report}'\n"
        f"pwd >> '{report}'\n"
        # a pipeline whose reader stops early ends at once with SIGPIPE at its default
        f"yes | head -n 1 >> '{report}'\n"
    )
    hook.chmod(0o755)
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    sig_line, cwd, first = report.read_text().splitlines()
    ignored = int(sig_line.split()[1], 16)
    assert ignored & (1 << 12) == 0, f"SIGPIPE ignored in the hook: {sig_line}"
    assert ignored & (1 << 24) == 0, f"SIGXFSZ ignored in the hook: {sig_line}"
    assert Path(cwd).resolve() == repo.resolve()
    assert first == "y"
    assert git(repo, "log", "-1", "--format=%s") == "feat: 01 — ünïcode\n"
