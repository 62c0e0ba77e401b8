"""A state directory removed while the run writes to it (`git clean -fdx` of a
packet kept inside its repo): the run stops with exit 3 and a sentence naming the
removed directory and why, not "fix the file system"; status says the records are
missing rather than "?"; a new run finishes the packet with one commit per prompt."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import cli


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def _packet_in_repo(tmp_path: Path) -> tuple[Path, Path]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.name", "t")
    _git(repo, "config", "user.email", "t@example.invalid")
    (repo / "README.md").write_text("hi\n")
    packet = repo / "pk"
    (packet / "prompts").mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text(
        "---\nname: gc\nprovider: simulated\nrepos:\n  app:\n    path: ..\n    default: true\n---\n"
    )
    for pid, delay in (("01", 0), ("02", 2500), ("03", 0)):
        (packet / "prompts" / f"{pid}_p.prompt.md").write_text(
            f'---\nid: "{pid}"\nname: "p{pid}"\ncommit: "p {pid}"\nsimulate:\n'
            f"  attempts:\n    - delay_ms: {delay}\n      writes:\n"
            f'        - path: f{pid}.txt\n          text: "x"\n'
            f"verify:\n  files_exist: [f{pid}.txt]\n---\n# p\n"
        )
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "init")
    return repo, packet


def test_a_state_directory_cleaned_mid_run_is_named_and_the_next_run_finishes(
    tmp_path: Path,
) -> None:
    repo, packet = _packet_in_repo(tmp_path)
    run = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        cwd=repo,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    logs = packet / ".prompt_runner" / "logs"
    deadline = time.monotonic() + 30
    while not list(logs.glob("prompt-02-*.log")):  # prompt 02's session is under way
        assert time.monotonic() < deadline and run.poll() is None, "prompt 02 never started"
        time.sleep(0.02)
    _git(repo, "clean", "-fdxq")
    out, _ = run.communicate(timeout=60)

    assert run.returncode == 3, out
    assert "Traceback" not in out
    error = [line for line in out.splitlines() if line.startswith("error:")]
    assert error, out
    assert "no longer exists" in error[-1] and "git clean -x" in error[-1], error
    assert "fix the file system" not in error[-1], error
    assert "StorageError(" not in out, out  # sentences, never a repr

    status = cli("status", packet, cwd=repo)
    assert status.returncode == 0 and "Traceback" not in status.stderr
    assert " ? " not in status.stdout, status.stdout
    if "no record" in status.stdout:  # what the dead run wrote again names the prompts
        assert "is missing" in status.stdout, status.stdout

    again = cli("run", packet, cwd=repo)
    assert again.returncode == 0, again.stdout + again.stderr
    subjects = _git(repo, "log", "--format=%s").split("\n")
    assert [s for s in subjects if s.startswith("p ")] == ["p 03", "p 02", "p 01"], subjects
    assert _git(repo, "status", "--porcelain", "--", "f01.txt", "f02.txt", "f03.txt") == ""
