"""End-to-end outcome matrix on the simulated provider, through the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.errors import StateError
from prompt_runner.state.store import FileStore
from tests.helpers.cli import cli
from tests.helpers.packets import FAST, NOREPAIR, make_packet


def state(packet: Path) -> dict[str, Any]:
    return api.status(packet)["prompts"]


def modes(packet: Path, prompt_id: str = "01") -> list[str]:
    return [a["mode"] for a in state(packet)[prompt_id]["attempts"]]


def statuses(packet: Path, prompt_id: str = "01") -> list[str]:
    return [a["status"] for a in state(packet)[prompt_id]["attempts"]]


def progress_lines(packet: Path) -> list[str]:
    path = packet / ".prompt_runner" / "progress.log"
    return path.read_text().splitlines() if path.exists() else []


def test_demo_command_runs_the_example_packet(tmp_path: Path) -> None:
    proc = cli("demo", "--dir", tmp_path / "demo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Run completed: 9 prompt(s) completed." in proc.stdout
    assert "9 commit(s) in the workspace; exit code 0" in proc.stdout
    prompts = state(tmp_path / "demo")
    got = {pid: [a["mode"] for a in rec["attempts"]] for pid, rec in prompts.items()}
    assert got == {
        "01": ["run", "retry"],
        "02": ["run", "retry"],
        "03": ["run", "repair"],
        "04": ["run", "resume"],
        "05": ["run", "retry", "retry"],
        "06": ["run"],
        "07": ["run", "retry", "repair"],
        "08": ["run", "retry"],
        "09": ["run", "resume"],
    }
    assert prompts["06"]["source"] == "verifier_override"
    assert prompts["02"]["attempts"][0]["delay_ms"] >= 25  # backoff with jitter in [d/2, d]


def test_terminal_classes_example_fails_honestly(tmp_path: Path) -> None:
    proc = cli("demo", "--example", "terminal_classes", "--dir", tmp_path / "t")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    prompts = state(tmp_path / "t")
    assert {k: v["status"] for k, v in prompts.items()} == {
        "01": "failed",
        "02": "failed",
        "03": "failed",
        "04": "completed",
    }
    classes = [prompts[p]["attempts"][0]["failure_class"] for p in ("01", "02", "03")]
    assert classes == ["approval_denied", "guardrail_blocked", "user_cancelled"]
    workspace = tmp_path / "t" / "workspace"
    assert all((workspace / f).exists() for f in ("denied.md", "guarded.md", "cancelled.md"))
    log = subprocess.run(
        ["git", "log", "--format=%s"], cwd=workspace, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert log[0] == "docs: index" and "docs: denied page" not in log


@pytest.mark.parametrize("kind", ["approval_denied", "guardrail_blocked", "user_cancelled"])
def test_terminal_classes_fail_honestly_even_when_files_exist(tmp_path: Path, kind: str) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {
                            "writes": [{"path": "out.txt", "text": "done"}],
                            "error": {"kind": kind, "message": f"{kind} by policy"},
                        }
                    ]
                },
                "verify": {"files_exist": ["out.txt"]},
            }
        },
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (tmp_path / "repo" / "out.txt").exists()
    assert modes(packet) == ["run"]
    assert statuses(packet) == ["failed"]
    record = state(packet)["01"]
    assert record["status"] == "failed"
    assert record["attempts"][0]["failure_class"] == kind
    assert record["attempts"][0]["verifier"]["pass"] is True
    assert progress_lines(packet)[-1].startswith("01:failed:")


def test_local_deterministic_failure_fails_fast_over_retryable(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {
                            "error": {
                                "kind": "provider_runtime_claim",
                                "message": "Local configuration contradiction.",
                                "recovery": {
                                    "class": "provider_config_claim",
                                    "retryable?": True,
                                    "repairable?": False,
                                    "resumeable?": False,
                                    "remote_claim?": False,
                                    "local_deterministic?": True,
                                },
                            }
                        }
                    ]
                },
                "verify": {"files_exist": ["never-created.txt"]},
            }
        },
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1
    assert modes(packet) == ["run"] and statuses(packet) == ["failed"]
    assert "local deterministic" in state(packet)["01"]["reason"]


def test_class_attempts_allow_several_retries(tmp_path: Path) -> None:
    err = {
        "error": {
            "kind": "provider_config_claim",
            "message": "Selected model is temporarily unavailable.",
        }
    }
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        err,
                        err,
                        {"writes": [{"path": "config.txt", "text": "config ok"}]},
                    ]
                },
                "verify": {"contains": [{"path": "config.txt", "text": "config ok"}]},
            }
        },
        manifest={
            "recovery": {
                **FAST,
                "retry": {**FAST["retry"], "class_attempts": {"provider_config_claim": 2}},
            }
        },
    )
    assert cli("run", packet, "--no-commit").returncode == 0
    assert modes(packet) == ["run", "retry", "retry"]
    assert statuses(packet) == ["failed", "failed", "completed"]


def test_retry_budget_exhausted_without_changes_fails(tmp_path: Path) -> None:
    err = {"error": {"kind": "provider_capacity", "message": "overloaded"}}
    packet = make_packet(
        tmp_path,
        {"01": {"simulate": {"attempts": [err, err, err]}, "verify": {"files_exist": ["x.txt"]}}},
        manifest={
            "recovery": {
                **FAST,
                "retry": {**FAST["retry"], "class_attempts": {"provider_capacity": 2}},
            }
        },
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1
    assert modes(packet) == ["run", "retry", "retry"]
    assert "retry budget spent" in state(packet)["01"]["reason"]


def test_repair_budget_spent_fails_naming_unmet_items(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["never.txt"]}}},
        manifest={"recovery": {**FAST, "repair": {"max_attempts": 1}}},
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 1
    assert modes(packet) == ["run", "repair"]
    assert statuses(packet) == ["verification_failed", "verification_failed"]
    assert state(packet)["01"]["status"] == "verification_failed"
    assert "never.txt" in proc.stdout


def test_repair_prompt_carries_unmet_items(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {"writes": [{"path": "hello.txt", "text": "hello"}]},
                        {"writes": [{"path": "hello.meta.txt", "text": "meta"}]},
                    ]
                },
                "verify": {"files_exist": ["hello.txt", "hello.meta.txt"]},
            }
        },
    )
    texts: list[str] = []

    import prompt_runner.providers.simulated as sim

    original = sim.SimulatedProvider.start

    def spy(self, request, sink):  # type: ignore[no-untyped-def]
        texts.append(request.prompt_text)
        return original(self, request, sink)

    sim.SimulatedProvider.start = spy  # type: ignore[method-assign]
    try:
        result = api.run(packet)
    finally:
        sim.SimulatedProvider.start = original  # type: ignore[method-assign]
    assert result.exit_code == 0
    assert len(texts) == 2
    assert "## Repair Instructions" not in texts[0]
    assert "## Repair Instructions" in texts[1]
    assert "Remaining verifier failures:" in texts[1]
    assert "hello.meta.txt" in texts[1]


def test_verifier_fault_halts_without_failing_the_prompt(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "verify": {
                    "commands": [
                        {"exec": "definitely-missing-verifier-xyz", "args": [], "timeout_ms": 5000}
                    ]
                }
            },
            "02": {"verify": {"files_exist": ["README.md"]}},
        },
    )
    proc = cli("run", packet, "--no-commit", "--keep-going")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    prompts = state(packet)
    assert prompts["01"]["status"] == "verifier_fault"
    assert modes(packet) == ["run"]  # no repair spent
    assert "02" not in prompts
    assert not any(line.startswith("01:failed") for line in progress_lines(packet))


def test_commit_failure_is_reported_not_swallowed(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "chore: out",
                "simulate": {"attempts": [{"writes": [{"path": "out.txt", "text": "x"}]}]},
                "verify": {"files_exist": ["out.txt"]},
            }
        },
    )
    hook = tmp_path / "repo" / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'lint: 3 problems in out.txt' >&2\nexit 1\n")
    hook.chmod(0o755)
    before = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path / "repo", capture_output=True, text=True
    ).stdout
    proc = cli("run", packet, "01")
    # A rejecting hook is an infrastructure fault: exit 3, with the hook's own words.
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "the pre-commit hook rejected the commit" in proc.stdout
    # quoted once, by the prompt's line; the closing line names the cause only
    assert proc.stdout.count("lint: 3 problems in out.txt") == 1, proc.stdout
    assert "Run halted: prompt 01 passed its contract but its commit failed" in proc.stdout
    assert state(packet)["01"]["status"] == "commit_failed"
    assert "lint: 3 problems in out.txt" in state(packet)["01"]["commit_error"]
    assert progress_lines(packet)[-1].startswith("01:failed")
    after = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path / "repo", capture_output=True, text=True
    ).stdout
    assert before == after


def test_git_committer_commits_with_the_prompt_message(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "docs: add out",
                "simulate": {"attempts": [{"writes": [{"path": "out.txt", "text": "x"}]}]},
                "verify": {"files_exist": ["out.txt"]},
            }
        },
    )
    assert cli("run", packet).returncode == 0
    subject = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=tmp_path / "repo", capture_output=True, text=True
    ).stdout.strip()
    assert subject == "docs: add out"
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path / "repo", capture_output=True, text=True
    ).stdout.strip()
    assert progress_lines(packet)[-1].endswith(f":{sha}")
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=tmp_path / "repo", capture_output=True, text=True
    ).stdout
    assert status == ""


def test_fail_fast_default_and_keep_going(tmp_path: Path) -> None:
    prompts = {
        "01": {"verify": {"files_exist": ["never-01.txt"]}},
        "02": {"verify": {"files_exist": ["never-02.txt"]}},
    }
    a = make_packet(tmp_path / "a", prompts, manifest={"recovery": {**FAST, **NOREPAIR}})
    assert cli("run", a, "--no-commit").returncode == 1
    assert list(state(a)) == ["01"]
    b = make_packet(tmp_path / "b", prompts, manifest={"recovery": {**FAST, **NOREPAIR}})
    proc = cli("run", b, "--no-commit", "--keep-going")
    assert proc.returncode == 1
    assert "2 selected prompt(s) failed: 01, 02" in proc.stdout
    assert {k: v["status"] for k, v in state(b).items()} == {
        "01": "verification_failed",
        "02": "verification_failed",
    }


def test_dependencies_block_descendants_under_keep_going(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["never.txt"]}},
            "02": {"depends_on": ["01"], "verify": {"files_exist": ["README.md"]}},
            "03": {"verify": {"files_exist": ["never3.txt"]}},
        },
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    proc = cli("run", packet, "--no-commit", "--keep-going")
    assert proc.returncode == 1
    prompts = state(packet)
    assert prompts["02"]["status"] == "blocked_by_dependency"
    assert prompts["02"]["blocked_by"] == ["01"]
    assert prompts["02"].get("attempts", []) == []
    assert prompts["03"]["status"] == "verification_failed"


def test_attempt_history_appends_across_invocations(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["never.txt"]}}},
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    cli("run", packet, "01", "--no-commit")
    cli("run", packet, "01", "--no-commit")
    attempts = state(packet)["01"]["attempts"]
    assert [(a["attempt"], a["mode"], a["status"]) for a in attempts] == [
        (1, "run", "verification_failed"),
        (1, "run", "verification_failed"),
    ]
    assert json.loads((packet / ".prompt_runner" / "state.json").read_text())
    assert not list((packet / ".prompt_runner").glob("**/*.tmp*"))


def test_remaining_selects_nothing_and_says_so(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    assert cli("run", packet, "--no-commit").returncode == 0
    proc = cli("run", packet, "--remaining", "--no-commit")
    assert proc.returncode == 0
    assert "Nothing remaining" in proc.stdout
    assert len(state(packet)["01"]["attempts"]) == 1


def test_unknown_id_is_an_error_and_nothing_runs(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    proc = cli("run", packet, "01", "99", "--no-commit")
    assert proc.returncode == 2
    assert "'99'" in proc.stderr and "01" in proc.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()


def test_unknown_flag_is_rejected_and_nothing_is_created(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    proc = cli("run", packet, "--remainging")
    assert proc.returncode == 2
    assert "--remainging" in proc.stderr
    assert not (packet / ".prompt_runner").exists()


def test_dry_run_prints_the_plan_and_runs_nothing(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"commit": "feat: x"}})
    proc = cli("run", packet, "--dry-run", "--no-commit")
    assert proc.returncode == 0
    for needle in (
        "provider: simulated",
        "model: simulated-demo",
        "permission mode: bypass",
        "targets: app",
        "SKIPPED (--no-commit)",
        f"cwd: {(tmp_path / 'repo').resolve()}",
    ):
        assert needle in proc.stdout
    assert not (packet / ".prompt_runner").exists()
    proc2 = cli("run", packet, "--dry-run")
    assert "git commit: 'feat: x'" in proc2.stdout


def test_corrupted_progress_log_stops_remaining_with_a_clear_error(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    assert cli("run", packet, "--no-commit").returncode == 0
    progress = packet / ".prompt_runner" / "progress.log"
    progress.write_text("garbage line without fields\n" + progress.read_text())
    proc = cli("run", packet, "--remaining", "--no-commit")
    assert proc.returncode == 2
    assert "progress.log" in proc.stderr and "line 1" in proc.stderr
    assert "Traceback" not in proc.stderr
    # nothing ran: the prompt's own record still holds its one attempt (status
    # refuses the bad progress.log line as run does, so read the record itself)
    with pytest.raises(StateError, match=r"progress\.log: line 1"):
        api.status(packet)
    record = FileStore(packet / ".prompt_runner").load_prompt("01")
    assert len(record["attempts"]) == 1


def test_changed_packet_fails_closed_and_new_run_supersedes(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["never.txt"]}}},
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    assert cli("run", packet, "--no-commit").returncode == 1
    prompt = packet / "prompts" / "01_step.prompt.md"
    prompt.write_text(prompt.read_text().replace("# Step 01", "# Step 01, edited"))
    proc = cli("run", packet, "--remaining", "--no-commit")
    assert proc.returncode == 2
    assert "packet changed" in proc.stderr and "--new-run" in proc.stderr
    old = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())["run_id"]
    proc = cli("run", packet, "--remaining", "--no-commit", "--new-run")
    assert proc.returncode == 1
    new = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())["run_id"]
    assert new != old
    journal = (packet / ".prompt_runner" / "runs" / old / "journal.jsonl").read_text()
    assert "run_superseded" in journal


def test_the_superseded_run_names_the_run_that_replaced_it(tmp_path: Path) -> None:
    # The reference (guides/cli.md, "Intentionally replacing a run generation"):
    # the prior journal "receive[s] a `run_superseded` record naming the new identity".
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["never.txt"]}}},
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    assert cli("run", packet, "--no-commit").returncode == 1
    runs = packet / ".prompt_runner" / "runs"
    old = json.loads((runs / "current.json").read_text())["run_id"]
    assert cli("run", packet, "--remaining", "--no-commit", "--new-run").returncode == 1
    new = json.loads((runs / "current.json").read_text())["run_id"]
    records = [json.loads(line) for line in (runs / old / "journal.jsonl").read_text().splitlines()]
    superseded = [r for r in records if r["type"] == "run_superseded"]
    assert len(superseded) == 1 and superseded[0]["run_id"] == old
    assert superseded[0]["data"]["new_run_id"] == new != old
    assert superseded[0]["data"]["reason"] == "explicit_new_run"
    started = json.loads((runs / new / "journal.jsonl").read_text().splitlines()[0])
    assert superseded[0]["data"]["new_packet_fingerprint"] == started["data"]["fingerprint"]


def test_failed_run_resumes_only_inside_its_fence(tmp_path: Path) -> None:
    never = {"verify": {"files_exist": ["never.txt"]}}
    packet = make_packet(
        tmp_path,
        {"01": never, "02": never, "03": never},
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    assert cli("run", packet, "--through", "02", "--no-commit").returncode == 1
    proc = cli("run", packet, "--remaining", "--no-commit")
    assert proc.returncode == 2 and "03" in proc.stderr and "--new-run" in proc.stderr
    proc = cli("run", packet, "--remaining", "--through", "02", "--no-commit")
    assert proc.returncode == 1
    assert "Resuming run" in proc.stdout


def test_preflight_verify_under_remaining(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "verify": {"files_exist": ["README.md"]},
                "simulate": {"attempts": [{"writes": [{"path": "SESSION_RAN.txt", "text": "x"}]}]},
            }
        },
    )
    proc = cli("run", packet, "--remaining", "--no-commit")
    assert proc.returncode == 0
    assert not (tmp_path / "repo" / "SESSION_RAN.txt").exists()
    record = state(packet)["01"]
    assert record["source"] == "preflight_verify" and record["session_ran"] is False
    assert progress_lines(packet)[-1].endswith(":no_session")


def test_preflight_never_completes_empty_or_changed_paths_contracts(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {}, "02": {"verify": {"changed_paths_only": ["lib/thing.ex"]}}},
    )
    assert cli("run", packet, "--remaining", "--no-commit").returncode == 0
    prompts = state(packet)
    assert prompts["01"]["session_ran"] is True and len(prompts["01"]["attempts"]) == 1
    assert prompts["02"]["session_ran"] is True


def test_missing_repo_fails_preflight_before_any_session(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {}}, manifest={"repos": {"app": {"path": "../nowhere", "default": True}}}
    )
    proc = cli("run", packet)
    assert proc.returncode == 2
    assert "preflight failed" in proc.stderr and "nowhere" in proc.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()


def test_status_json_before_any_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    proc = cli("status", packet, "--json")
    assert proc.returncode == 0
    doc = json.loads(proc.stdout)
    assert doc == {
        "schema_version": 1,
        "version": 1,
        "prompts": {},
        "runner": {"alive": False},
        "pending": ["01"],  # every prompt of the packet, before any run (nu14 A#5)
        "last_run": None,
    }
    assert not (packet / ".prompt_runner").exists()


def test_verify_command_changes_nothing(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["README.md"]}},
            "02": {"verify": {"files_exist": ["nope.txt"]}},
        },
    )
    proc = cli("verify", packet, "--json")
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    assert (
        doc["schema"] == "prompt_runner.verify/v1" and doc["failures"] == 1 and doc["faults"] == 0
    )
    assert cli("verify", packet, "01").returncode == 0
    assert cli("verify", packet, "99").returncode == 2
    assert not (packet / ".prompt_runner").exists()


def test_repair_command_uses_recorded_failures(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "verify": {"files_exist": ["fixed.txt"]},
                "simulate": {"attempts": [{"messages": ["nothing"]}]},
            }
        },
        manifest={"recovery": {**FAST, **NOREPAIR}},
    )
    assert cli("run", packet, "--no-commit").returncode == 1
    # The script is not part of the run fingerprint: let the next session do the work.
    prompt = packet / "prompts" / "01_step.prompt.md"
    prompt.write_text(
        prompt.read_text().replace(
            "  - messages:\n    - nothing", "  - writes:\n    - path: fixed.txt\n      text: ok"
        )
    )
    proc = cli("repair", "--packet", packet, "01", "--no-commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert modes(packet) == ["run", "repair"]
    assert state(packet)["01"]["status"] == "completed"
    assert cli("repair", "--packet", packet).returncode == 2


def test_missing_provider_cli_exits_3_before_any_session(tmp_path: Path) -> None:
    import os
    import shutil
    import sys

    packet = make_packet(tmp_path, {"01": {}})
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(shutil.which("git") or "/usr/bin/git")
    env = {**os.environ, "PATH": str(bin_dir)}
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--provider", "claude"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "claude" in proc.stderr and "npm install" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()
