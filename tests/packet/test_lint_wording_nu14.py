"""Two lint sentences a new user read as wrong (nu14 #10 c, d): a repo named
``packet`` was listed twice among the targets to use, and a contract of
``source_absent`` alone was said to check only that paths exist or changed."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.helpers.cli import cli


def _packet(tmp_path: Path, repo_name: str, prompt: str) -> Path:
    repo = tmp_path / "app"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    packet = tmp_path / "pk"
    (packet / "prompts").mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text(
        "---\nname: pk\nprovider: simulated\nrepos:\n"
        f"  {repo_name}: {{path: ../app, default: true}}\n---\n",
        encoding="utf-8",
    )
    (packet / "prompts" / "01_v.prompt.md").write_text(prompt, encoding="utf-8")
    return packet


def test_a_repo_named_packet_is_offered_once(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path,
        "packet",
        '---\nid: "01"\nname: v\ntargets: [nope]\nverify:\n  files_exist: [a.txt]\n---\n# v\n',
    )
    result = cli("packet", "lint", str(packet))
    assert "unknown_target_repo" in result.stdout, result.stdout
    assert "use one of packet, or declare" in result.stdout, result.stdout
    assert "packet, packet" not in result.stdout


def test_a_source_absent_contract_is_described_as_what_it_checks(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path,
        "app",
        '---\nid: "01"\nname: v\ntargets: [app]\n'
        "verify:\n  source_absent: [{pattern: 'TODO'}]\n---\n# v\n",
    )
    result = cli("packet", "lint", str(packet))
    assert "contract_without_commands" in result.stdout, result.stdout
    assert "exist, changed or lack a pattern (source_absent)" in result.stdout, result.stdout


def test_a_blank_prompt_body_is_a_warning(tmp_path: Path) -> None:
    """nu14 #10 b: a body of only whitespace sent the agent no task, lint silent."""
    packet = _packet(
        tmp_path,
        "app",
        '---\nid: "01"\nname: v\ntargets: [app]\nverify:\n  files_exist: [a.txt]\n---\n\n   \n',
    )
    result = cli("packet", "lint", str(packet))
    assert "empty_prompt_body" in result.stdout, result.stdout
    assert "write the task below the front matter" in result.stdout
