"""The runner never commits elsewhere, never reports uncommitted work as done, and
never keeps as completed a commit a hook broke: branch and history pins, submodules,
hooks that rewrite what they commit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.cli import cli
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet
from tests.providers.conftest import case_dir


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def files_of(repo: Path, rev: str = "HEAD") -> list[str]:
    return git(repo, "show", "--name-only", "--format=", rev).split()


def record(packet: Path, prompt_id: str = "01") -> dict[str, Any]:
    doc = json.loads(cli("status", packet, "--json").stdout)
    return dict(doc["prompts"][prompt_id])


def run_with_agent(tmp_path: Path, packet: Path, runs: list[dict[str, Any]]) -> Any:
    """``run`` the packet with a fake Claude CLI whose sessions are ``runs``."""
    stdout = (case_dir("claude", "success_write") / "stdout.jsonl").read_text()
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    config = write_config(
        tmp_path / "fake.json",
        tmp_path / "rec.jsonl",
        [{"stdout": stdout, "exit_code": 0, **r} for r in runs],
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    env[CONFIG_ENV] = str(config)
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def agent_packet(tmp_path: Path, front: dict[str, Any] | None = None) -> Path:
    return make_packet(
        tmp_path,
        {"01": {"commit": "feat: out", "verify": {"files_exist": ["out.txt"]}, **(front or {})}},
        manifest={"profile": None, "provider": "claude", "model": None},
    )


# -- item 5: the branch and history the run started on -------------------------------


def test_a_session_that_switches_branch_is_repaired_back_and_never_committed_elsewhere(
    tmp_path: Path,
) -> None:
    packet = agent_packet(tmp_path)
    repo = tmp_path / "repo"
    start = git(repo, "rev-parse", "HEAD").strip()
    proc = run_with_agent(
        tmp_path,
        packet,
        [
            {"writes": {"out.txt": "x\n"}, "shell": "git switch -q -c feature"},
            {"shell": "git switch -q main"},
        ],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (
        "✗ [01] repo 'app' is on branch 'feature', but the run started on branch 'main'"
        in proc.stdout
    )
    repair = read_records(tmp_path / "rec.jsonl")[1]
    assert "git switch main" in repair["stdin"] + " ".join(repair["argv"])
    assert git(repo, "rev-parse", "feature").strip() == start  # nothing landed there
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"
    assert files_of(repo) == ["out.txt"] and git(repo, "rev-parse", "HEAD~1").strip() == start
    attempts = record(packet)["attempts"]
    assert [a["mode"] for a in attempts] == ["run", "repair"]
    assert attempts[0]["verifier"]["failures"][0]["kind"] == "repo_branch"


def test_a_rewritten_history_fails_the_prompt_and_nothing_is_committed(tmp_path: Path) -> None:
    packet = agent_packet(tmp_path, {"recovery": {"repair": {"max_attempts": 0}}})
    repo = tmp_path / "repo"
    (repo / "second.txt").write_text("2\n")
    git(repo, "add", "second.txt")
    git(repo, "commit", "-qm", "second")
    proc = run_with_agent(
        tmp_path, packet, [{"writes": {"out.txt": "x\n"}, "shell": "git reset -q --hard HEAD~1"}]
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the history of repo 'app' was rewritten" in proc.stdout
    assert "git reset --keep" in proc.stdout
    assert git(repo, "log", "--format=%s").split("\n")[0] == "initial"  # no commit on top
    assert record(packet)["status"] != "completed"


def test_a_session_s_own_commit_on_the_branch_is_not_a_rewrite(tmp_path: Path) -> None:
    packet = agent_packet(tmp_path)
    repo = tmp_path / "repo"
    proc = run_with_agent(
        tmp_path,
        packet,
        [{"writes": {"out.txt": "x\n"}, "shell": "git add out.txt && git commit -qm agent"}],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "repo_branch" not in json.dumps(record(packet))
    assert git(repo, "log", "--format=%s").split("\n")[:2] == ["agent", "initial"]


def test_a_detached_head_at_start_is_a_preflight_warning(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            }
        },
    )
    repo = tmp_path / "repo"
    git(repo, "checkout", "-q", "--detach")
    report = json.loads(cli("packet", "preflight", packet).stdout)
    assert [w["kind"] for w in report["warnings"]] == ["detached_head"]
    assert report["runtime_ready"] is True
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "warning: repo 'app'" in proc.stdout and "is on a detached HEAD" in proc.stdout
    assert files_of(repo) == ["a.txt"]


# -- item 4: submodules ------------------------------------------------------------------


def with_submodule(tmp_path: Path) -> Path:
    lib = make_git_repo(tmp_path / "libsrc", {"lib.txt": "l\n"})
    repo = tmp_path / "repo"
    git(repo, "submodule", "add", "-q", str(lib), "lib")
    git(repo, "commit", "-qm", "add lib")
    return repo


def test_a_contract_that_reaches_into_a_submodule_is_refused_at_preflight(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["out.txt", "lib/new.txt"]}}})
    with_submodule(tmp_path)
    proc = cli("run", packet)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "prompts/01_step.prompt.md" in proc.stderr
    assert "verify.files_exist[1]" in proc.stderr
    assert "lib/new.txt is inside git submodule 'lib' of repo 'app'" in proc.stderr
    assert "Traceback" not in proc.stderr
    report = json.loads(cli("packet", "preflight", packet).stdout)
    assert report["readiness_errors"][0]["kind"] == "contract_in_submodule"


def test_uncommitted_work_inside_a_submodule_never_completes_a_prompt(tmp_path: Path) -> None:
    writes = [{"path": "out.txt", "text": "o"}, {"path": "lib/new.txt", "text": "n"}]
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: out",
                "simulate": {"attempts": [{"writes": writes}]},
                "verify": {"files_exist": ["out.txt"]},
                "recovery": {"repair": {"max_attempts": 0}},
            }
        },
    )
    repo = with_submodule(tmp_path)
    git(repo, "config", "submodule.lib.ignore", "all")  # must not hide the work from the runner
    head = git(repo, "rev-parse", "HEAD").strip()
    proc = cli("run", packet)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "uncommitted changes inside git submodule 'lib' of repo 'app'" in proc.stdout
    state = record(packet)
    assert state["status"] == "verification_failed"
    assert state["last_verifier"]["failures"][0]["kind"] == "submodule"
    assert git(repo, "rev-parse", "HEAD").strip() == head


def test_work_the_agent_commits_inside_a_submodule_gets_its_pointer_committed(
    tmp_path: Path,
) -> None:
    packet = agent_packet(tmp_path)
    repo = with_submodule(tmp_path)
    proc = run_with_agent(
        tmp_path,
        packet,
        [
            {"writes": {"out.txt": "x\n", "lib/new.txt": "n\n"}},
            {"shell": "git -C lib add -A && git -C lib commit -qm 'lib: new'"},
        ],
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(files_of(repo)) == ["lib", "out.txt"]
    assert git(repo / "lib", "log", "-1", "--format=%s").strip() == "lib: new"
    assert git(repo, "status", "--porcelain") == ""


# -- a submodule or nested clone declared as a repo of its own, targeted with its superproject


def inner_repo_packet(tmp_path: Path, kind: str, targets: list[str]) -> tuple[Path, Path]:
    """Packet whose repo ``lib`` lies inside repo ``app`` (``kind``: ``submodule``,
    added with ``git submodule add``, or ``nested``, an untracked clone) and is
    declared in the manifest, as README "Submodules" says. Prompt 01 (targets
    ``targets``) writes ``a.txt`` in app and ``x.txt`` in lib; prompt 02 then
    writes ``b.txt`` in app alone. Returns the packet and app's directory."""
    repo = make_git_repo(tmp_path / "repo")
    if kind == "submodule":
        with_submodule(tmp_path)
    else:
        make_git_repo(repo / "lib", {"lib.txt": "l\n"})
    writes = [{"path": "a.txt", "text": "A\n"}, {"path": "x.txt", "text": "X\n", "repo": "lib"}]
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: both",
                "targets": targets,
                "simulate": {"attempts": [{"writes": writes}]},
                "verify": {
                    "contains": [
                        {"path": "a.txt", "text": "A"},
                        {"path": "x.txt", "text": "X", "repo": "lib"},
                    ]
                },
                "recovery": {"repair": {"max_attempts": 0}},
            },
            "02": {
                "commit": "feat: app only",
                "simulate": {"attempts": [{"writes": [{"path": "b.txt", "text": "B\n"}]}]},
                "verify": {"files_exist": ["b.txt"]},
            },
        },
        manifest={
            "repos": {"app": {"path": "../repo", "default": True}, "lib": {"path": "../repo/lib"}}
        },
    )
    return packet, repo


def test_a_declared_submodule_targeted_with_its_superproject_commits_in_both_pointer_included(
    tmp_path: Path,
) -> None:
    packet, repo = inner_repo_packet(tmp_path, "submodule", ["app", "lib"])
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unmet: submodule" not in proc.stdout
    lib = repo / "lib"
    assert files_of(lib, "HEAD") == ["x.txt"]
    assert git(lib, "log", "-1", "--format=%s").strip() == "feat: both"
    # lib was committed first: app's commit records lib's new commit as its pointer
    assert sorted(files_of(repo, "HEAD~1")) == ["a.txt", "lib"]
    pointer = git(repo, "rev-parse", "HEAD~1:lib").strip()
    assert pointer == git(lib, "rev-parse", "HEAD").strip()
    assert files_of(repo, "HEAD") == ["b.txt"]
    assert git(repo, "status", "--porcelain") == ""
    assert git(lib, "status", "--porcelain") == ""


def test_a_declared_nested_clone_targeted_with_its_outer_repo_commits_in_each_never_a_gitlink(
    tmp_path: Path,
) -> None:
    packet, repo = inner_repo_packet(tmp_path, "nested", ["app", "lib"])
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "unmet: submodule" not in proc.stdout
    assert "uncommitted changes" not in proc.stdout  # lib/ is no change of app's
    lib = repo / "lib"
    assert files_of(lib, "HEAD") == ["x.txt"]
    assert files_of(repo, "HEAD~1") == ["a.txt"]  # no bare gitlink for lib/
    # prompt 02 (app alone) is not blamed for the clone prompt 01 committed in
    assert files_of(repo, "HEAD") == ["b.txt"]
    assert git(repo, "ls-files", "-s", "lib") == ""
    assert git(repo, "status", "--porcelain") == "?? lib/\n"
    assert git(lib, "status", "--porcelain") == ""


def test_work_in_a_declared_inner_repo_the_prompt_does_not_target_still_fails_it(
    tmp_path: Path,
) -> None:
    for kind in ("submodule", "nested"):
        root = tmp_path / kind
        packet, repo = inner_repo_packet(root, kind, ["app"])
        head = git(repo, "rev-parse", "HEAD").strip()
        proc = cli("run", packet)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "unmet: submodule lib" in proc.stdout
        assert "the packet declares as repo 'lib'" in proc.stdout
        assert "Add 'lib' to the prompt's `targets`" in proc.stdout
        assert record(packet)["status"] == "verification_failed"
        assert git(repo, "rev-parse", "HEAD").strip() == head
        assert git(repo / "lib", "status", "--porcelain") == "?? x.txt\n"


# -- item 3: a commit hook that rewrites what it commits ---------------------------------


def rewriting_hook(repo: Path, body: str) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\n{body}\n")
    hook.chmod(0o755)


def contains_packet(tmp_path: Path) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: out",
                "simulate": {"attempts": [{"writes": [{"path": "out.txt", "text": "keep me"}]}]},
                "verify": {"contains": [{"path": "out.txt", "text": "keep me"}]},
            }
        },
    )


def test_a_hook_that_breaks_the_committed_work_fails_the_prompt_naming_the_hook(
    tmp_path: Path,
) -> None:
    packet = contains_packet(tmp_path)
    repo = tmp_path / "repo"
    rewriting_hook(repo, "echo 'formatted away' > out.txt\ngit add out.txt")
    proc = cli("run", packet)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "the pre-commit hook changed out.txt in repo 'app' in the commit" in proc.stdout
    assert "the committed work fails it" in proc.stdout
    assert git(repo, "show", "HEAD:out.txt") == "formatted away\n"  # the commit stays, named
    state = record(packet)
    assert state["status"] == "commit_failed"
    assert state["hook_verifier"]["pass"] is False
    assert state["commit_info"]["commits"]["app"] == git(repo, "rev-parse", "HEAD").strip()


def test_a_hook_that_keeps_the_contract_completes_after_a_second_verification(
    tmp_path: Path,
) -> None:
    packet = contains_packet(tmp_path)
    repo = tmp_path / "repo"
    rewriting_hook(repo, "printf 'keep me\\n' > out.txt\ngit add out.txt")
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the pre-commit hook changed out.txt in repo 'app' in its commit; verified again" in (
        proc.stdout
    )
    assert record(packet)["status"] == "completed"
    assert git(repo, "show", "HEAD:out.txt") == "keep me\n"
