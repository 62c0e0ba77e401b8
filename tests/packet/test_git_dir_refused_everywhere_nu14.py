"""A repo path at a ``.git`` directory is refused by every command that resolves
repos (new-user nu14 #8).

``packet doctor`` and ``run`` refused ``repos.app.path: ../app/.git``, but
``verify`` judged the contracts inside git's own data (``files_exist: [HEAD,
config]`` PASSed, ``files_absent: [README.md]`` too, exit 0), and ``plan``,
``run --dry-run`` and ``packet lint`` passed. Each now refuses it with run's
own sentence (``preflight.refuse_git_dir``): the manifest, the key, the work
tree to point it at. ``list`` never looks inside a repo and starts no ``git``
(its output is kept, cli/kept_output.py), so it lists the prompts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.api import plan, verify
from prompt_runner.api_prompts import list_prompts
from prompt_runner.errors import UserError
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

INSIDE_GIT = {"01": {"verify": {"files_exist": ["HEAD", "config"], "files_absent": ["README.md"]}}}


def packet_at(tmp_path: Path, repo_path: str) -> Path:
    return make_packet(
        tmp_path, INSIDE_GIT, manifest={"repos": {"app": {"path": repo_path, "default": True}}}
    )


def _refusal(tmp_path: Path, where: str) -> list[str]:
    return [
        "demo/prompt_runner_packet.md: repos.app.path: repo 'app' (",
        f") {where}",
        ": git's own data, where the agent's writes would break the repository; ",
        f"point it at the work tree instead: path: '../repo' ({tmp_path / 'repo'}).",
    ]


@pytest.mark.parametrize(
    "command", [("verify",), ("plan",), ("run", "--dry-run"), ("run", "--no-commit")]
)
@pytest.mark.parametrize(
    ("repo_path", "where"),
    [
        ("../repo/.git", "is a git directory"),
        ("../repo/.git/refs", "is inside the git directory /"),
    ],
)
def test_every_command_refuses_a_repo_path_in_a_git_directory(
    tmp_path: Path, command: tuple[str, ...], repo_path: str, where: str
) -> None:
    packet = packet_at(tmp_path, repo_path)
    done = cli(*command, "demo", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stderr.strip()
    assert said.count("\n") == 0 and "Traceback" not in said, said
    assert said.startswith("error: "), said
    for part in _refusal(tmp_path, where):
        assert part in said, said
    assert "PASS" not in done.stdout
    assert not (packet / ".prompt_runner" / "progress.log").exists()


def test_lint_fails_with_the_same_sentence(tmp_path: Path) -> None:
    packet_at(tmp_path, "../repo/.git")
    done = cli("packet", "lint", "demo", "--json", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert not report["pass"]
    [load] = [f for f in report["findings"] if f["kind"] == "packet_load_error"]
    assert load["severity"] == "error" and load["path"] == "prompt_runner_packet.md"
    for part in _refusal(tmp_path, "is a git directory"):
        assert part in load["message"]


def test_doctor_says_it_as_before(tmp_path: Path) -> None:
    packet_at(tmp_path, "../repo/.git")
    done = cli("packet", "doctor", "demo", cwd=tmp_path)
    assert done.returncode == 1 and "runtime NOT ready" in done.stdout
    for part in _refusal(tmp_path, "is a git directory"):
        assert part in done.stdout


def test_the_library_refuses_too(tmp_path: Path) -> None:
    packet = packet_at(tmp_path, "../repo/.git")
    refused = r"repos\.app\.path: .* is a git directory"
    with pytest.raises(UserError, match=refused):
        verify(packet)
    with pytest.raises(UserError, match=refused):
        plan(packet)
    assert [p.id for p in list_prompts(packet).prompts] == ["01"]  # list reads no repo


def test_a_work_tree_path_still_verifies(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    done = cli("verify", packet)
    assert done.returncode == 0 and "PASS 01" in done.stdout, done.stdout + done.stderr
