"""The simulated provider refuses the paths the verifier refuses (issue 12.6):
a write whose real location is outside its repo (through a symlink), and a
write into the repo's git directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def one_write(tmp_path: Path, path: str) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": path, "text": "pwned\n"}]}]},
                "verify": {"files_exist": ["README.md"]},
            }
        },
    )


def test_a_write_through_a_symlink_out_of_the_repo_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    packet = one_write(tmp_path, "link/evil.txt")
    os.symlink(outside, tmp_path / "repo" / "link")
    proc = cli("run", packet)
    assert not (outside / "evil.txt").exists()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "refused to write link/evil.txt" in proc.stdout
    assert "escapes the repo through a symlink" in proc.stdout


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", "sub/.git/config", "gitdir/HEAD"])
def test_a_write_into_the_git_directory_is_refused(tmp_path: Path, path: str) -> None:
    packet = one_write(tmp_path, path)
    repo = tmp_path / "repo"
    os.symlink(repo / ".git", repo / "gitdir")
    proc = cli("run", packet)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"refused to write {path}" in proc.stdout
    assert "git directory" in proc.stdout
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert not (repo / "sub").exists()
    assert "pwned" not in (repo / ".git" / "HEAD").read_text()


def test_the_verifier_refuses_a_contract_path_in_the_git_directory(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": [".git/config"]}}})
    proc = cli("verify", packet)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "verify.files_exist[0]" in proc.stderr and "git directory" in proc.stderr
