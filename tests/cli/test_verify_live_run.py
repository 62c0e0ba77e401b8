"""``verify`` beside a live run, and ``regenerates:`` outputs after a killed run.

An operator's ``verify`` took no lock: while a run verified a ``regenerates:``
prompt, it moved the output aside under the run (repro 03). Now a ``verify``
whose contracts run commands is refused while a live run holds the packet
(exit 3, naming the run); one that only reads, or one the run itself started,
goes on. A run killed with ``-9`` mid-command left the output at its backup
for good (repro 06); the next run puts it back before anything else. Real
runs, real git, real ``kill -9``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import git
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet

PY = sys.executable
BACKUP = "figure.png.prompt-runner-verifier-backup"
WRITES = {"attempts": [{"writes": [{"path": "notes.txt", "text": "n\n"}]}]}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "prompt_runner", *args], capture_output=True, text=True, timeout=120
    )


def repo_with_figure(tmp_path: Path) -> Path:
    repo = make_git_repo(tmp_path / "repo")
    (repo / "figure.png").write_text("old", encoding="utf-8")
    git(repo, "add", "figure.png")
    git(repo, "commit", "-qm", "figure")
    return repo


def wait_for(path: Path, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"timed out waiting for {path}"
        time.sleep(0.02)


def test_verify_is_refused_while_a_run_holds_the_packet_and_the_run_is_unharmed(
    tmp_path: Path,
) -> None:
    repo = repo_with_figure(tmp_path)
    mark = tmp_path / "verifying"
    regenerate = (
        f"import pathlib, time; pathlib.Path(r'{mark}').write_text('x'); time.sleep(3); "
        "open('figure.png', 'w').write('new')"
    )
    packet_dir = tmp_path / "demo"
    own_verify = [PY, "-m", "prompt_runner", "verify", str(packet_dir), "03"]
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": WRITES,
                "verify": {
                    "commands": [
                        {
                            "exec": PY,
                            "args": ["-c", regenerate],
                            "regenerates": ["figure.png"],
                            "timeout_ms": 60000,
                        },
                        # the run's own verify command calling verify: not refused
                        {"exec": own_verify[0], "args": own_verify[1:], "timeout_ms": 60000},
                    ]
                },
            },
            "02": {"simulate": WRITES, "verify": {"files_exist": ["README.md"]}},
            "03": {"simulate": WRITES, "verify": {"commands": [{"exec": PY, "args": ["-c", ""]}]}},
        },
    )
    assert packet == packet_dir
    run = subprocess.Popen(
        [PY, "-m", "prompt_runner", "run", str(packet), "01"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(mark)  # the run's verification of 01 is under way
        refused = cli("verify", str(packet))
        reading = cli("verify", str(packet), "02")
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    pid_file = packet / ".prompt_runner" / "run.pid"
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (
        f"error: verify refused: a live run (pid {run.pid}, {pid_file}) holds packet {packet}, "
        "and the contracts' commands would run in the work trees it is changing; wait for it "
        "to finish (`prompt-runner status`, `prompt-runner watch`) or stop it "
        "(`prompt-runner stop`), then verify again"
    )
    assert refused.stdout == ""
    assert reading.returncode == 0, reading.stdout + reading.stderr  # reads only: verified
    assert "PASS 02" in reading.stdout
    assert run.returncode == 0, out + err
    assert (repo / "figure.png").read_text(encoding="utf-8") == "new"
    assert not (repo / BACKUP).exists()
    assert "figure.png" in git(repo, "show", "--name-only", "--format=", "HEAD")


def test_a_run_killed_mid_regeneration_is_undone_by_the_next_run(tmp_path: Path) -> None:
    repo = repo_with_figure(tmp_path)
    hold = tmp_path / "hold"
    hold.write_text("x", encoding="utf-8")
    regenerate = (
        "import os, time\n"
        f"if os.path.exists(r'{hold}'): time.sleep(60)\n"
        "open('figure.png', 'w').write('new')\n"
    )
    command = {
        "exec": PY,
        "args": ["-c", regenerate],
        "regenerates": ["figure.png"],
        "timeout_ms": 90000,
    }
    packet = make_packet(tmp_path, {"01": {"simulate": WRITES, "verify": {"commands": [command]}}})
    run = subprocess.Popen(
        [PY, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for(repo / BACKUP)
    finally:
        os.killpg(run.pid, signal.SIGKILL)  # the runner and its command: nothing restores
        run.wait()
    assert not (repo / "figure.png").exists()
    hold.unlink()
    again = cli("run", str(packet), "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    assert (repo / "figure.png").read_text(encoding="utf-8") == "new"
    assert not (repo / BACKUP).exists()
    tracked = git(repo, "ls-files")
    assert BACKUP not in tracked and "figure.png" in tracked


def test_verify_is_refused_while_another_packets_run_holds_the_work_tree(tmp_path: Path) -> None:
    """Another packet's live run in the same work tree holds ``<git dir>/prompt-runner.pid``."""
    command = {"commands": [{"exec": PY, "args": ["-c", "open('coverage.xml', 'w')"]}]}
    packet = make_packet(tmp_path, {"01": {"verify": command}})
    other = make_packet(
        tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 60000}]}}}, name="other"
    )
    run = subprocess.Popen(
        [PY, "-m", "prompt_runner", "run", str(other), "--no-commit"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    repo = tmp_path / "repo"
    lock = repo / ".git" / "prompt-runner.pid"
    try:
        wait_for(lock)
        refused = cli("verify", str(packet))
        assert run.poll() is None  # still live when verify asked
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert refused.stderr.strip() == (
        f"error: verify refused: repo 'app' ({repo}) is in use by a live run (pid {run.pid}, "
        f"lock {lock}), and the contracts' commands would run in the work tree it is changing; "
        "wait for that run to finish or stop it, then verify again"
    )
    assert not (repo / "coverage.xml").exists()
