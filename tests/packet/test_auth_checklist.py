"""``checklist sync`` writes only inside the packet, and no value starts a line."""

from __future__ import annotations

from pathlib import Path

import prompt_runner
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_sync_refuses_a_checklist_linked_outside_the_packet(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}})
    rc_file = tmp_path / "fake_bashrc"
    rc_file.write_text("export IMPORTANT=1\n", encoding="utf-8")
    link = packet / "prompts" / "01_step.prompt.checklist.md"
    link.symlink_to(rc_file)

    done = cli("checklist", "sync", packet)

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "01_step.prompt.checklist.md" in done.stderr
    assert str(rc_file) in done.stderr  # where the link points
    assert rc_file.read_text(encoding="utf-8") == "export IMPORTANT=1\n"
    assert link.is_symlink()


def test_sync_writes_nothing_when_any_checklist_leaves_the_packet(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["a.txt"]}}, "02": {"verify": {"files_exist": ["b"]}}},
    )
    outside = tmp_path / "outside.md"
    outside.write_text("mine\n", encoding="utf-8")
    (packet / "prompts" / "02_step.prompt.checklist.md").symlink_to(outside)

    try:
        prompt_runner.checklist_sync(packet)
    except prompt_runner.UserError as exc:
        assert "outside the packet" in str(exc)
    else:
        raise AssertionError("checklist_sync wrote through a link leaving the packet")
    assert not (packet / "prompts" / "01_step.prompt.checklist.md").exists()
    assert outside.read_text(encoding="utf-8") == "mine\n"


def test_sync_writes_through_a_link_inside_the_packet(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}})
    (packet / "views").mkdir()
    inside = packet / "views" / "01.prompt.checklist.md"
    (packet / "prompts" / "01_step.prompt.checklist.md").symlink_to(inside)

    prompt_runner.checklist_sync(packet)

    assert "- [ ] file exists: a.txt" in inside.read_text(encoding="utf-8")


def test_a_newline_in_a_contract_path_cannot_forge_a_checked_item(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "name": "two\n# lines",
                "verify": {"files_exist": ["f.txt", "a\n- [x] all tests pass"]},
            }
        },
    )

    done = cli("checklist", "sync", packet)

    assert done.returncode == 0, done.stderr
    text = (packet / "prompts" / "01_step.prompt.checklist.md").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert "- [x] all tests pass" not in lines
    assert not any(line.startswith("- [x]") for line in lines)
    assert "- [ ] file exists: a\\n- [x] all tests pass" in lines
    assert lines[0] == "# Checklist 01: two\\n# lines"
    assert "# lines" not in lines
