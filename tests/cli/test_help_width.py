"""The parsers' help is wrapped to the width argparse's own formatter finds
(``shutil.get_terminal_size``), found without importing ``shutil``."""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import shutil
import struct
import subprocess
import sys
import termios

import pytest

from prompt_runner.cli import parser_kit
from prompt_runner.cli.parser import build_parser


@pytest.mark.parametrize("columns", [None, "", "x", "-3", "0", "40", "61", "200"])
def test_the_width_is_shutils(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert parser_kit.terminal_columns() == shutil.get_terminal_size().columns
    for argv in (["--help"], ["control", "status", "--help"], ["run", "--help"]):
        ours = build_parser(argv)
        assert isinstance(ours._get_formatter(), parser_kit.HelpFormatter)
        ours.formatter_class = argparse.HelpFormatter
        stdlib_help = ours.format_help()
        ours.formatter_class = parser_kit.HelpFormatter
        assert ours.format_help() == stdlib_help


def test_a_terminals_width_is_read_from_it() -> None:
    """On a terminal 57 columns wide (no $COLUMNS), help wraps at 55 as argparse's would."""
    probe = (
        "import argparse, shutil\n"
        "from prompt_runner.cli import parser_kit\n"
        "print(parser_kit.terminal_columns(), shutil.get_terminal_size().columns,"
        " parser_kit.HelpFormatter('p')._width, argparse.HelpFormatter('p')._width)\n"
    )
    leader, follower = pty.openpty()
    os.set_blocking(leader, True)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 57, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    with subprocess.Popen(
        [sys.executable, "-c", probe], stdout=follower, stderr=subprocess.PIPE, env=env
    ) as child:
        os.close(follower)
        child.wait(timeout=30)
        out = os.read(leader, 1000).decode()
    os.close(leader)
    assert out.split() == ["57", "57", "55", "55"], child.stderr
