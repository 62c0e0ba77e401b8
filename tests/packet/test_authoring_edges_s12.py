"""Authoring edges a new user met in session 12 (helper findings): ``prompt new``
into a packet whose ``prompts`` is a file is bad input (exit 2, was 3), ``plan``
prints a name holding a line break on one line, and ``checklist_sync`` on a
packet loaded before its checklist became a looping link refuses it in one
sentence (Python 3.11's ``resolve`` raised ``RuntimeError``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_prompt_new_into_a_prompts_file_is_bad_input(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    for child in (packet / "prompts").iterdir():
        child.unlink()
    (packet / "prompts").rmdir()
    (packet / "prompts").write_text("not a directory\n", encoding="utf-8")
    done = cli("prompt", "new", "02", "--packet", packet)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is a file where the prompt directory should be" in done.stderr, done.stderr
    assert (packet / "prompts").read_text(encoding="utf-8") == "not a directory\n"


def test_plan_shows_a_name_with_a_line_break_on_one_line(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"name": "two\nlines"}})
    done = cli("plan", packet)
    assert done.returncode == 0, done.stderr
    [line] = [row for row in done.stdout.splitlines() if row.startswith("  01 ")]
    assert line.startswith("  01 two\\x0alines: "), line


def test_checklist_sync_refuses_a_checklist_link_that_loops_after_the_load(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    loaded = load_packet(packet)
    [prompt_file] = (packet / "prompts").glob("01_*.prompt.md")
    checklist = prompt_file.with_name(
        prompt_file.name.replace(".prompt.md", ".prompt.checklist.md")
    )
    os.symlink(checklist.name, checklist)  # a link to itself
    with pytest.raises(UserError, match="is a symbolic link that loops"):
        prompt_runner.checklist_sync(loaded)
