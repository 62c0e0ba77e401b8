"""t6: what git is handed names exactly the session's files -- a name that is
not UTF-8, a nested repository, an uninitialised submodule, a sparse checkout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.helpers.cli import cli
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, write_config
from tests.helpers.packets import make_packet
from tests.providers.conftest import case_dir

LATIN1 = os.fsdecode(b"caf\xe9.txt")  # 'caf\udce9.txt': the bytes of a latin-1 name


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def committed(repo: Path, rev: str = "HEAD") -> list[bytes]:
    out = subprocess.run(
        ["git", "show", "-z", "--name-only", "--format=", rev],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout
    return sorted(p for p in out.strip(b"\0\n").split(b"\0") if p)


def record(packet: Path, prompt_id: str = "01") -> dict[str, Any]:
    return dict(json.loads(cli("status", packet, "--json").stdout)["prompts"][prompt_id])


def agent_packet(tmp_path: Path, verify: dict[str, Any] | None = None) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: out",
                "recovery": {"repair": {"max_attempts": 0}},
                "verify": verify or {"files_exist": ["out.txt"]},
            }
        },
        manifest={"profile": None, "provider": "claude", "model": None},
    )


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


# -- t6 #8: a file name that is not UTF-8 ---------------------------------------------


def test_a_session_s_file_whose_name_is_not_utf8_is_committed_byte_exact(
    tmp_path: Path,
) -> None:
    packet = agent_packet(tmp_path)
    repo = tmp_path / "repo"
    (repo / "README.md").write_text("user wip\n")  # the commit goes path by path
    done = run_with_agent(
        tmp_path,
        packet,
        [{"writes": {"out.txt": "x\n"}, "shell": "echo fixture > \"$(printf 'caf\\351.txt')\""}],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert committed(repo) == [b"caf\xe9.txt", b"out.txt"]
    assert git(repo, "status", "--porcelain") == " M README.md\n"  # the user's stays


def test_a_user_s_file_whose_name_is_not_utf8_stays_uncommitted_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    packet = agent_packet(tmp_path)
    repo = tmp_path / "repo"
    (repo / LATIN1).write_text("the user's\n")
    done = run_with_agent(tmp_path, packet, [{"writes": {"out.txt": "x\n"}}])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "caf\ufffd.txt" in done.stdout  # named in the dirty-repo warning, as shown
    assert committed(repo) == [b"out.txt"]
    assert (repo / LATIN1).read_text() == "the user's\n"
    assert record(packet)["status"] == "completed"


def test_a_name_not_utf8_in_a_repo_with_a_commit_hook_is_committed_and_completes(
    tmp_path: Path,
) -> None:
    packet = agent_packet(tmp_path)
    repo = tmp_path / "repo"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    done = run_with_agent(
        tmp_path,
        packet,
        [{"writes": {"out.txt": "x\n"}, "shell": "echo fixture > \"$(printf 'caf\\351.txt')\""}],
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert committed(repo) == [b"caf\xe9.txt", b"out.txt"]
    assert record(packet)["status"] == "completed"


# -- t6 #3 / #7: a repository of its own inside the work tree; an unchecked submodule --


def writes_packet(tmp_path: Path, writes: dict[str, str], verify: dict[str, Any]) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: p01",
                "recovery": {"repair": {"max_attempts": 0}},
                "simulate": {
                    "attempts": [{"writes": [{"path": p, "text": t} for p, t in writes.items()]}]
                },
                "verify": verify,
            },
            "02": {
                "commit": "feat: p02",
                "simulate": {"attempts": [{"writes": [{"path": "b.txt", "text": "Bye\n"}]}]},
                "verify": {"files_exist": ["b.txt"]},
            },
        },
    )


def test_work_inside_a_nested_repository_fails_the_prompt_and_is_never_a_gitlink(
    tmp_path: Path,
) -> None:
    packet = writes_packet(
        tmp_path, {"vendor/x/f.txt": "Hello\n"}, {"files_exist": ["vendor/x/f.txt"]}
    )
    repo = tmp_path / "repo"
    nested = repo / "vendor" / "x"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "base").write_text("b\n")
    git(nested, "add", "base")
    git(nested, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    head = git(repo, "rev-parse", "HEAD")
    done = cli("run", packet)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "✓ 01 completed" not in done.stdout
    assert "unmet: submodule vendor/x/" in done.stdout
    assert record(packet)["status"] == "verification_failed"
    assert "a git repository of its own" in json.dumps(record(packet)["last_verifier"])
    assert git(repo, "rev-parse", "HEAD") == head  # no commit, no gitlink
    assert git(repo, "ls-files", "-s", "vendor") == ""


def test_work_inside_an_uninitialised_submodule_fails_the_prompt(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    (lib / "l.txt").write_text("l\n")
    git(lib, "add", "l.txt")
    git(lib, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lib")
    packet = writes_packet(
        tmp_path,
        {"a.txt": "Hello\n", "libs/lib/y.txt": "lib tweak\n"},
        {"files_exist": ["a.txt"]},
    )
    repo = tmp_path / "repo"
    git(repo, "submodule", "add", "-q", str(lib), "libs/lib")
    git(repo, "commit", "-qm", "add submodule")
    subprocess.run(["rm", "-rf", str(repo / "libs" / "lib")], check=True)
    (repo / "libs" / "lib").mkdir()  # as a clone without --recursive leaves it
    subprocess.run(["rm", "-rf", str(repo / ".git" / "modules")], check=True)
    git(repo, "config", "--remove-section", "submodule.libs/lib")
    assert git(repo, "status", "--porcelain") == ""
    head = git(repo, "rev-parse", "HEAD")
    done = cli("run", packet)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "✓ 01 completed" not in done.stdout
    assert "unmet: submodule libs/lib" in done.stdout
    assert "git submodule update --init libs/lib" in json.dumps(record(packet)["last_verifier"])
    assert git(repo, "rev-parse", "HEAD") == head


def test_an_uninitialised_submodule_the_session_left_alone_does_not_fail_it(
    tmp_path: Path,
) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    (lib / "l.txt").write_text("l\n")
    git(lib, "add", "l.txt")
    git(lib, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "lib")
    packet = writes_packet(tmp_path, {"a.txt": "Hello\n"}, {"files_exist": ["a.txt"]})
    repo = tmp_path / "repo"
    git(repo, "submodule", "add", "-q", str(lib), "libs/lib")
    git(repo, "commit", "-qm", "add submodule")
    subprocess.run(["rm", "-rf", str(repo / "libs" / "lib")], check=True)
    (repo / "libs" / "lib").mkdir()
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert committed(repo, "HEAD~1") == [b"a.txt"]


def test_the_committer_refuses_to_commit_a_nested_repository_as_a_gitlink(
    tmp_path: Path,
) -> None:
    from prompt_runner.committer import GitCommitter
    from tests.helpers.gitrepo import make_git_repo

    repo = make_git_repo(tmp_path / "app")
    nested = make_git_repo(repo / "vendor" / "x")
    (nested / "f.txt").write_text("f\n")
    head = git(repo, "rev-parse", "HEAD")
    result = GitCommitter().commit(
        prompt_id="01", message="m", repos={"app": repo}, paths={"app": ["vendor/x/"]}
    )
    assert result.error is not None
    assert "vendor/x/ is a git repository inside the work tree, not a submodule" in result.error
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "ls-files", "-s", "vendor") == ""


# -- t6 #17: a sparse checkout's refusal, said whole ------------------------------------


def test_an_output_outside_the_sparse_checkout_fails_the_commit_naming_git_s_reason(
    tmp_path: Path,
) -> None:
    packet = writes_packet(tmp_path, {"d2/new.txt": "Hello\n"}, {"files_exist": ["d2/new.txt"]})
    repo = tmp_path / "repo"
    for d in ("d1", "d2"):
        (repo / d).mkdir()
        (repo / d / "f").write_text(d)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "dirs")
    git(repo, "sparse-checkout", "set", "d1")
    (repo / "README.md").write_text("wip\n")
    done = cli("run", packet)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "outside of your sparse-checkout definition" in done.stdout
    assert "updated in the index: d2/new.txt; widen the sparse checkout" in done.stdout
    assert "`git sparse-checkout add d2`" in done.stdout
    assert "hint:" not in done.stdout
    assert record(packet)["status"] == "commit_failed"
