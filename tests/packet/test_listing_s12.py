"""A symlink in the prompt directory that cannot be followed (new-user s12 #4).

One looping symlink of any name in ``prompts/`` made every command refuse the
packet as a directory that "cannot be listed", with a fix about permissions.
Now an entry whose name is not a prompt file's or a checklist's is ignored
whatever it is (as a dangling link always was); a prompt file or checklist
that is a broken link is refused in one sentence naming it, and ``packet
lint`` reports it as a finding. ``status``'s light id reader agrees.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.packet import files, prompt_ids_text
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

PROMPTS = {"01": {"verify": {"files_exist": ["a.txt"]}}}


def _one_sentence(done: object) -> str:
    said = getattr(done, "stderr", "").strip()
    assert "Traceback" not in said
    assert said.count("\n") == 0, said
    return said


@pytest.mark.parametrize(
    "command", [("plan",), ("list",), ("packet", "lint"), ("checklist", "sync")]
)
def test_an_unrelated_looping_link_is_ignored_by_every_command(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    (packet / "prompts" / "loop.txt").symlink_to("loop.txt")

    done = cli(*command, packet)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "cannot be listed" not in done.stderr


def test_an_unrelated_looping_link_does_not_stop_a_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    (packet / "prompts" / "notes.md").symlink_to("notes.md")

    done = cli("run", packet)

    assert done.returncode == 0, done.stdout + done.stderr


def test_listing_reads_an_unrelated_looping_link_as_other(tmp_path: Path) -> None:
    (tmp_path / "01_a.prompt.md").write_text("x", encoding="utf-8")
    (tmp_path / "loop.txt").symlink_to("loop.txt")
    (tmp_path / "gone.txt").symlink_to("nowhere")

    assert files.listing(tmp_path) == (
        ("01_a.prompt.md", "f"),
        ("gone.txt", "o"),
        ("loop.txt", "o"),
    )


@pytest.mark.parametrize(
    ("target", "said"),
    [("02_more.prompt.md", "which loops"), ("nowhere.md", "which does not exist")],
)
def test_a_prompt_file_that_is_a_broken_link_is_refused_naming_it(
    tmp_path: Path, target: str, said: str
) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    (packet / "prompts" / "02_more.prompt.md").symlink_to(target)

    for command in (("plan",), ("list",), ("checklist", "sync")):
        done = cli(*command, packet)
        assert done.returncode == 2, (command, done.stdout + done.stderr)
        sentence = _one_sentence(done)
        assert "02_more.prompt.md: is a symbolic link to " + target in sentence, sentence
        assert said in sentence and "fix the link or remove it" in sentence
        assert "permission" not in sentence


def test_lint_reports_a_broken_prompt_link_as_a_finding_on_it(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    (packet / "prompts" / "02_more.prompt.md").symlink_to("02_more.prompt.md")

    done = cli("packet", "lint", packet, "--json")

    assert done.returncode == 1, done.stdout + done.stderr
    findings = json.loads(done.stdout)["findings"]
    assert [(f["kind"], f["file"]) for f in findings if f["severity"] == "error"] == [
        ("packet_load_error", "02_more.prompt.md")
    ], findings
    (finding,) = [f for f in findings if f["severity"] == "error"]
    assert "which loops" in finding["message"] and "fix the link or remove it" in finding["message"]


def test_a_looping_checklist_link_is_refused_naming_it(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    link = packet / "prompts" / "01_step.prompt.checklist.md"
    link.symlink_to(link.name)

    for command in (("checklist", "sync"), ("plan",)):
        done = cli(*command, packet)
        assert done.returncode == 2, (command, done.stdout + done.stderr)
        sentence = _one_sentence(done)
        assert "01_step.prompt.checklist.md: is a symbolic link to" in sentence, sentence
        assert "which loops" in sentence and "fix the link or remove it" in sentence
    linted = cli("packet", "lint", packet)
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert "packet_load_error prompts/01_step.prompt.checklist.md" in linted.stdout
    assert link.is_symlink()


def test_a_dangling_checklist_link_inside_the_packet_is_no_error(tmp_path: Path) -> None:
    # checklist sync writes through it (tests/packet/test_t8_checklist_links.py)
    packet = make_packet(tmp_path, PROMPTS)
    (packet / "prompts" / "01_step.prompt.checklist.md").symlink_to("../views/01.md")

    assert files.link_error(packet / "prompts", "01_step.prompt.checklist.md") is None
    done = cli("plan", packet)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_light_id_reader_agrees_with_the_loader(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    prompts = packet / "prompts"
    (prompts / "loop.txt").symlink_to("loop.txt")
    assert prompt_ids_text.packet_ids(packet) == ({"01"}, None)

    checklist = prompts / "01_step.prompt.checklist.md"
    checklist.symlink_to(checklist.name)
    ids, error = prompt_ids_text.packet_ids(packet)
    assert ids is None and error is not None
    assert "01_step.prompt.checklist.md: is a symbolic link" in error and "loops" in error

    checklist.unlink()
    checklist.symlink_to("../views/01.md")  # dangling: sync writes through it
    assert prompt_ids_text.packet_ids(packet) == ({"01"}, None)


def test_status_warns_of_a_looping_checklist_link(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, PROMPTS)
    checklist = packet / "prompts" / "01_step.prompt.checklist.md"
    checklist.symlink_to(checklist.name)

    done = cli("status", packet)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "01_step.prompt.checklist.md: is a symbolic link" in done.stderr
