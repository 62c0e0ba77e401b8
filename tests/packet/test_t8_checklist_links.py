"""``checklist sync`` never overwrites a file that is not the checklist (new-user
t8 #5): a symlink to another packet file (its own prompt) used to be written
through, and a hard link to a file outside the packet was written in place."""

from __future__ import annotations

import os
from pathlib import Path

import prompt_runner
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

PROMPTS = {"01": {"verify": {"files_exist": ["a.txt"]}}}


def test_a_checklist_linked_to_its_own_prompt_is_refused(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    prompt = packet / "prompts" / "01_step.prompt.md"
    before = prompt.read_text(encoding="utf-8")
    link = packet / "prompts" / "01_step.prompt.checklist.md"
    link.symlink_to("01_step.prompt.md")

    done = cli("checklist", "sync", packet)

    assert done.returncode == 2, done.stdout + done.stderr
    said = done.stderr.strip()
    assert said.count("\n") == 0 and "Traceback" not in said
    assert "01_step.prompt.checklist.md" in said and "not a checklist" in said
    assert prompt.read_text(encoding="utf-8") == before
    assert link.is_symlink()


def test_a_checklist_linked_to_the_manifest_is_refused_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {**PROMPTS, "02": {"verify": {"files_exist": ["b"]}}})
    manifest = packet / "prompt_runner_packet.md"
    before = manifest.read_text(encoding="utf-8")
    (packet / "prompts" / "02_step.prompt.checklist.md").symlink_to(manifest)
    try:
        prompt_runner.checklist_sync(packet)
    except prompt_runner.UserError as exc:
        assert "not a checklist" in str(exc)
    else:
        raise AssertionError("checklist_sync wrote through a link to the manifest")
    assert manifest.read_text(encoding="utf-8") == before
    assert not (packet / "prompts" / "01_step.prompt.checklist.md").exists()


def test_a_checklist_hard_linked_outside_the_packet_is_replaced_not_written_in_place(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    rc_file = tmp_path / "bashrc"
    rc_file.write_text("export IMPORTANT=1\n", encoding="utf-8")
    checklist = packet / "prompts" / "01_step.prompt.checklist.md"
    os.link(rc_file, checklist)

    done = cli("checklist", "sync", packet)

    assert done.returncode == 0, done.stdout + done.stderr
    assert rc_file.read_text(encoding="utf-8") == "export IMPORTANT=1\n"
    assert "- [ ] file exists: a.txt" in checklist.read_text(encoding="utf-8")
    assert checklist.stat().st_nlink == 1 and not checklist.is_symlink()
    assert not [p.name for p in checklist.parent.iterdir() if p.name.startswith(".")]


def test_a_checklist_linked_to_another_checklist_inside_the_packet_is_written_through(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    (packet / "views").mkdir()
    real = packet / "views" / "01.prompt.checklist.md"
    link = packet / "prompts" / "01_step.prompt.checklist.md"
    link.symlink_to(real)

    prompt_runner.checklist_sync(packet)

    assert link.is_symlink()
    assert "- [ ] file exists: a.txt" in real.read_text(encoding="utf-8")
