"""Hidden files in the prompt directory are no prompts (new-user nu14 #4).

Editors and systems leave dot-files beside the prompts: Emacs's lock file
``.#01_a.prompt.md`` (a symlink to ``user@host.pid:time`` that dangles), macOS's
AppleDouble ``._01_a.prompt.md`` (binary). They were loaded as prompts, so every
command refused the packet (a dangling link, "not valid UTF-8"), and a hidden
``.05_x.prompt.md`` ran as prompt 05. Now every reader of ``prompts/`` lists by
one rule (``prompt_ids_text.is_prompt_file_name``) that leaves dot-files out,
and ``packet lint`` warns about a dot-file named like a prompt
(``hidden_prompt_file``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.packet import files, prompt_ids_text
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet, write_front_matter

PROMPTS = {"01": {"verify": {"files_exist": ["README.md"]}}}
APPLE_DOUBLE = b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        \x00\x02\xff\xff"


def _droppings(prompts: Path) -> None:
    """What an editor and a Mac leave beside ``01_step.prompt.md``, and a hidden prompt."""
    (prompts / ".#01_step.prompt.md").symlink_to("user@host.4242:1700000000")
    (prompts / ".#01_step.prompt.checklist.md").symlink_to(".#01_step.prompt.checklist.md")
    (prompts / "._01_step.prompt.md").write_bytes(APPLE_DOUBLE)
    write_front_matter(
        prompts / ".05_x.prompt.md",
        {"id": "05", "name": "Concealed", "targets": ["app"], "verify": {"files_exist": ["x"]}},
        "# Concealed\n",
    )


@pytest.fixture
def packet(tmp_path: Path) -> Path:
    made = make_packet(tmp_path, PROMPTS)
    _droppings(made / "prompts")
    return made


@pytest.mark.parametrize(
    "command",
    [
        ("list",),
        ("plan",),
        ("verify",),
        ("packet", "doctor"),
        ("checklist", "sync"),
        ("status",),
        ("run", "--no-commit"),
    ],
)
def test_hidden_files_are_ignored_by_every_command(packet: Path, command: tuple[str, ...]) -> None:
    done = cli(*command, packet)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "symbolic link" not in done.stderr and "UTF-8" not in done.stderr
    assert "Concealed" not in done.stdout and " 05 " not in done.stdout


def test_list_and_plan_name_only_the_visible_prompt(packet: Path) -> None:
    listed = json.loads(cli("list", packet, "--json").stdout)
    assert [p["id"] for p in listed["prompts"]] == ["01"]
    planned = json.loads(cli("plan", packet, "--json").stdout)
    assert [p["id"] for p in planned["prompts"]] == ["01"]
    assert not (packet / "prompts" / ".05_x.prompt.checklist.md").exists()


def test_lint_warns_about_a_hidden_prompt_only(packet: Path) -> None:
    done = cli("packet", "lint", packet, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    hidden = [f for f in report["findings"] if f["kind"] == "hidden_prompt_file"]
    assert [(f["path"], f["severity"]) for f in hidden] == [("prompts/.05_x.prompt.md", "warning")]
    assert "rename it to 05_x.prompt.md" in hidden[0]["message"]
    assert report["pass"] and report["errors"] == 0
    # the droppings are no findings: not loaded, not warned about
    assert not [f for f in report["findings"] if f["path"].startswith("prompts/.#")]
    assert not [f for f in report["findings"] if f["path"].startswith("prompts/._")]


def test_prompt_new_takes_the_id_of_a_hidden_prompt(packet: Path) -> None:
    done = cli("prompt", "new", "--packet", packet, "5", "--name", "five")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (packet / "prompts" / "05_five.prompt.md").is_file()


def test_the_text_readers_and_the_listing_agree(packet: Path) -> None:
    """``status``/``watch``'s light id reader and the loader's listing."""
    assert prompt_ids_text.packet_ids(packet) == ({"01"}, None)
    assert prompt_ids_text.prompt_file_names(str(packet / "prompts")) == ["01_step.prompt.md"]
    entries = files.listing(packet / "prompts")  # no link error raised
    assert files.prompt_names(entries) == [("01_step.prompt.md", False)]
    assert files.hidden_prompt_names(entries) == [".05_x.prompt.md"]
