"""Preflight: contract paths inside a submodule are refused, a detached HEAD is a warning."""

from __future__ import annotations

import subprocess
from pathlib import Path

from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.preflight import preflight_report
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_a_repo_below_the_work_tree_root_is_checked_against_the_root_s_submodules(
    tmp_path: Path,
) -> None:
    lib = make_git_repo(tmp_path / "libsrc", {"lib.txt": "l\n"})
    root = make_git_repo(tmp_path / "mono", {"web/README.md": "w\n"})
    git(root, "submodule", "add", "-q", str(lib), "web/vendor/lib")
    git(root, "commit", "-qm", "add lib")
    packet = make_packet(
        tmp_path,
        {
            "01": {"targets": ["web"], "verify": {"files_exist": ["README.md", "vendor/lib/x"]}},
            "02": {
                "targets": ["web"],
                "verify": {"contains": [{"path": "vendor/library.txt", "text": "x"}]},
            },
        },
        manifest={"repos": {"web": {"path": "../mono/web", "default": True}}},
        repo=False,
    )
    loaded = load_packet(packet)
    report = preflight_report(loaded)
    refused = [e for e in report["readiness_errors"] if e["scope"] == "prompt"]
    assert [(e["name"], e["key"], e["path"]) for e in refused] == [
        ("01", "verify.files_exist[1]", "vendor/lib/x")
    ]  # 02's vendor/library.txt only shares a prefix with the submodule
    assert "inside git submodule 'web/vendor/lib' of repo 'web'" in refused[0]["reason"]
    assert not report["runtime_ready"]
    assert preflight_report(loaded, prompts=["02"])["runtime_ready"]  # only what runs is judged
    assert preflight_report(loaded, needs_git=False, prompts=["01"])["runtime_ready"]


def test_a_detached_head_is_a_warning_not_an_error(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    report = preflight_report(packet)
    assert report["warnings"] == [] and report["runtime_ready"]
    git(tmp_path / "repo", "checkout", "-q", "--detach")
    report = preflight_report(packet)
    assert report["runtime_ready"]
    (warning,) = report["warnings"]
    assert warning["kind"] == "detached_head" and warning["name"] == "app"
    assert "is on a detached HEAD" in warning["message"]
