"""A prompt's commit that fails in one of its repos after another was committed.

A ``pre-commit`` hook in ``docs`` refuses the commit of a prompt over ``app``
and ``docs``: ``app`` keeps its commit. The halt must say so (new user t5 #8:
it named only docs), and once the hook is fixed ``run --remaining`` must
record that ``app`` commit as the prompt's and commit the docs work with it,
``progress.log`` naming both (it named only docs, and warned that the
prompt's own d.txt would "stay uncommitted"). A prompt over one repo whose
commit was refused gets its verified work committed on resume as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prompt_runner import api
from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet

_REFUSE = "#!/bin/sh\necho 'HOOK: docs refuses this commit' >&2\nexit 1\n"


def _refuse(repo: Path) -> Path:
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(_REFUSE)
    hook.chmod(0o755)
    return hook


def _two_repo_packet(tmp: Path) -> Path:
    make_git_repo(tmp / "docs")
    writes = [
        {"path": "a.txt", "text": "A\n"},
        {"path": "d.txt", "text": "D\n", "repo": "docs"},
    ]
    return make_packet(
        tmp,
        {
            "01": {
                "targets": ["app", "docs"],
                "commit": "both repos",
                "simulate": {"attempts": [{"writes": writes}]},
                "verify": {"files_exist": ["a.txt", {"path": "d.txt", "repo": "docs"}]},
            },
            "02": {
                "commit": "later",
                "simulate": {"attempts": [{"writes": [{"path": "b.txt", "text": "B\n"}]}]},
                "verify": {"files_exist": ["b.txt"]},
            },
        },
        manifest={
            "repos": {"app": {"path": "../repo", "default": True}, "docs": {"path": "../docs"}}
        },
    )


def _record(packet: Path, prompt_id: str) -> dict[str, Any]:
    record: dict[str, Any] = api.status(packet)["prompts"][prompt_id]
    return record


def _progress(packet: Path) -> list[str]:
    return (packet / ".prompt_runner" / "progress.log").read_text().splitlines()


def _subjects(repo: Path) -> list[str]:
    return git(repo, "log", "--format=%s").splitlines()


def test_the_halt_names_the_commit_made_and_the_resume_links_it(tmp_path: Path) -> None:
    packet = _two_repo_packet(tmp_path)
    app, docs = tmp_path / "repo", tmp_path / "docs"
    hook = _refuse(docs)

    halted = cli("run", packet)
    assert halted.returncode == 3, halted.stdout + halted.stderr
    app_sha = git(app, "rev-parse", "HEAD").strip()
    assert _subjects(app)[0] == "both repos" and _subjects(docs)[0] != "both repos"
    note = (
        f"Its commit was made in repo 'app' ({app_sha[:12]}) and stays there; repo 'docs' got none."
    )
    assert f"  {note}" in halted.stdout  # the ✗ line's
    closing = halted.stdout[halted.stdout.index("Run halted:") :]
    assert note in closing and "the pre-commit hook rejected the commit" in closing
    # the hook's output is quoted once, by the ✗ line, not again by the closing line
    assert halted.stdout.count("HOOK: docs refuses this commit") == 1, halted.stdout
    assert "HOOK: docs refuses this commit" in _record(packet, "01")["commit_error"]
    record = _record(packet, "01")
    assert record["status"] == "commit_failed"
    assert record["commit_info"]["commits"] == {"app": app_sha}

    hook.unlink()  # the operator fixes the hook
    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "stay uncommitted" not in resumed.stdout  # d.txt is the prompt's own work
    assert "its failed commit left uncommitted work (d.txt)" in resumed.stdout
    assert f"its commit {app_sha[:12]} was found in repo 'app'" in resumed.stdout
    docs_sha = git(docs, "rev-parse", "HEAD").strip()
    assert _subjects(docs)[0] == "both repos"
    assert git(docs, "show", "--format=", "--name-only", "HEAD") == "d.txt\n"
    assert _subjects(app)[:2] == ["later", "both repos"]
    assert _subjects(app).count("both repos") == 1 and _subjects(docs).count("both repos") == 1
    assert git(app, "status", "--porcelain") == "" and git(docs, "status", "--porcelain") == ""
    record = _record(packet, "01")
    assert record["status"] == "completed"
    assert record["commit_info"] == {
        "commits": {"app": app_sha, "docs": docs_sha},
        "skipped": False,
    }
    done = [x for x in _progress(packet) if x.startswith("01:completed:")]
    assert len(done) == 1 and done[0].endswith(f":app={app_sha},docs={docs_sha}")


def test_a_refused_single_repo_commit_is_committed_on_resume(tmp_path: Path) -> None:
    """The whole commit refused: no commit is named in the halt; after the fix,
    --remaining commits the verified work (and the session's unnamed helper
    file) as the prompt's commit, without a second session."""
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: 01",
                "simulate": {
                    "attempts": [
                        {
                            "writes": [
                                {"path": "out.txt", "text": "o\n"},
                                {"path": "helper.txt", "text": "h\n"},
                            ]
                        }
                    ]
                },
                "verify": {"files_exist": ["out.txt"]},
            }
        },
    )
    app = tmp_path / "repo"
    hook = _refuse(app)
    halted = cli("run", packet)
    assert halted.returncode == 3, halted.stdout + halted.stderr
    assert "Its commit was made" not in halted.stdout
    hook.unlink()

    resumed = cli("run", packet, "--remaining")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert _subjects(app)[0] == "feat: 01"
    assert git(app, "show", "--format=", "--name-only", "HEAD") == "helper.txt\nout.txt\n"
    assert git(app, "status", "--porcelain") == ""
    sha = git(app, "rev-parse", "HEAD").strip()
    record = _record(packet, "01")
    assert record["status"] == "completed" and len(record["attempts"]) == 1
    assert _progress(packet)[-1].startswith("01:completed:")
    assert _progress(packet)[-1].endswith(":" + sha)
