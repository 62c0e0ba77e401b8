"""Guards a tester asked for: lost progress, locks for in-memory runs, git identity."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_remaining_refuses_when_progress_log_was_lost(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}, "03": {}})
    assert cli("run", packet, "01", "02", "--no-commit").returncode == 0
    (packet / ".prompt_runner" / "progress.log").unlink()
    proc = cli("run", packet, "--remaining", "--no-commit")
    assert proc.returncode == 2
    assert (
        "progress.log: is missing, but the state records completed prompts (01, 02)" in proc.stderr
    )
    assert cli("run", packet, "03", "--no-commit").returncode == 0


def test_in_memory_runs_that_commit_hold_the_run_lock(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 3000}]}}})
    first = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--runtime-store", "memory"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    pid_file = packet / ".prompt_runner" / "run.pid"
    deadline = time.monotonic() + 30
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = cli("run", packet, "--runtime-store", "memory")
    assert second.returncode == 3 and str(first.pid) in second.stderr
    assert first.wait(timeout=60) == 0
    assert not pid_file.exists()


def test_preflight_refuses_a_repo_git_cannot_commit_in(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_AUTHOR", "GIT_COMMITTER"))}
    env["EMAIL"] = ""
    (tmp_path / "gitcfg").write_text("[user]\n\tuseConfigOnly = true\n")
    env["GIT_CONFIG_GLOBAL"] = str(tmp_path / "gitcfg")
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "has no git identity to commit with" in proc.stderr
    assert "git config user.email" in proc.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()
    ok = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr


def test_a_scaffold_with_placeholders_is_not_sent(tmp_path: Path) -> None:
    from tests.helpers.packets import write_front_matter

    packet = make_packet(tmp_path, {})
    write_front_matter(
        packet / "prompts" / "01_new.prompt.md",
        {"id": "01", "targets": ["app"], "verify": {"files_exist": []}},
        "# New\n\n<!-- prompt_runner:placeholder mission -->\nDescribe the change.\n",
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 2
    assert "01_new.prompt.md: the body still has scaffold placeholders (mission)" in proc.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()


def test_a_prompt_without_verify_items_is_flagged_at_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 0
    assert "[01] has no verify items" in proc.stdout


def test_lint_fails_a_packet_run_would_refuse(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["README.md"]}}},
        manifest={"recovery": {"retry": {"max_attempts": -5}}},
    )
    proc = cli("packet", "lint", packet)
    assert proc.returncode == 1
    assert "packet_load_error" in proc.stdout and "max_attempts" in proc.stdout


def test_near_miss_prompt_file_names_are_reported(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    for name in ("02_b.prompt.MD", "03_c.prompt", "04_d.prompt.markdown"):
        (packet / "prompts" / name).write_text("---\nid: x\n---\n")
    lint = cli("packet", "lint", packet, "--json")
    flagged = {
        f["path"] for f in json.loads(lint.stdout)["findings"] if f["kind"] == "ignored_prompt_file"
    }
    assert flagged == {
        "prompts/02_b.prompt.MD",
        "prompts/03_c.prompt",
        "prompts/04_d.prompt.markdown",
    }
    plan = cli("plan", packet)
    assert plan.stderr.count("is not a prompt file") == 3


def test_repair_needs_a_recorded_failure(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    proc = cli("repair", "--packet", packet, "02", "--no-commit")
    assert proc.returncode == 2
    assert "prompt 02 has no recorded failure to repair" in proc.stderr


def test_profile_with_an_unknown_provider_is_refused() -> None:
    proc = cli("profile", "new", "bad", "--provider", "nosuch")
    assert proc.returncode == 2 and "unknown provider 'nosuch'" in proc.stderr


def test_ids_with_all_is_refused(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    proc = cli("run", packet, "02", "--all", "--dry-run")
    assert proc.returncode == 2 and "cannot be combined with --all" in proc.stderr


def test_two_packets_never_work_in_one_repo_at_once(tmp_path: Path) -> None:
    """Each would sweep the other's files into its commits: the second run is
    refused (exit 3) naming the repo and the holder, and runs once it is free."""
    slow = {"simulate": {"attempts": [{"delay_ms": 3000, "writes": [{"path": "a.txt"}]}]}}
    first_packet = make_packet(tmp_path, {"01": {**slow, "verify": {"files_exist": ["a.txt"]}}})
    second_packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "b.txt"}]}]},
                "verify": {"files_exist": ["b.txt"]},
            }
        },
        name="other",
    )
    first = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(first_packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    repo_lock = tmp_path / "repo" / ".git" / "prompt-runner.pid"
    deadline = time.monotonic() + 30
    while not repo_lock.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    second = cli("run", second_packet)
    assert second.returncode == 3, second.stdout + second.stderr
    assert "repo 'app'" in second.stderr and f"pid {first.pid}" in second.stderr
    assert first.wait(timeout=60) == 0
    assert not repo_lock.exists()
    again = cli("run", second_packet)
    assert again.returncode == 0, again.stdout + again.stderr
    log = subprocess.run(
        ["git", "log", "--format=%s", "--name-only"],
        cwd=tmp_path / "repo",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert "a.txt" in log and "b.txt" in log


def test_preflight_refuses_a_repo_in_the_middle_of_a_merge(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    repo = tmp_path / "repo"

    def git(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)

    git("checkout", "-q", "-b", "side")
    (repo / "README.md").write_text("side\n")
    git("commit", "-qam", "side")
    git("checkout", "-q", "main")
    (repo / "README.md").write_text("main\n")
    git("commit", "-qam", "main")
    assert git("merge", "side").returncode != 0  # a conflict: the merge is left open
    proc = cli("run", packet)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "is in the middle of a merge;" in proc.stderr
    assert "git merge --abort" in proc.stderr


def test_status_names_the_run_even_after_state_json_was_lost(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    assert cli("run", packet).returncode == 0
    run_id = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())["run_id"]
    (packet / ".prompt_runner" / "state.json").write_text("{ torn")
    status = cli("status", packet)
    assert status.returncode == 0, status.stderr
    assert f"Run: {run_id}" in status.stdout
    assert json.loads(cli("status", packet, "--json").stdout)["run_id"] == run_id
