"""``--diff full`` for a change that carries no patch: git's current state, labelled so.

Codex (and most CLIs) report a changed path without a patch. Under ``diff:
full`` the console shows ``git diff`` of that path -- an untracked file as an
added file -- labelled as the file's current state, never as the tool's patch
(SPEC 4). Under ``none``/``stat`` git is never run (a ``git`` on PATH that
records its calls proves it).
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner.providers.events import Event
from prompt_runner.render.text import Console
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, write_config
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet

LABEL = "current state from git, not the tool's patch"
DATA = Path(__file__).resolve().parents[1] / "data" / "agent-cli"


def shown(event: Event, diff: str, roots: dict[str, Path] | None = None) -> list[str]:
    out = io.StringIO()
    console = Console(out, {"log_mode": "compact", "diff": diff}, roots=roots)
    console.event("01", event)
    console.flush()
    return out.getvalue().splitlines()


def test_an_untracked_file_is_shown_as_added_labelled_as_its_current_state(
    tmp_path: Path,
) -> None:
    repo = make_git_repo(tmp_path / "repo")
    (repo / "hello.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    path = str(repo / "hello.txt")
    lines = shown(Event("file_change", {"path": path, "change": "create"}), "full")
    assert lines[0] == f"  [01] ✎ create {path} (+2 -0, {LABEL})"
    assert lines[1:] == ["      @@ -0,0 +1,2 @@", "      +alpha", "      +beta"]


def test_a_tracked_file_shows_git_diff_against_head(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", {"a.txt": "one\ntwo\n"})
    (repo / "a.txt").write_text("one\nTWO\n", encoding="utf-8")
    lines = shown(Event("file_change", {"path": "a.txt", "change": "modify"}), "full", {"01": repo})
    assert lines[0] == f"  [01] ✎ modify a.txt (+1 -1, {LABEL})"
    assert "      -two" in lines and "      +TWO" in lines


def test_the_tools_own_patch_is_shown_as_it_came(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "repo", {"a.txt": "one\n"})
    (repo / "a.txt").write_text("ONE\n", encoding="utf-8")
    patch = "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-one\n+uno"
    event = Event(
        "file_change", {"path": "a.txt", "change": "modify", "patch": patch, "patch_source": "tool"}
    )
    lines = shown(event, "full", {"01": repo})
    assert lines[0] == "  [01] ✎ modify a.txt (+1 -1)"
    assert "      +uno" in lines and "      +ONE" not in lines


@pytest.mark.parametrize("where", ["outside", "unchanged", "ignored"])
def test_nothing_in_git_says_the_tool_sent_no_patch(tmp_path: Path, where: str) -> None:
    repo = make_git_repo(tmp_path / "repo", {"a.txt": "one\n", ".gitignore": "build/\n"})
    path = {
        "outside": tmp_path / "loose.txt",
        "unchanged": repo / "a.txt",
        "ignored": repo / "build" / "out.txt",
    }[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    if where != "unchanged":
        path.write_text("x\n", encoding="utf-8")
    lines = shown(Event("file_change", {"path": str(path), "change": "modify"}), "full")
    assert lines == [f"  [01] ✎ modify {path} (no patch from the tool)"]


def record_git_calls(tmp_path: Path) -> Path:
    """Put a ``git`` first on PATH that logs each call, then runs the real git."""
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / "gitbin"
    bin_dir.mkdir()
    log = tmp_path / "git-calls.log"
    script = bin_dir / "git"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{log}"\nexec "{real}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    return log


@pytest.mark.parametrize("diff", ["none", "stat"])
def test_git_is_never_run_unless_diff_is_full(tmp_path: Path, diff: str) -> None:
    repo = make_git_repo(tmp_path / "repo")
    (repo / "new.txt").write_text("x\n", encoding="utf-8")
    log = record_git_calls(tmp_path)
    event = Event("file_change", {"path": str(repo / "new.txt"), "change": "create"})
    out = io.StringIO()
    console = Console(out, {"log_mode": "compact", "diff": diff})
    console.event("01", event)
    console.events("01", [event, event])
    console.flush()
    assert not log.exists()
    assert "current state" not in out.getvalue()
    console.view = {"log_mode": "compact", "diff": "full"}  # as `control view --diff full`
    console.events("01", [event])
    console.flush()
    assert log.exists() and LABEL in out.getvalue()


def test_a_codex_run_with_diff_full_shows_the_files_current_state(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["hello.txt"]}}},
        manifest={"profile": None, "provider": "codex", "model": None},
    )
    target = (tmp_path / "repo" / "hello.txt").resolve()
    recorded = (DATA / "codex" / "success_patch" / "stdout.jsonl").read_text(encoding="utf-8")
    stdout = recorded.replace("/SCRATCH/codex/out/success_patch/work/hello.txt", str(target))
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "codex")
    config = write_config(
        tmp_path / "fake.json",
        tmp_path / "rec.jsonl",
        [{"stdout": stdout, "exit_code": 0, "writes": {"hello.txt": "hi\n"}}],
    )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "prompt_runner",
            "run",
            str(packet),
            "--no-commit",
            "--diff",
            "full",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"  [01] ✎ create {target} (+1 -0, {LABEL})\n" in proc.stdout
    assert "  [01]       +hi\n" in proc.stdout or "      +hi\n" in proc.stdout
    assert "(no patch from the tool)" not in proc.stdout
