"""A control character in a file name (a newline, a tab) is shown escaped in the
uncommitted-changes warning and the adoption line, never splitting them (t6 #21)."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.runner.shown import listed, one_line
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

NEWLINE_NAME = "new\nline.txt"


def hook(repo: Path, body: str) -> Path:
    path = repo / ".git" / "hooks" / "pre-commit"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def said_lines(text: str, needle: str) -> list[str]:
    return [line for line in text.splitlines() if needle in line]


# -- 3. control characters in file names never split a line (t6 #21) ----------------


def test_one_line_escapes_every_control_character() -> None:
    assert one_line("new\nline.txt") == "new\\x0aline.txt"
    assert one_line("a\tb\r\nc\x1b[2J") == "a\\x09b\\x0d\\x0ac\\x1b[2J"
    assert one_line("café.txt") == "café.txt"
    assert listed([f"{i}\n" for i in range(9)]).endswith("7\\x0a ...")


def test_a_newline_in_a_dirty_file_name_stays_on_the_warning_s_line(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "Hello\n"}]}]},
                "verify": {"contains": [{"path": "a.txt", "text": "Hello"}]},
            }
        },
    )
    repo = tmp_path / "repo"
    (repo / NEWLINE_NAME).write_text("z")
    (repo / "esc\x1b[2Jclear.txt").write_text("z")
    done = cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    warning = said_lines(done.stdout, "already has uncommitted changes")
    assert len(warning) == 1, done.stdout
    assert "new\\x0aline.txt" in warning[0]
    assert "esc\\x1b[2Jclear.txt" in warning[0]
    assert not any(line.startswith("line.txt") for line in done.stdout.splitlines())


def test_a_newline_in_adopted_work_s_name_stays_on_the_adoption_line(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "feat: a",
                "recovery": {"repair": {"max_attempts": 0}},
                "simulate": {
                    "attempts": [
                        {
                            "writes": [
                                {"path": "a.txt", "text": "Hello\n"},
                                {"path": NEWLINE_NAME, "text": "z\n"},
                            ]
                        }
                    ]
                },
                "verify": {"contains": [{"path": "a.txt", "text": "Hello"}]},
            }
        },
    )
    repo = tmp_path / "repo"
    path = hook(repo, "exit 1")  # the commit is refused: its work stays uncommitted
    first = cli("run", packet)
    assert first.returncode == 3, first.stdout + first.stderr
    path.unlink()
    again = cli("run", packet, "--remaining")
    assert again.returncode == 0, again.stdout + again.stderr
    adoption = said_lines(again.stdout, "left uncommitted work (")
    assert len(adoption) == 1, again.stdout
    assert "a.txt, new\\x0aline.txt);" in adoption[0]
    assert not any(line.startswith("line.txt") for line in again.stdout.splitlines())
