"""Studio mode (session headers, tool summaries, usage, run facts) and ``tool_output full``."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.providers.events import Event
from prompt_runner.render.text import MAX_TOOL_OUTPUT_LINES, Console, format_event
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

STUDIO = {"log_mode": "studio"}


def render(event: Event, **view: Any) -> str | None:
    return format_event(event, {"log_mode": "compact", **view})


def lines_of(view: dict[str, Any], *events: Event, prompt_id: str = "01") -> list[str]:
    out = io.StringIO()
    console = Console(out, view)
    for event in events:
        console.event(prompt_id, event)
    console.flush()
    return out.getvalue().splitlines()


# ------------------------------------------------------------------ usage (studio)


def test_studio_usage_omits_an_unknown_cost_instead_of_printing_none() -> None:
    usage = Event("usage", {"input_tokens": 10, "output_tokens": 5, "cost_usd": None})
    assert render(usage, log_mode="studio") == "usage: in=10 out=5"


def test_studio_usage_formats_the_cost_in_dollars() -> None:
    usage = Event("usage", {"input_tokens": 10, "output_tokens": 5, "cost_usd": 0.01234})
    assert render(usage, log_mode="studio") == "usage: in=10 out=5 cost=$0.0123"
    cached = Event("usage", {"input_tokens": 9, "output_tokens": 1, "cached_tokens": 4})
    assert render(cached, log_mode="studio") == "usage: in=9 out=1 cached=4"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.5}, "usage: cost=$0.5000"),
        ({"cost_usd": 2}, "usage: cost=$2.0000"),
        ({"input_tokens": None, "output_tokens": 7}, "usage: out=7"),
        ({"input_tokens": 0, "output_tokens": 0, "cached_tokens": 0, "cost_usd": None}, None),
        ({}, None),
        ({"input_tokens": "many", "cost_usd": "?"}, None),
    ],
)
def test_studio_usage_shows_only_what_is_known(data: dict[str, Any], expected: str | None) -> None:
    line = render(Event("usage", data), log_mode="studio")
    assert line == expected
    assert "None" not in (line or "")


def test_usage_stays_hidden_in_compact() -> None:
    assert render(Event("usage", {"input_tokens": 10, "cost_usd": 0.1})) is None


# ------------------------------------------------------------------ tool_output full


OUTPUT = "first\nsecond\n  indented third"


def test_full_tool_output_is_indented_under_the_result_line_with_the_prompt_prefix() -> None:
    result = Event("tool_result", {"output": OUTPUT})
    assert lines_of({"tool_output": "full"}, result, prompt_id="07") == [
        "  [07] ← result: 3 line(s)",
        "  [07]     first",
        "  [07]     second",
        "  [07]       indented third",
    ]
    # format_event alone: the indented body, the Console adds the prefix
    assert render(result, tool_output="full") == (
        "← result: 3 line(s)\n    first\n    second\n      indented third"
    )


def test_full_tool_output_flags_errors_and_says_when_there_is_none() -> None:
    error = Event("tool_result", {"output": "boom", "is_error": True})
    assert lines_of({"tool_output": "full"}, error) == [
        "  [01] ← result (error): 1 line(s)",
        "  [01]     boom",
    ]
    assert lines_of({"tool_output": "full"}, Event("tool_result", {"output": ""})) == [
        "  [01] ← result: no output"
    ]


def test_a_huge_tool_output_is_capped_with_a_marker_naming_the_lines_cut() -> None:
    output = "\n".join(f"line {i}" for i in range(MAX_TOOL_OUTPUT_LINES + 123))
    lines = lines_of({"tool_output": "full"}, Event("tool_result", {"output": output}))
    assert lines[0] == f"  [01] ← result: {MAX_TOOL_OUTPUT_LINES + 123} line(s)"
    assert len(lines) == 1 + MAX_TOOL_OUTPUT_LINES + 1
    assert lines[MAX_TOOL_OUTPUT_LINES] == f"  [01]     line {MAX_TOOL_OUTPUT_LINES - 1}"
    assert lines[-1] == (
        f"  [01]     … 123 more output line(s) cut "
        f"(tool_output full shows at most {MAX_TOOL_OUTPUT_LINES})"
    )
    assert all(line.startswith("  [01] ") for line in lines)


def test_exactly_the_cap_is_shown_whole() -> None:
    output = "\n".join("x" for _ in range(MAX_TOOL_OUTPUT_LINES))
    lines = lines_of({"tool_output": "full"}, Event("tool_result", {"output": output}))
    assert len(lines) == 1 + MAX_TOOL_OUTPUT_LINES and "cut" not in lines[-1]


def test_the_styled_console_prefixes_every_output_line_too() -> None:
    result = Event("tool_result", {"output": OUTPUT})
    styled = io.StringIO()
    console = Console(styled, {"tool_output": "full"}, styled=True)
    console.event("01", result)
    stripped = re.sub(r"\x1b\[[0-9;]*m", "", styled.getvalue())
    assert stripped.splitlines() == lines_of({"tool_output": "full"}, result)


@pytest.mark.parametrize(
    ("tool_output", "expected"),
    [
        ("none", []),
        ("summary", ["  [01] ← result: 3 line(s)"]),
        ("preview", ["  [01] ← result: first second indented third"]),
    ],
)
def test_other_tool_output_levels_are_unchanged(tool_output: str, expected: list[str]) -> None:
    result = Event("tool_result", {"output": OUTPUT})
    assert lines_of({"tool_output": tool_output}, result) == expected


# ------------------------------------------------------------------ studio vs compact


def session_events() -> list[Event]:
    return [
        Event(
            "session_started",
            {"session_id": "s-1", "provider": "claude", "model": "sonnet", "cwd": "/w"},
            at_ms=1_000,
        ),
        Event("assistant_text", {"text": "Running the tests."}),
        Event("tool_use", {"tool": "Bash", "input": {"command": "npm test", "timeout": 5}}),
        Event("tool_result", {"tool": "Bash", "output": "ok\nall passed"}),
        Event("tool_use", {"tool": "Edit", "input": {"file_path": "src/a.py", "old": "x"}}),
        Event("file_change", {"path": "src/a.py", "change": "modify"}),
        Event("usage", {"input_tokens": 1200, "output_tokens": 80, "cost_usd": 0.0421}),
        Event("result", {"ok": True}, at_ms=13_345),
    ]


def test_compact_is_unchanged() -> None:
    assert lines_of({"log_mode": "compact"}, *session_events()) == [
        "  [01] session s-1 started (claude)",
        "  [01] » Running the tests.",
        '  [01] → Bash {"command":"npm test","timeout":5}',
        "  [01] ← result: 2 line(s)",
        '  [01] → Edit {"file_path":"src/a.py","old":"x"}',
        "  [01] ✎ modify src/a.py",
        "  [01] session finished",
    ]


def test_studio_shows_a_session_header_tool_summaries_usage_and_run_facts() -> None:
    assert lines_of(STUDIO, *session_events()) == [
        "  [01] ┌ session s-1 · provider claude · model sonnet",
        "  [01] » Running the tests.",
        "  [01] → Bash $ npm test",
        "  [01] ← Bash result: 2 line(s)",
        "  [01] → Edit src/a.py",
        "  [01] ✎ modify src/a.py",  # diff none: studio honours the view's diff as it is
        "  [01] usage: in=1200 out=80 cost=$0.0421",
        "  [01] session finished (12.3s, $0.0421)",
    ]


def test_studio_run_facts_are_per_prompt_and_per_session() -> None:
    out = io.StringIO()
    console = Console(out, STUDIO)
    console.event("01", Event("session_started", {"session_id": "a"}, at_ms=0))
    console.event("02", Event("session_started", {"session_id": "b"}, at_ms=500))
    console.event("01", Event("usage", {"cost_usd": 1.5}))
    console.event("02", Event("result", {"ok": False}, at_ms=2_500))
    console.event("01", Event("result", {"ok": True}, at_ms=125_000))
    console.event("01", Event("result", {"ok": True}, at_ms=126_000))  # no session noted
    console.flush()
    assert out.getvalue().splitlines() == [
        "  [01] ┌ session a",
        "  [02] ┌ session b",
        "  [01] usage: cost=$1.5000",
        "  [02] session failed (2.0s)",
        "  [01] session finished (2m05s, $1.5000)",
        "  [01] session finished",
    ]


def test_a_result_that_carries_its_own_facts_keeps_them() -> None:
    event = Event("result", {"ok": True, "duration_ms": 800, "cost_usd": 0.002})
    assert render(event, log_mode="studio") == "session finished (0.8s, $0.0020)"
    assert render(event) == "session finished"


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("Bash", {"command": "ls -la\n  src", "description": "list"}, "→ Bash $ ls -la src"),
        ("shell", {"command": ["bash", "-lc", "make test"]}, "→ shell $ bash -lc make test"),
        ("run_shell_command", {"cmd": "pytest -q"}, "→ run_shell_command $ pytest -q"),
        ("Read", {"file_path": "src/a.py", "limit": 20}, "→ Read src/a.py"),
        ("read_file", {"absolute_path": "/w/a.py"}, "→ read_file /w/a.py"),
        ("editToolCall", {"path": "b.ts"}, "→ editToolCall b.ts"),
        ("Grep", {"pattern": "def main", "path": "src"}, "→ Grep 'def main' in src"),
        ("Glob", {"pattern": "**/*.py"}, "→ Glob '**/*.py'"),
        ("WebFetch", {"url": "https://x.test", "prompt": "p"}, "→ WebFetch https://x.test"),
        ("Task", {"description": "audit"}, "→ Task audit"),
        (
            "apply_patch",
            {"changes": [{"path": "a", "kind": "add"}, {"path": "b"}]},
            "→ apply_patch a, b",
        ),
        ("mystery", {"x": 1, "y": [2]}, '→ mystery {"x":1,"y":[2]}'),
        ("TodoWrite", {}, "→ TodoWrite"),
        ("Bash", {"command": ""}, '→ Bash {"command":""}'),
    ],
)
def test_studio_tool_summaries_show_the_most_useful_input(
    tool: str, tool_input: dict[str, Any], expected: str
) -> None:
    line = render(Event("tool_use", {"tool": tool, "input": tool_input}), log_mode="studio")
    assert line == expected


def test_a_long_command_is_cut_to_one_line() -> None:
    event = Event("tool_use", {"tool": "Bash", "input": {"command": "echo " + "x" * 500}})
    line = render(event, log_mode="studio") or ""
    assert "\n" not in line and line.endswith("…") and len(line) < 220


def test_studio_follows_the_views_diff_and_tool_output() -> None:
    change = Event(
        "file_change",
        {
            "path": "a.txt",
            "change": "modify",
            "patch": "@@ -1 +1 @@\n-a\n+b",
            "patch_source": "tool",
        },
    )
    assert render(change, log_mode="studio") == "✎ modify a.txt"
    assert render(change, log_mode="studio", diff="stat") == "✎ modify a.txt (+1 -1)"
    result = Event("tool_result", {"tool": "Read", "output": "x\ny"})
    assert render(result, log_mode="studio", tool_output="none") is None
    assert render(result, log_mode="studio", tool_output="full") == (
        "← Read result: 2 line(s)\n    x\n    y"
    )


def test_the_styled_studio_header_keeps_its_text() -> None:
    plain, styled = io.StringIO(), io.StringIO()
    for stream, flag in ((plain, False), (styled, True)):
        console = Console(stream, STUDIO, styled=flag)
        for event in session_events():
            console.event("01", event)
        console.flush()
    assert "\x1b[" in styled.getvalue()
    assert re.sub(r"\x1b\[[0-9;]*m", "", styled.getvalue()) == plain.getvalue()


def test_a_simulated_run_in_studio_mode(tmp_path: Path) -> None:
    write = {"path": "notes.txt", "text": "alpha\n"}
    packet = make_packet(
        tmp_path, {"01": {"simulate": {"attempts": [{"writes": [write], "cost_usd": 0.25}]}}}
    )
    proc = cli("run", packet, "--no-commit", "--log-mode", "studio")
    assert proc.returncode == 0, proc.stderr + proc.stdout
    out = proc.stdout
    assert re.search(r"  \[01\] ┌ session \S+ · provider simulated · model simulated-demo\n", out)
    assert "  [01] usage: cost=$0.2500\n" in out
    assert re.search(r"  \[01\] session finished \(\d+\.\ds, \$0\.2500\)\n", out)
    assert "None" not in out
