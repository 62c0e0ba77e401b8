"""workspace import-state: one-time, only the latest completed record per prompt, refusals."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import InfrastructureError, UserError
from prompt_runner.workspace.runspec import run_command
from tests.helpers.cli import cli
from tests.helpers.workspaces import default_prompts, make_workspace, tree_digest

SOURCE_LINES = (
    "01:completed:2025-01-01T00:00:00Z:no_commit\n"
    "01:failed:2025-01-01T00:01:00Z\n"  # latest is failed: not imported
    "02:failed:2025-01-01T00:02:00Z\n"
    "02:completed:2025-01-01T00:03:00Z:no_commit\n"  # latest is completed: imported
    "03:running:2025-01-01T00:04:00Z\n"  # never marked complete
)


@pytest.fixture
def prepared(tmp_path: Path) -> tuple[Path, Path]:
    """(manifest, the author's packet with a packet-local progress.log)."""
    prompts = default_prompts()
    prompts["03"] = {"targets": ["app"], "verify": {"files_exist": ["README.md"]}}
    manifest = make_workspace(tmp_path, prompts=prompts)
    prompt_runner.prepare_workspace(manifest)
    packet = tmp_path / "author" / "app" / "packets" / "demo"
    (packet / ".prompt_runner").mkdir()
    (packet / ".prompt_runner" / "progress.log").write_text(SOURCE_LINES)
    return manifest, packet


@contextmanager
def live_lock(pid_file: Path) -> Iterator[None]:
    """A real other process holding the run lock ``pid_file`` (as a live runner does)."""
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from prompt_runner.state.lock import RunLock\n"
        "lock = RunLock(Path(sys.argv[1])); lock.acquire()\n"
        "print('held', flush=True); time.sleep(60)\n"
    )
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(pid_file)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.kill()
        holder.wait()
        assert holder.stdout is not None
        holder.stdout.close()


def test_imports_only_the_latest_completed_record_with_a_receipt(
    prepared: tuple[Path, Path],
) -> None:
    manifest, packet = prepared
    ws = prompt_runner.load_workspace(manifest)
    receipt = prompt_runner.import_workspace_state(manifest)  # default: the packet's source
    assert receipt.imported == ("02",)
    assert receipt.skipped == {"01": "failed", "03": "running"}
    source = packet / ".prompt_runner" / "progress.log"
    assert receipt.source == source
    assert receipt.source_sha256 == hashlib.sha256(source.read_bytes()).hexdigest()
    doc = json.loads(receipt.receipt.read_text())
    assert doc["schema"] == "prompt_runner.workspace.import/v1"
    assert doc["source_sha256"] == receipt.source_sha256
    assert doc["policy"] == "latest_completed_only"
    assert [i["id"] for i in doc["imported"]] == ["02"]
    assert receipt.receipt.parent == ws.runtime_root / "imports"
    lines = (ws.state_dir / "progress.log").read_text().splitlines()
    assert lines == ["02:completed:2025-01-01T00:03:00Z:no_session"]
    assert source.read_text() == SOURCE_LINES  # the source is only read
    status = prompt_runner.workspace_status(ws)
    assert status["prompts"]["completed"] == 1 and status["state"] == "stopped"
    # the workspace's run picks up from there: --remaining runs 01 and 03, not 02
    cmd = run_command(ws, remaining=True)
    done = subprocess.run(
        cmd.argv, cwd=cmd.cwd, env=cmd.full_env(os.environ), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    after = (ws.state_dir / "progress.log").read_text().splitlines()
    assert after[0] == lines[0] and sorted(line.split(":")[0] for line in after) == [
        "01",
        "02",
        "03",
    ]  # 02 ran no session again
    assert all(line.split(":")[1] == "completed" for line in after)
    assert not (ws.packet_dir / ".prompt_runner").exists()


def test_refuses_existing_progress_and_writes_nothing(prepared: tuple[Path, Path]) -> None:
    manifest, packet = prepared
    ws = prompt_runner.load_workspace(manifest)
    prompt_runner.import_workspace_state(ws, packet)
    before = tree_digest(ws.runtime_root)
    with pytest.raises(UserError, match="already has progress; import-state is a one-time"):
        prompt_runner.import_workspace_state(ws, packet)
    done = cli("workspace", "import-state", manifest, packet)
    assert done.returncode == 2 and "one-time bridge" in done.stderr
    assert tree_digest(ws.runtime_root) == before


def test_refuses_a_live_run_of_the_workspace_or_the_source(prepared: tuple[Path, Path]) -> None:
    manifest, packet = prepared
    ws = prompt_runner.load_workspace(manifest)
    with live_lock(ws.state_dir / "run.pid"):
        before = tree_digest(ws.runtime_root)
        with pytest.raises(InfrastructureError, match=r"a live run .* holds its state"):
            prompt_runner.import_workspace_state(ws, packet)
        done = cli("workspace", "import-state", manifest, packet)
        assert done.returncode == 3 and "stop it before importing" in done.stderr
        assert tree_digest(ws.runtime_root) == before
    with (
        live_lock(packet / ".prompt_runner" / "run.pid"),
        pytest.raises(InfrastructureError, match="still writing this progress"),
    ):
        prompt_runner.import_workspace_state(ws, packet)
    assert not (ws.state_dir / "progress.log").exists()
    # the holders are gone (their lock files stale): the import now works
    assert prompt_runner.import_workspace_state(ws, packet).imported == ("02",)


def test_refuses_prompts_the_packet_lacks_and_a_source_with_nothing_completed(
    prepared: tuple[Path, Path], tmp_path: Path
) -> None:
    manifest, _packet = prepared
    ws = prompt_runner.load_workspace(manifest)
    stray = tmp_path / "stray.log"
    stray.write_text("01:completed:2025-01-01T00:00:00Z\n99:completed:2025-01-01T00:00:00Z\n")
    with pytest.raises(UserError, match="does not have: 99"):
        prompt_runner.import_workspace_state(ws, stray)
    stray.write_text("01:failed:2025-01-01T00:00:00Z\n")
    with pytest.raises(UserError, match="holds no completed prompt"):
        prompt_runner.import_workspace_state(ws, stray)
    stray.write_text("not a progress line\n")
    with pytest.raises(UserError, match="line 1 is not ID:STATUS"):
        prompt_runner.import_workspace_state(ws, stray)
    assert not (ws.state_dir / "progress.log").exists()
    assert not ws.layout.imports_dir.exists()
