"""`packet lint --json` carries the reference system's keys beside ours (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.packet._packets import cli, make_packet


def test_lint_json_has_the_reference_keys(tmp_path: Path) -> None:
    packet = make_packet(tmp_path / "demo")
    doc = json.loads(cli("packet", "lint", str(packet), "--json", "--strict").stdout)
    assert doc["strict?"] is True and doc["strict"] is True
    assert doc["pass?"] == doc["pass"]
    assert doc["no_commit?"] is False and doc["no_commit"] is False
    manifest = packet / "prompt_runner_packet.md"
    manifest.write_text(manifest.read_text().replace("---\n", "---\ncommitter: noop\n", 1))
    doc = json.loads(cli("packet", "lint", str(packet), "--json").stdout)
    assert doc["no_commit?"] is True and doc["strict?"] is False
