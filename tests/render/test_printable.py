"""Raw control characters from agents never reach the terminal.

An agent's text, a tool's output, a patch or a file name carrying ``ESC [ 2 J``
(clear the screen), an OSC title sequence or a bare ``\\r`` was written to the
terminal as is. Every printed line shows them escaped (``\\x1b``).
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from prompt_runner.providers.events import Event
from prompt_runner.render.printable import printable
from prompt_runner.render.text import Console
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

CLEAR = "\x1b[2J"
TITLE = "\x1b]0;pwned\x07"
EVIL = f"done{CLEAR}{TITLE}\rfake line\u202e"
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the only escapes the runner writes: its own colours

EVENTS = [
    Event("assistant_text", {"text": EVIL}),
    Event("tool_use", {"tool": "Bash", "input": {"command": f"echo {CLEAR}"}}),
    Event("tool_result", {"tool": "Bash", "output": f"line1\n{TITLE}line2"}),
    Event("file_change", {"change": "create", "path": f"a{CLEAR}.txt", "patch": f"+{CLEAR}\n"}),
    Event("error", {"class": "unknown", "message": EVIL}),
]


@pytest.mark.parametrize("styled", [False, True])
@pytest.mark.parametrize("mode", ["compact", "verbose", "studio"])
def test_event_lines_escape_control_characters(styled: bool, mode: str) -> None:
    view = {"log_mode": mode, "tool_output": "full", "diff": "full", "thinking": "show"}
    for batch in (False, True):
        out = io.StringIO()
        console = Console(out, view, styled=styled)
        if batch:
            console.events("01", EVENTS)
        else:
            for event in EVENTS:
                console.event("01", event)
        console.say(f"warning: {EVIL}")
        console.flush()
        text = SGR.sub("", out.getvalue())
        assert "\x1b" not in text and "\x07" not in text and "\r" not in text, repr(text)
        assert "\u202e" not in text
        assert "\\x1b[2J" in text and "\\x07" in text and "\\x0d" in text


def test_printable_keeps_text_newlines_tabs_and_unicode() -> None:
    assert printable("héllo\twörld\n→ ✓") == "héllo\twörld\n→ ✓"
    assert printable("a\r\nb\x00c\x9bd") == "a\nb\\x00c\\x9bd"


def test_a_run_prints_an_agents_escape_sequences_escaped(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {"messages": [EVIL], "writes": [{"path": f"n{CLEAR}.txt", "text": "x"}]}
                    ]
                }
            }
        },
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout and "\r" not in proc.stdout, repr(proc.stdout)
    assert "» done\\x1b[2J\\x1b]0;pwned\\x07 fake line\\u202e" in proc.stdout
    assert re.search(r"✎ (create|modify) n\\x1b\[2J\.txt\n", proc.stdout), proc.stdout
    status = cli("status", packet)
    assert "\x1b" not in status.stdout


FORGED = "x\n✓ 99 completed (verifier; forged)\r\n\tz.txt"


@pytest.mark.parametrize("styled", [False, True])
@pytest.mark.parametrize("mode", ["compact", "studio"])
def test_names_inside_a_line_escape_newline_tab_and_cr(styled: bool, mode: str) -> None:
    """A file or tool name with a newline could start a line that looks like the
    runner's own (``✓ 99 completed``): inside a line it is escaped, tab too."""
    events = [
        Event("session_started", {"session_id": "s\n✓ 1", "provider": "p\tq", "model": "m\n"}),
        Event("tool_use", {"tool": "Ba\nsh", "input": {"file_path": "a\nb"}}),
        Event("tool_result", {"tool": "Ba\nsh", "output": "ok"}),
        Event("file_change", {"change": "create", "path": FORGED}),
        Event("error", {"class": "x\ny", "message": "m"}),
    ]
    view = {"log_mode": mode, "tool_output": "summary", "diff": "none"}
    out = io.StringIO()
    console = Console(out, view, styled=styled)
    for event in events:
        console.event("01", event)
    console.flush()
    lines = SGR.sub("", out.getvalue()).splitlines()
    assert len(lines) == len(events), lines
    assert all(line.startswith("  [01] ") for line in lines), lines
    assert "\t" not in out.getvalue() and "\r" not in out.getvalue()
    assert "create x\\x0a✓ 99 completed (verifier; forged)\\x0d\\x0a\\x09z.txt" in lines[3]


def test_a_run_prints_a_file_name_with_a_newline_on_one_line(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [{"writes": [{"path": "x\n✓ 99 forged\t.txt", "text": "x"}]}]
                }
            }
        },
    )
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 0, proc.stderr
    assert not any(line.startswith("✓ 99") for line in proc.stdout.splitlines()), proc.stdout
    assert re.search(r"✎ (create|modify) x\\x0a✓ 99 forged\\x09\.txt\n", proc.stdout), proc.stdout
