"""The reference's multi-repo packet gives Codex its sibling repo (reads ../shared).

Its manifest names ``codex_thread_opts.additional_directories: ["./repos/beta"]``
(the multi-repo guide's way); ``plan --json`` and ``run --dry-run`` show the
``--add-dir`` Codex would be started with, for the prompt that targets only
``alpha`` too.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "reference-packets"

pytestmark = pytest.mark.compat


@pytest.fixture
def multi_repo(tmp_path: Path) -> Path:
    source = SHARED / "multi_repo_packet"
    if not source.is_dir():
        pytest.skip(f"skipped: reference packet {source} is not present (../shared absent)")
    packet = tmp_path / "multi_repo_packet"
    shutil.copytree(source, packet)
    for repo in ("alpha", "beta"):
        make_git_repo(packet / "repos" / repo)
    return packet


def add_dirs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "--add-dir"]


def test_plan_json_shows_add_dir_for_the_sibling_repo(multi_repo: Path) -> None:
    proc = cli("plan", multi_repo, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    beta = str((multi_repo / "repos" / "beta").resolve())
    by_id = {p["id"]: p for p in doc["prompts"]}
    assert by_id["02"]["targets"] == ["alpha"]
    for prompt in by_id.values():
        assert prompt["cwd"] == str((multi_repo / "repos" / "alpha").resolve())
        assert add_dirs(prompt["argv"]) == [beta]  # once, though 01 also targets beta
        assert prompt["argv"][:3] == ["codex", "exec", "--json"]


def test_run_dry_run_shows_add_dir_for_the_sibling_repo(multi_repo: Path) -> None:
    beta = str((multi_repo / "repos" / "beta").resolve())
    proc = cli("run", multi_repo, "--dry-run")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    launches = [line for line in proc.stdout.splitlines() if line.startswith("  launch: ")]
    assert len(launches) == 2
    assert all(f"--add-dir {beta} " in line for line in launches)
    proc = cli("run", multi_repo, "--dry-run", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["dry_run"] is True
    assert [add_dirs(p["argv"]) for p in doc["prompts"]] == [[beta], [beta]]
