"""Rendering ``diff`` (none|stat|full) and the rich-styled terminal console."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.providers.events import Event
from prompt_runner.render.text import MAX_PATCH_LINES, Console, format_event
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

PATCH = "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO"
TOOL = {"path": "a.txt", "change": "modify", "patch": PATCH, "patch_source": "tool"}
ANSI = "\x1b["


def change(**data: Any) -> Event:
    return Event("file_change", {**TOOL, "added": 1, "removed": 1, **data})


def render(event: Event, **view: Any) -> str | None:
    return format_event(event, {"log_mode": "compact", **view})


# ------------------------------------------------------------------ diff none|stat|full


def test_diff_none_is_the_plain_file_line() -> None:
    assert render(change()) == "✎ modify a.txt"
    assert render(change(), diff="none") == "✎ modify a.txt"


def test_diff_stat_adds_the_line_counts() -> None:
    assert render(change(added=3, removed=2), diff="stat") == "✎ modify a.txt (+3 -2)"


def test_diff_full_adds_the_patch_indented_without_its_file_header() -> None:
    assert render(change(), diff="full") == "\n".join(
        [
            "✎ modify a.txt (+1 -1)",
            "      @@ -1,2 +1,2 @@",
            "       one",
            "      -two",
            "      +TWO",
        ]
    )


def test_counts_come_from_the_patch_when_the_event_has_none() -> None:
    event = Event("file_change", TOOL)
    assert render(event, diff="stat") == "✎ modify a.txt (+1 -1)"


@pytest.mark.parametrize("diff", ["stat", "full"])
def test_a_change_without_a_patch_says_the_tool_sent_none(diff: str) -> None:
    event = Event("file_change", {"path": "b.txt", "change": "create"})
    assert render(event, diff=diff) == "✎ create b.txt (no patch from the tool)"


@pytest.mark.parametrize("diff", ["stat", "full"])
def test_a_reconstructed_patch_is_labelled_never_the_tools(diff: str) -> None:
    text = render(change(patch_source="reconstructed"), diff=diff)
    assert text is not None
    first = text.splitlines()[0]
    assert first == (
        "✎ modify a.txt (+1 -1, reconstructed from the tool's input, not the tool's own patch)"
    )
    if diff == "full":
        assert "      -two" in text.splitlines()


def test_a_patch_of_unknown_origin_is_not_presented_as_the_tools() -> None:
    event = Event("file_change", {k: v for k, v in TOOL.items() if k != "patch_source"})
    text = render(event, diff="stat")
    assert text == "✎ modify a.txt (+1 -1, patch source unknown, not the tool's own patch)"


def test_a_long_patch_is_cut_with_a_marker_naming_the_lines_cut() -> None:
    body = "\n".join(f"+line {i}" for i in range(MAX_PATCH_LINES + 57))
    event = change(
        patch=f"--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,{MAX_PATCH_LINES + 57} @@\n{body}"
    )
    lines = (render(event, diff="full") or "").splitlines()
    assert len(lines) == 1 + MAX_PATCH_LINES + 1
    assert lines[-1] == (
        f"      … 58 more patch line(s) cut (diff full shows at most {MAX_PATCH_LINES})"
    )


def test_verbose_keeps_the_patch_out_of_the_json_line_unless_asked() -> None:
    none = render(change(), log_mode="verbose") or ""
    assert "\n" not in none and "patch_source" in none and "-two" not in none
    data = json.loads(none.split(" ", 1)[1])
    assert "patch" not in data and data["added"] == 1
    full = (render(change(), log_mode="verbose", diff="full") or "").splitlines()
    assert full[0].startswith("[file_change] {") and full[0].endswith("(+1 -1)")
    assert full[-1] == "      +TWO"


def test_switching_the_view_between_events_changes_the_output() -> None:
    out = io.StringIO()
    console = Console(out, {"log_mode": "compact", "diff": "none"})
    console.event("01", change())
    console.view = {**console.view, "diff": "stat"}  # what the control plane's set_view does
    console.event("01", change())
    console.view = {**console.view, "diff": "full"}
    console.event("01", change())
    console.view = {**console.view, "diff": "none"}
    console.event("01", change())
    console.flush()  # plain event lines are gathered and written in batches
    assert out.getvalue().splitlines() == [
        "  [01] ✎ modify a.txt",
        "  [01] ✎ modify a.txt (+1 -1)",
        "  [01] ✎ modify a.txt (+1 -1)",
        "      @@ -1,2 +1,2 @@",
        "       one",
        "      -two",
        "      +TWO",
        "  [01] ✎ modify a.txt",
    ]


# ------------------------------------------------------------------ plain vs styled (rich)


def feed(console: Console) -> None:
    console.say("▶ 01 Create hello")
    console.event("01", Event("assistant_text", {"text": "working"}))
    console.event("01", change())
    console.event("01", Event("error", {"class": "rate_limit", "message": "slow down"}))
    console.say("✓ 01 completed")


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_plain_console_writes_no_escape_codes() -> None:
    out = io.StringIO()
    console = Console(out, {"diff": "full", "log_mode": "studio"})
    assert not console.styled
    feed(console)
    assert ANSI not in out.getvalue()
    assert out.getvalue().splitlines()[0] == "▶ 01 Create hello"


def test_the_styled_console_styles_lines_with_rich_and_keeps_their_text() -> None:
    plain, styled = io.StringIO(), io.StringIO()
    view = {"diff": "full", "log_mode": "compact"}
    feed(Console(plain, view))
    console = Console(styled, view, styled=True)
    assert console.styled
    feed(console)
    text = styled.getvalue()
    assert ANSI in text
    assert "\x1b[31m      -two" in text and "\x1b[32m      +TWO" in text  # red/green diff lines
    assert "\x1b[1;31m✗ rate_limit: slow down" in text  # errors in bold red
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert stripped == plain.getvalue()


def test_studio_prompt_headers_are_a_rich_rule_on_a_terminal() -> None:
    out = io.StringIO()
    console = Console(out, {"log_mode": "studio"}, styled=True)
    console.say("▶ 01 Create hello")
    first = out.getvalue().splitlines()[0]
    assert "01 Create hello" in first and "───" in first


def test_styling_is_automatic_on_a_tty_only() -> None:
    assert Console(_Tty()).styled
    assert not Console(io.StringIO()).styled
    assert not Console(_Tty(), styled=False).styled
    assert not Console(None, styled=True).styled


def test_rich_is_imported_only_for_a_styled_console() -> None:
    probe = (
        "import io, sys\n"
        "from prompt_runner.render.text import Console\n"
        "from prompt_runner.providers.events import Event\n"
        "c = Console(io.StringIO(), {'diff': 'full'})\n"
        "c.event('01', Event('file_change', {'path': 'a', 'patch': '@@ -0,0 +1 @@\\n+a'}))\n"
        "before = 'rich' in sys.modules\n"
        "Console(io.StringIO(), styled=True)\n"
        "print(before, 'rich' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stdout.split() == ["False", "True"]


# ------------------------------------------------------------------ the real CLI


def test_a_simulated_run_with_diff_full_prints_its_patch(tmp_path: Path) -> None:
    write = {"path": "notes.txt", "text": "alpha\nbeta\n"}
    packet = make_packet(tmp_path, {"01": {"simulate": {"attempts": [{"writes": [write]}]}}})
    proc = cli("run", packet, "--no-commit", "--diff", "full")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert "  [01] ✎ create notes.txt (+2 -0)\n" in proc.stdout
    assert "      @@ -0,0 +1,2 @@\n      +alpha\n      +beta\n" in proc.stdout
    assert ANSI not in proc.stdout  # a pipe: plain text
    again = cli("run", packet, "01", "--no-commit", "--diff", "stat")
    assert again.returncode == 0, again.stderr + again.stdout
    assert "  [01] ✎ modify notes.txt (+0 -0)\n" in again.stdout
    assert "      @@" not in again.stdout


def test_plain_event_lines_are_written_in_batches_and_never_lost() -> None:
    """One write per batch, whatever the stream's buffering; a runner message or
    flush() writes what was gathered first, in order."""
    writes: list[str] = []

    class Recorder(io.StringIO):
        def write(self, text: str) -> int:
            writes.append(text)
            return super().write(text)

    out = Recorder()
    console = Console(out, {"log_mode": "compact", "diff": "none"})
    for _ in range(50):
        console.event("01", change())
    console.say("runner message")
    assert len(writes) < 10  # batches, not one write per line
    lines = out.getvalue().splitlines()
    assert lines == ["  [01] ✎ modify a.txt"] * 50 + ["runner message"]
    console.event("01", change())
    console.flush()
    assert out.getvalue().splitlines()[-2:] == ["runner message", "  [01] ✎ modify a.txt"]
