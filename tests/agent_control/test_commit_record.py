"""A controlled prompt's record names every iteration's commit, not only the last one's."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_progress_names_the_work_of_earlier_iterations(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "simulate": {
                    "attempts": [
                        {
                            "writes": [{"path": "a.txt", "text": "a"}],
                            "agent_control": {"directive": "finish", "reason": "done?"},
                        },
                        {"messages": ["nothing more"], "agent_control": {"directive": "continue"}},
                    ]
                },
                "verify": {"files_exist": ["a.txt"]},
            }
        },
        manifest={
            "agent_control": {
                "max_iterations": 3,
                "completion_verify": {"files_exist": ["DONE.txt"]},
            }
        },
    )
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sha = subprocess.run(
        ["git", "log", "-1", "--format=%H", "--", "a.txt"],
        cwd=tmp_path / "repo",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    last = (packet / ".prompt_runner" / "progress.log").read_text().splitlines()[-1]
    assert last.startswith("01:completed:") and last.endswith(sha), last
