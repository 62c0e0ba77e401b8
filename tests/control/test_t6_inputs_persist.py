"""The commands that rewrite packet files (new-user tester t6's findings #15 and #6).

* A symlinked prompt or manifest is written through: the shared target gets the
  edit and the link stays (was: replaced by a regular copy).
* prompt-runner's own packet edits are recorded (``<state_root>/packet-edits.jsonl``),
  so a session running meanwhile never commits them as its work.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from prompt_runner.packet.own_edits import (
    edited_during,
    ledger_path,
    own_edit_paths,
    write_packet_file,
)
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet

PROMPT = "01_step.prompt.md"


def link_out(packet: Path, rel: str, shared: Path) -> Path:
    """Move the packet file ``rel`` into ``shared`` and leave a relative symlink to it."""
    shared.mkdir(exist_ok=True)
    target = shared / Path(rel).name
    (packet / rel).rename(target)
    (packet / rel).symlink_to(os.path.relpath(target, (packet / rel).parent))
    return target


def test_amend_persist_writes_through_a_symlinked_prompt(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}})
    target = link_out(packet, f"prompts/{PROMPT}", tmp_path / "shared")
    amend = cli(
        "control", "amend", packet, "01", "--add-file", "README.md", "--reason", "r", "--persist"
    )
    assert amend.returncode == 0, amend.stderr
    assert (packet / "prompts" / PROMPT).is_symlink()
    assert "README.md" in target.read_text(encoding="utf-8")


def test_add_repo_writes_through_a_symlinked_manifest(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    make_git_repo(tmp_path / "docs")
    target = link_out(packet, "prompt_runner_packet.md", tmp_path / "shared")
    added = cli("packet", "add-repo", "docs", tmp_path / "docs", "--packet", packet)
    assert added.returncode == 0, added.stderr
    assert (packet / "prompt_runner_packet.md").is_symlink()
    assert "docs:" in target.read_text(encoding="utf-8")


def test_migrate_write_writes_through_a_symlinked_prompt(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"commands": ["true"]}}})
    target = link_out(packet, f"prompts/{PROMPT}", tmp_path / "shared")
    before = target.read_text(encoding="utf-8")
    migrated = cli("packet", "migrate-contracts", packet, "--write")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    assert (packet / "prompts" / PROMPT).is_symlink()
    assert target.read_text(encoding="utf-8") != before


def test_a_write_is_recorded_only_under_an_existing_state_root(tmp_path: Path) -> None:
    """No state root is created for the record (it would be untracked, without its
    .gitignore); with one, own_edit_paths names the file until it changes again."""
    repo = tmp_path / "repo"
    make_git_repo(repo)
    file = repo / "p.md"
    state = tmp_path / "state"
    write_packet_file(file, "one\n", state_root=state)
    assert not state.exists()
    state.mkdir()
    write_packet_file(file, "two\n", state_root=state, by="test")
    assert ledger_path(state).is_file()
    assert own_edit_paths(state, repo, ["p.md", "other.txt"]) == {"p.md"}
    file.write_text("two\nand the agent's line\n", encoding="utf-8")
    assert own_edit_paths(state, repo, ["p.md"]) == set()


def test_a_persisted_amendment_is_recorded_through_its_link(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}})
    shared = tmp_path / "repo" / "shared"
    link_out(packet, f"prompts/{PROMPT}", shared)
    state = packet / ".prompt_runner"
    state.mkdir()
    amend = cli(
        "control", "amend", packet, "01", "--add-file", "README.md", "--reason", "r", "--persist"
    )
    assert amend.returncode == 0, amend.stderr
    assert own_edit_paths(state, tmp_path / "repo", [f"shared/{PROMPT}"]) == {f"shared/{PROMPT}"}


def _wait_for(predicate: object, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(predicate) and predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_a_persist_during_a_session_is_not_committed_as_its_work(tmp_path: Path) -> None:
    """Packet tracked inside its target repo; `control amend 02 --persist` while 01's
    session runs: 01's commit holds 01's work only (was: 02's prompt file too)."""
    repo = tmp_path / "repo"
    make_git_repo(repo)
    packet = make_packet(
        repo,
        {
            "01": {
                "commit": "feat: one",
                "simulate": {
                    "attempts": [{"delay_ms": 4000, "writes": [{"path": "a.txt", "text": "a\n"}]}]
                },
                "verify": {"files_exist": ["a.txt"]},
            },
            "02": {
                "commit": "feat: two",
                "simulate": {"attempts": [{"writes": [{"path": "b.txt", "text": "b\n"}]}]},
                "verify": {"files_exist": ["b.txt"]},
            },
        },
        manifest={"repos": {"app": {"path": "..", "default": True}}},
        repo=False,
        name="pkt",
    )
    subprocess.run(["git", "-C", repo, "add", "pkt"], check=True)
    subprocess.run(["git", "-C", repo, "commit", "-qm", "add packet"], check=True)
    run = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        record = packet / ".prompt_runner" / "prompts" / "01.jsonl"  # 01's session started
        _wait_for(lambda: record.is_file() and "attempt_start" in record.read_text())
        amend = cli(
            "control", "amend", packet, "02", "--add-file", "README.md", "--reason", "r",
            "--persist",
        )  # fmt: skip
        assert amend.returncode == 0, amend.stderr
        out, _ = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
    assert run.returncode == 0, out
    log = subprocess.run(
        ["git", "-C", repo, "log", "--format=%s", "--name-only", "-n", "2"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    one = log.split("feat: one", 1)[1]
    assert "a.txt" in one
    assert "pkt/prompts/02_step.prompt.md" not in one, log


def test_a_write_names_the_current_run(tmp_path: Path) -> None:
    """edited_during is the runner's cheap question "may a session of my run hold a
    persist?": only writes made while runs/current.json named that run count."""
    state = tmp_path / "state"
    (state / "runs").mkdir(parents=True)
    file = tmp_path / "p.md"
    write_packet_file(file, "x\n", state_root=state)  # no current run
    assert not edited_during(state, "r1")
    (state / "runs" / "current.json").write_text(
        '{"schema_version": 1, "run_id": "r1", "status": "running"}', encoding="utf-8"
    )
    write_packet_file(file, "y\n", state_root=state)
    assert edited_during(state, "r1") and not edited_during(state, "r2")
    assert not edited_during(None, "r1")
