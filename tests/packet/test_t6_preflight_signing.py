"""``commit.gpgsign`` on with a key git cannot use is found by preflight, before
any session (new-user finding t6 #19): a real ``git commit-tree -S``, signing
as the runner's commit would, into a temporary object directory."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.packet.preflight import preflight_report
from tests.helpers.packets import make_packet

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs ssh-keygen")

WRITES = {
    "01": {
        "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a\n"}]}]},
        "verify": {"files_exist": ["a.txt"]},
    }
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def signing(repo: Path, key: Path) -> None:
    git(repo, "config", "commit.gpgsign", "true")
    git(repo, "config", "gpg.format", "ssh")
    git(repo, "config", "user.signingkey", str(key))


def objects(repo: Path) -> str:
    return git(repo, "count-objects", "-v")


def test_a_signing_key_git_cannot_use_is_a_readiness_error(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, WRITES)
    repo = tmp_path / "repo"
    signing(repo, tmp_path / "no-such-key")
    before = objects(repo)
    pre = prompt_runner.preflight(packet)
    assert pre.runtime_ready is False
    (error,) = pre.readiness_errors
    assert error["kind"] == "cannot_sign" and error["key"] == "repos.app.path"
    assert "git cannot sign a commit there" in error["reason"]
    assert "no-such-key" in error["reason"]  # git's own reason, quoted
    assert "commit.gpgsign false" in error["fix"]
    assert prompt_runner.doctor(packet).runtime_ready is False
    assert objects(repo) == before  # the test signature wrote nothing into the repo
    # --no-commit makes no commit, so signing is nobody's business
    assert preflight_report(packet, needs_git=False)["runtime_ready"] is True


def test_a_usable_signing_key_is_ready_and_the_run_signs(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, WRITES)
    repo = tmp_path / "repo"
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    signing(repo, key)
    before = objects(repo)
    assert preflight_report(packet)["runtime_ready"] is True
    assert objects(repo) == before
    res = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert "gpgsig" in git(repo, "cat-file", "commit", "HEAD")


def test_run_refuses_before_any_session(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, WRITES)
    signing(tmp_path / "repo", tmp_path / "no-such-key")
    res = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2, res.stdout + res.stderr
    assert "repos.app.path: preflight failed: repo 'app'" in res.stderr
    assert "git cannot sign a commit there" in res.stderr
    assert "Starting run" not in res.stdout and not (tmp_path / "repo" / "a.txt").exists()
