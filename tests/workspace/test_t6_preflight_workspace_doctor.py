"""``workspace doctor`` says what ``run``'s preflight refuses in the clones
(new-user finding t6 #12: doctor said ready while run refused a merge in
progress)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import prompt_runner
from tests.helpers.workspaces import git, make_workspace


def test_a_clone_in_the_middle_of_a_merge_is_not_ready(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    ready = prompt_runner.doctor_workspace(ws)
    assert ready.ready and ("ready", "ok") in [(c.name, c.level) for c in ready.checks]
    clone = ws.clone("app")
    branch = git(clone, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(clone, "checkout", "-q", "-b", "side")
    (clone / "clash.txt").write_text("side\n")
    git(clone, "add", "clash.txt")
    git(clone, "commit", "-q", "-m", "side")
    git(clone, "checkout", "-q", branch)
    (clone / "clash.txt").write_text("work\n")
    git(clone, "add", "clash.txt")
    git(clone, "commit", "-q", "-m", "work")
    subprocess.run(["git", "merge", "-q", "side"], cwd=clone, capture_output=True)
    assert (clone / ".git" / "MERGE_HEAD").exists()
    report = prompt_runner.doctor_workspace(ws)
    errors = {c.name: c.message for c in report.checks if c.level == "error"}
    assert not report.ready
    assert "is in the middle of a merge" in errors["ready:app"]
    assert "git merge --abort" in errors["ready:app"]
