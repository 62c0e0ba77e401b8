"""Two sentences a README-only user met: ``start``/``stop`` on a directory that is
neither a packet nor a manifest names both accepted kinds, and ``packet.path``
leaving its clone is told as "clone-relative" (real CLI)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace

NEITHER = (
    "is neither a packet directory (it holds no prompt_runner_packet.md) nor a workspace manifest"
)


def _line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_start_and_stop_of_a_plain_directory_name_a_packet_too(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    for argv in (("start", "./plain"), ("start", tmp_path / "plain"), ("stop", "plain")):
        done = cli(*argv, cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        line = _line(done.stderr)
        assert line.startswith(f"error: plain: {NEITHER}; pass a packet directory, "), line
        assert "the workspace manifest (workspace.yml), a registered id" in line, line
        assert "not a file" not in line


def test_a_directory_holding_the_manifest_names_it(tmp_path: Path) -> None:
    make_workspace(tmp_path)
    done = cli("start", "ops", "--timeout", "20", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert _line(done.stderr) == (
        f"error: ops: {NEITHER}; pass its workspace manifest (ops/workspace.yml)."
    )


def test_a_packet_path_out_of_its_clone_is_clone_relative(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    doc["packet"]["path"] = "../../etc"
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    done = cli("workspace", "prepare", manifest, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    line = _line(done.stderr)
    assert "packet.path: '../../etc' must be a clone-relative path inside" in line, line
    assert "clone- relative" not in line
