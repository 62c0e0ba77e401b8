"""The commands that rewrite a packet file's front matter keep its line ends and BOM.

``control amend --persist``, ``packet add-repo`` and ``packet migrate-contracts
--write`` wrote the edited front matter with LF line ends: a CRLF file came out
mixed (the body still CRLF) or, for ``--persist``, all LF; a BOM was dropped,
and ``--persist`` refused a file with one ("has no YAML front matter"). Now the
front matter is written with the file's own line end, and the BOM, the ``---``
lines and the body are the file's bytes. Each case runs the real CLI on a file
written with CRLF and/or a BOM and compares it, byte for byte, with the same
command's result on the LF file without a BOM.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo

MANIFEST = """---
# the packet's manifest
name: "demo"
profile: "simulated-default"
provider: "simulated"
repos:
  app:
    path: "./repo"  # the app
    default: true
agent_control:
  completion_verify:
    commands:
      - "test -f README.md"
---
# demo

A packet.
"""

PROMPT = """---
id: "01"
name: "Step 01"
targets: ["app"]
# checks follow
verify:
  files_exist:
    - "a.txt"  # made by the step
  commands:
    - "timeout 5 test -f a.txt"
simulate:
  attempts:
    - writes:
        - {path: "a.txt", text: "hello\\n"}
---
# Step 01

Write a.txt.

"""

VARIANTS = {
    "crlf": ("\r\n", ""),
    "crlf-bom": ("\r\n", "\ufeff"),
    "lf-bom": ("\n", "\ufeff"),
}

PROMPT_FILE = "prompts/01_step.prompt.md"
MANIFEST_FILE = "prompt_runner_packet.md"


def _written(text: str, newline: str, bom: str) -> bytes:
    return (bom + text.replace("\n", newline)).encode("utf-8")


def _packet(root: Path, newline: str = "\n", bom: str = "") -> Path:
    packet = root / "packet"
    (packet / "prompts").mkdir(parents=True)
    make_git_repo(packet / "repo")
    make_git_repo(packet / "docs")
    (packet / MANIFEST_FILE).write_bytes(_written(MANIFEST, newline, bom))
    (packet / PROMPT_FILE).write_bytes(_written(PROMPT, newline, bom))
    return packet


def _body(data: bytes) -> bytes:
    """What follows the closing ``---`` line."""
    return data.split(b"\n---", 1)[1].split(b"\n", 1)[1]


COMMANDS = {
    "amend-persist": (
        PROMPT_FILE,
        ("control", "amend", "{packet}", "01", "--add-file", "b.txt", "--reason", "r", "--persist"),
    ),
    "add-repo": (MANIFEST_FILE, ("packet", "add-repo", "docs", "./docs", "--packet", "{packet}")),
    "migrate-prompt": (PROMPT_FILE, ("packet", "migrate-contracts", "{packet}", "--write")),
    "migrate-manifest": (MANIFEST_FILE, ("packet", "migrate-contracts", "{packet}", "--write")),
}


def _run(packet: Path, args: tuple[str, ...]) -> None:
    done = cli(*(a.format(packet=packet) for a in args), cwd=packet)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_a_rewrite_keeps_the_files_line_ends_and_bom(
    tmp_path: Path, command: str, variant: str
) -> None:
    newline, bom = VARIANTS[variant]
    rel, args = COMMANDS[command]
    plain = _packet(tmp_path / "lf")
    _run(plain, args)
    expected = (plain / rel).read_bytes()
    assert expected != _written(PROMPT if rel == PROMPT_FILE else MANIFEST, "\n", "")  # edited

    packet = _packet(tmp_path / variant, newline, bom)
    before = (packet / rel).read_bytes()
    _run(packet, args)
    after = (packet / rel).read_bytes()

    assert after.startswith(bom.encode("utf-8")) and not after[len(bom) :].startswith(b"\xef")
    lines = after.splitlines(keepends=True)
    assert [ln for ln in lines if not ln.endswith(newline.encode())] == []
    if newline == "\n":
        assert b"\r" not in after
    assert _body(after) == _body(before)  # the body untouched
    # the edit itself is the LF file's, line for line
    assert after[len(bom.encode()) :].replace(b"\r\n", b"\n") == expected
    loaded = cli("plan", packet)  # and the packet still loads
    assert loaded.returncode == 0, loaded.stdout + loaded.stderr


def test_an_lf_file_stays_lf_byte_for_byte_outside_the_edit(tmp_path: Path) -> None:
    """The LF baseline: the fences and body are the file's, only the front matter changes."""
    packet = _packet(tmp_path)
    _run(packet, COMMANDS["add-repo"][1])
    after = (packet / MANIFEST_FILE).read_text(encoding="utf-8")
    assert "\r" not in after
    assert after.endswith("---\n# demo\n\nA packet.\n")
    assert '  docs:\n    path: "docs"\n' in after
    assert "# the packet's manifest\n" in after and '"./repo"  # the app\n' in after
