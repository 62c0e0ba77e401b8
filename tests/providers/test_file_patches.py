"""``file_change`` patches: Claude's ``tool_use_result`` and the simulated provider's writes."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from prompt_runner.providers import claude_stream
from prompt_runner.providers.base import SessionRequest, TimeBounds
from prompt_runner.providers.events import Event
from prompt_runner.providers.simulated import SimulatedProvider
from prompt_runner.render.text import patch_body

DATA = Path(__file__).resolve().parents[1] / "data" / "claude_tool_use_result"


def parse_lines(*lines: str) -> list[Event]:
    events: list[Event] = []
    parser = claude_stream.ClaudeStreamParser(lambda kind, data: events.append(Event(kind, data)))
    for line in lines:
        parser.feed_line(line)
    return events


def file_changes(events: list[Event]) -> list[dict[str, Any]]:
    return [dict(e.data) for e in events if e.kind == "file_change"]


# ------------------------------------------------------------------ Claude


def test_captured_create_becomes_the_tools_patch_of_its_content() -> None:
    line = (DATA / "create_captured.jsonl").read_text(encoding="utf-8")
    (change,) = file_changes(parse_lines(line))
    path = "/SCRATCH/claude/out/success_write/work/hello.txt"
    assert change == {
        "path": path,
        "change": "create",
        "patch": f"--- /dev/null\n+++ {path}\n@@ -0,0 +1,1 @@\n+hello from mock",
        "patch_source": "tool",
        "added": 1,
        "removed": 0,
    }


def test_update_results_format_the_tools_structured_hunks() -> None:
    lines = (DATA / "update_constructed.jsonl").read_text(encoding="utf-8").splitlines()
    edit, write = file_changes(parse_lines(*lines))
    assert edit["path"] == "/work/app/greet.py" and edit["change"] == "modify"
    assert edit["patch_source"] == "tool"
    assert (edit["added"], edit["removed"]) == (1, 1)
    assert patch_body(edit["patch"]) == [
        "@@ -1,4 +1,4 @@",
        " def greet():",
        "-    return 'hi'",
        "+    return 'hello'",
        " ",
        " print(greet())",
    ]
    assert write["change"] == "modify" and write["patch_source"] == "tool"
    assert (write["added"], write["removed"]) == (2, 1)
    assert write["patch"].splitlines()[:3] == [
        "--- /work/app/notes.md",
        "+++ /work/app/notes.md",
        "@@ -1,2 +1,3 @@",
    ]


def detail(**kw: Any) -> dict[str, Any]:
    return {"filePath": "/w/f.txt", **kw}


def test_empty_ranges_start_one_line_lower_like_unified_diff() -> None:
    hunk = {"oldStart": 3, "oldLines": 0, "newStart": 3, "newLines": 1, "lines": ["+x"]}
    got = claude_stream.tool_patch("/w/f.txt", "modify", detail(structuredPatch=[hunk]))
    assert patch_body(got["patch"]) == ["@@ -2,0 +3,1 @@", "+x"]
    assert (got["added"], got["removed"]) == (1, 0)


def test_created_file_without_final_newline_is_marked() -> None:
    got = claude_stream.tool_patch("/w/f.txt", "create", detail(structuredPatch=[], content="a\nb"))
    assert patch_body(got["patch"]) == [
        "@@ -0,0 +1,2 @@",
        "+a",
        "+b",
        "\\ No newline at end of file",
    ]
    assert got["added"] == 2


def test_no_patch_is_invented_when_the_stream_has_none() -> None:
    assert claude_stream.tool_patch("/w/f.txt", "create", detail(structuredPatch=[])) == {}
    assert claude_stream.tool_patch("/w/f.txt", "modify", detail()) == {}
    bad = [{"oldStart": "1", "lines": ["+x"]}]
    assert claude_stream.tool_patch("/w/f.txt", "modify", detail(structuredPatch=bad)) == {}


def test_a_huge_patch_is_cut_with_a_marker_but_counted_whole() -> None:
    lines = [f"+{'x' * 99}" for _ in range(2000)]
    hunk = {"oldStart": 1, "oldLines": 0, "newStart": 1, "newLines": 2000, "lines": lines}
    got = claude_stream.tool_patch("/w/f.txt", "modify", detail(structuredPatch=[hunk]))
    assert len(got["patch"]) <= claude_stream.PATCH_CAP + 100
    assert got["patch"].endswith("more patch line(s) cut by prompt-runner]")
    assert got["added"] == 2000


def test_results_without_a_file_keep_emitting_no_file_change() -> None:
    line = (
        '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1",'
        '"type":"tool_result","content":"hi"}]},"tool_use_result":{"stdout":"hi",'
        '"stderr":"","interrupted":false,"isImage":false}}'
    )
    assert file_changes(parse_lines(line)) == []


# ------------------------------------------------------------------ simulated


class _Script:
    def __init__(self, step: Any) -> None:
        self.attempts = [step]
        self.resume = None


class _Write:
    def __init__(self, path: str, text: str, append: bool = False) -> None:
        self.path, self.text, self.append, self.repo = path, text, append, None


class _Step:
    def __init__(self, writes: list[_Write]) -> None:
        self.messages: list[str] = []
        self.writes = writes
        self.delay_ms = 0
        self.agent_control = None
        self.error = None


def run_simulated(cwd: Path, writes: list[_Write]) -> list[Event]:
    events: list[Event] = []
    lock = threading.Lock()

    def sink(event: Event) -> None:
        with lock:
            events.append(event)

    request = SessionRequest(
        prompt_id="01",
        prompt_text="x",
        cwd=cwd,
        provider="simulated",
        bounds=TimeBounds(idle_ms=20_000, run_deadline_ms=60_000),
        simulate=_Script(_Step(writes)),
    )
    session = SimulatedProvider().start(request, sink)
    result = session.wait(10)
    assert result is not None and result.ok
    return events


def test_simulated_writes_carry_their_own_patch(tmp_path: Path) -> None:
    (tmp_path / "old.txt").write_text("one\ntwo\n", encoding="utf-8")
    events = run_simulated(
        tmp_path,
        [
            _Write("new.txt", "hello\n"),
            _Write("old.txt", "one\nTWO\n"),
            _Write("old.txt", "3\n", True),
        ],
    )
    created, modified, appended = file_changes(events)
    assert created["change"] == "create" and created["patch_source"] == "tool"
    assert created["patch"] == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello"
    assert (created["added"], created["removed"]) == (1, 0)
    assert modified["change"] == "modify"
    assert patch_body(modified["patch"]) == ["@@ -1,2 +1,2 @@", " one", "-two", "+TWO"]
    assert (modified["added"], modified["removed"]) == (1, 1)
    assert (appended["added"], appended["removed"]) == (1, 0)
    assert appended["patch"].endswith("+3")


def test_simulated_skips_the_patch_of_an_unreadable_old_file(tmp_path: Path) -> None:
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe\x00")
    (change,) = file_changes(run_simulated(tmp_path, [_Write("bin.dat", "text\n")]))
    assert change == {"path": "bin.dat", "repo": None, "change": "modify"}
