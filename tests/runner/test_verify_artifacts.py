"""What a verify command writes is not the prompt's work (new user t5 #7).

README: the commit holds "the paths its sessions changed, plus dirty paths its
contract names as outputs". A ``coverage.xml`` or ``.cache/`` a verify command
leaves is neither: it is not committed, not counted by ``changed_paths_only``
(nor a repair told to delete it), and stays in the work tree as the user's
``.gitignore`` decides -- unless a session changed it too, or the contract
names it as an output (``regenerates:`` outputs are committed). Real runs of
the CLI, real git, real ``sh`` commands.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from prompt_runner.committer import GitCommitter
from prompt_runner.providers.base import SessionResult
from prompt_runner.runner.attempt_record import begin_attempt
from prompt_runner.runner.judging import judge_workspace
from prompt_runner.runner.session import SessionOutcome
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.runner._steps import open_steps, step_context

ARTIFACTS = "echo coverage > coverage.xml; mkdir -p .cache && echo c > .cache/x"
NO_REPAIR = {"repair": {"max_attempts": 0}}


def sh(script: str, **extra: Any) -> dict[str, Any]:
    return {"exec": "sh", "args": ["-c", script], **extra}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def files_of(repo: Path, rev: str = "HEAD") -> list[str]:
    return sorted(git(repo, "show", "--name-only", "--format=", rev).split())


def status(repo: Path) -> list[str]:
    return sorted(git(repo, "status", "--porcelain", "-uall").splitlines())


def writes(*paths: str, text: str = "x\n") -> dict[str, Any]:
    return {"attempts": [{"writes": [{"path": p, "text": text} for p in paths]}]}


def details(docs: Any) -> list[str]:
    """Every ``details`` sentence anywhere in ``docs`` (JSON values)."""
    out: list[str] = []
    stack = list(docs)
    while stack:
        doc = stack.pop()
        if isinstance(doc, dict):
            out.extend(v for k, v in doc.items() if k == "details" and isinstance(v, str))
            stack.extend(doc.values())
        elif isinstance(doc, list):
            stack.extend(doc)
    return out


def test_a_verify_command_s_files_stay_uncommitted_on_a_clean_tree(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "simulate": writes("a.txt"),
                "verify": {"files_exist": ["a.txt"], "commands": [sh(ARTIFACTS)]},
            }
        },
    )
    repo = tmp_path / "repo"
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert files_of(repo) == ["a.txt"]  # was: .cache/x, a.txt, coverage.xml
    assert status(repo) == ["?? .cache/x", "?? coverage.xml"]


def test_a_verify_command_s_files_stay_uncommitted_on_a_dirty_tree(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "simulate": writes("a.txt"),
                "verify": {"files_exist": ["a.txt"], "commands": [sh(ARTIFACTS)]},
            }
        },
    )
    repo = tmp_path / "repo"
    (repo / "user_notes.txt").write_text("mine\n")
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert files_of(repo) == ["a.txt"]
    assert status(repo) == ["?? .cache/x", "?? coverage.xml", "?? user_notes.txt"]


def test_changed_paths_only_never_counts_a_verify_command_s_file_across_repairs(
    tmp_path: Path,
) -> None:
    """The first verification writes coverage.xml, the repair's rewrites it:
    neither counts, no repair is told to delete it, and it is not committed."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "simulate": {
                    "attempts": [
                        {"writes": [{"path": "f.txt", "text": "draft\n"}]},
                        {"writes": [{"path": "f.txt", "text": "done\n"}]},
                    ]
                },
                "verify": {
                    "contains": [{"path": "f.txt", "text": "done"}],
                    "commands": [sh("echo c$$ > coverage.xml")],
                    "changed_paths_only": ["f.txt"],
                },
                "recovery": {"repair": {"max_attempts": 1}},
            }
        },
    )
    repo = tmp_path / "repo"
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "coverage.xml" not in proc.stdout
    record = (packet / ".prompt_runner" / "prompts" / "01.jsonl").read_text()
    told = details(json.loads(line) for line in record.splitlines() if line.strip())
    assert any("f.txt" in d for d in told), told  # the verdicts are recorded
    assert not [d for d in told if "coverage.xml" in d]  # no verdict names it
    assert "(repair)" in proc.stdout  # the first attempt failed on contains alone
    assert files_of(repo) == ["f.txt"]
    assert status(repo) == ["?? coverage.xml"]


def test_a_file_a_session_changed_counts_though_a_verify_command_rewrote_it(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": writes("f.txt", "coverage.xml"),
                "verify": {
                    "commands": [sh("echo c > coverage.xml")],
                    "changed_paths_only": ["f.txt"],
                },
                "recovery": NO_REPAIR,
            }
        },
    )
    proc = cli("run", packet)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "changed outside the allowed set: coverage.xml (allowed: f.txt)" in proc.stdout


def test_a_session_s_file_a_verify_command_rewrote_is_committed(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "simulate": writes("gen.txt"),
                "verify": {"commands": [sh("echo generated > gen.txt; echo c > coverage.xml")]},
            }
        },
    )
    repo = tmp_path / "repo"
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert files_of(repo) == ["gen.txt"]
    assert git(repo, "show", "HEAD:gen.txt") == "generated\n"  # what verification left
    assert status(repo) == ["?? coverage.xml"]


def test_regenerates_outputs_are_the_prompt_s_work_and_committed(tmp_path: Path) -> None:
    """The session wrote only src.txt; the ``regenerates:`` command writes
    out/figure.txt (and a cache): the figure is committed, the cache is not,
    and changed_paths_only judges the figure."""
    command = sh(
        "mkdir -p out .cache && echo fig$$ > out/figure.txt && echo c > .cache/x",
        regenerates=["out/figure.txt"],
    )
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "simulate": writes("src.txt"),
                "verify": {"commands": [command], "changed_paths_only": ["src.txt", "out"]},
                "recovery": NO_REPAIR,
            },
            "02": {
                "commit": "c02",
                "simulate": writes("src2.txt"),
                "verify": {"commands": [command], "changed_paths_only": ["src2.txt"]},
                "recovery": NO_REPAIR,
            },
        },
    )
    repo = tmp_path / "repo"
    proc = cli("run", packet, "--keep-going")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert files_of(repo) == ["out/figure.txt", "src.txt"]
    assert git(repo, "log", "-1", "--format=%s").strip() == "c01"
    # 02's regenerated figure is its work too: outside its allowed set, it fails
    assert "changed outside the allowed set: out/figure.txt (allowed: src2.txt)" in proc.stdout
    assert ".cache" not in proc.stdout
    assert status(repo) == [" M out/figure.txt", "?? .cache/x", "?? src2.txt"]


def test_an_output_the_contract_names_is_committed_though_a_command_wrote_it(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "simulate": writes("a.txt"),
                "verify": {
                    "files_exist": ["a.txt", "report.txt"],
                    "commands": [sh("echo r > report.txt; echo c > coverage.xml")],
                },
            }
        },
    )
    repo = tmp_path / "repo"
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert files_of(repo) == ["a.txt", "report.txt"]
    assert status(repo) == ["?? coverage.xml"]


def test_the_next_prompt_does_not_take_an_earlier_verification_s_files(tmp_path: Path) -> None:
    """01's verification leaves coverage.xml after its snapshot: the tree the
    next prompt starts from includes it, so 02 (no commands) neither commits
    it nor counts it."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "simulate": writes("a.txt"),
                "verify": {"files_exist": ["a.txt"], "commands": [sh(ARTIFACTS)]},
            },
            "02": {
                "commit": "c02",
                "simulate": writes("b.txt"),
                "verify": {"files_exist": ["b.txt"], "changed_paths_only": ["b.txt"]},
                "recovery": NO_REPAIR,
            },
        },
    )
    repo = tmp_path / "repo"
    proc = cli("run", packet)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert files_of(repo, "HEAD~1") == ["a.txt"]
    assert files_of(repo, "HEAD") == ["b.txt"]
    assert status(repo) == ["?? .cache/x", "?? coverage.xml"]


def test_judge_workspace_sees_the_session_before_the_verify_command(tmp_path: Path) -> None:
    """A session that changed nothing, a command that writes: the session did
    not change the workspace, touched nothing, and is never committed whole
    (the verdict's snapshot, taken after verifying, shows the command's file)."""
    ctx = step_context(
        tmp_path,
        {"01": {"verify": {"commands": [sh("echo c > coverage.xml")]}}},
        committer=GitCommitter(),
    )
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    verdict = judge_workspace(ctx, loop, attempt, SessionOutcome(SessionResult(ok=True), "s", 0, 0))
    assert verdict.report.passed
    assert verdict.changed is False
    assert loop.touched == {}
    assert verdict.after is not None
    assert [row.path for row in verdict.after["app"].rows] == ["coverage.xml"]


def test_a_hook_rewrite_is_verified_again_without_counting_the_verify_command_s_files(
    tmp_path: Path,
) -> None:
    """A pre-commit hook that rewrites the prompt's file makes the runner verify the
    committed work again; that second verdict, too, judges ``changed_paths_only``
    on the prompt's own paths, not on the ``coverage.xml`` its command left
    (it recorded commit_failed, exit 3, once the artifact was no longer committed)."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "c01",
                "recovery": {"repair": {"max_attempts": 0}},
                "simulate": {"attempts": [{"writes": [{"path": "f.txt", "text": "x\n"}]}]},
                "verify": {
                    "files_exist": ["f.txt"],
                    "commands": [{"exec": "sh", "args": ["-c", "echo c > coverage.xml"]}],
                    "changed_paths_only": ["f.txt"],
                },
            }
        },
    )
    repo = tmp_path / "repo"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text('#!/bin/sh\necho "# hooked" >> f.txt\ngit add f.txt\n')
    hook.chmod(0o755)
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verified again, the contract still holds" in done.stdout
    shown = subprocess.run(
        ["git", "show", "--name-only", "--format=", "HEAD"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert shown == ["f.txt"]
    assert (repo / "coverage.xml").exists()  # left in the work tree, uncommitted
