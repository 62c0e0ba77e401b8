"""Pages of a JSONL file from byte offsets: newest, older, appended; torn, corrupt, huge lines."""

from __future__ import annotations

import json
from pathlib import Path

from prompt_runner.dashboard import tail


def _write(path: Path, n: int, *, start: int = 0) -> list[int]:
    """Append events ``start..start+n-1``; return each line's offset."""
    offsets = []
    with path.open("ab") as f:
        for i in range(start, start + n):
            offsets.append(f.tell())
            f.write(json.dumps({"kind": "assistant_text", "text": f"m{i}"}).encode() + b"\n")
    return offsets


def _texts(page: tail.Page) -> list[str]:
    return [r.get("text", r["kind"]) for _, r in page.records]


def test_newest_then_older_pages_cover_the_file_once(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    offsets = _write(path, 1000)
    page = tail.newest(path, 300)
    assert _texts(page) == [f"m{i}" for i in range(700, 1000)]
    assert [off for off, _ in page.records] == offsets[700:]
    assert page.end == path.stat().st_size and page.more_before
    seen = _texts(page)
    while page.more_before:
        page = tail.newest(path, 300, before=page.start)
        seen = _texts(page) + seen
    assert seen == [f"m{i}" for i in range(1000)]
    assert page.start == 0


def test_a_torn_last_line_is_left_until_it_is_complete(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    _write(path, 3)
    with path.open("ab") as f:
        f.write(b'{"kind": "assistant_text", "te')  # a writer mid-line, or a crash
    page = tail.newest(path, 10)
    assert _texts(page) == ["m0", "m1", "m2"]
    assert tail.after(path, page.end).records == []
    with path.open("ab") as f:
        f.write(b'xt": "m3"}\n')
    later = tail.after(path, page.end)
    assert _texts(later) == ["m3"] and later.end == path.stat().st_size


def test_a_corrupt_line_shows_as_unreadable_not_dropped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    _write(path, 1)
    with path.open("ab") as f:
        f.write(b"not json at all\n[1, 2]\n")
    _write(path, 1, start=1)
    kinds = [r["kind"] for _, r in tail.newest(path, 10).records]
    assert kinds == ["assistant_text", "unreadable", "unreadable", "assistant_text"]
    assert [r["kind"] for _, r in tail.after(path, 0).records] == kinds


def test_a_line_over_the_limit_is_summarised(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    _write(path, 1)
    huge_at = path.stat().st_size
    with path.open("ab") as f:
        f.write(json.dumps({"kind": "tool_result", "output": "x" * (3 << 20)}).encode() + b"\n")
    _write(path, 2, start=1)
    page = tail.newest(path, 10)
    assert _texts(page) == ["m0", "too_large", "m1", "m2"]
    assert page.records[1][0] == huge_at
    assert page.records[1][1]["bytes"] > 3 << 20
    forward = [tail.after(path, 0, max_bytes=4096)]
    while forward[-1].end < path.stat().st_size:
        forward.append(tail.after(path, forward[-1].end, max_bytes=4096))
    assert [t for p in forward for t in _texts(p)] == ["m0", "too_large", "m1", "m2"]


def test_missing_and_replaced_files(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    assert tail.newest(path).records == [] and tail.after(path, 10).records == []
    _write(path, 5)
    ident = tail.StreamId.of(path)
    end = tail.newest(path).end
    path.rename(tmp_path / "archived.jsonl")  # a new run archives the stream...
    _write(path, 1, start=100)  # ...and starts its own
    assert tail.StreamId.of(path) != ident
    assert tail.after(path, end).size < end  # shorter than the old offset: start over


def test_first_page_of_a_big_file_reads_only_its_tail(tmp_path: Path) -> None:
    """40 MB of events: the newest page costs what it returns, not the file."""
    path = tmp_path / "events.jsonl"
    line = json.dumps({"kind": "assistant_text", "text": "y" * 180}).encode() + b"\n"
    with path.open("wb") as f:
        block = line * 10_000
        for _ in range(20):
            f.write(block)
    page = tail.newest(path, 200)
    assert len(page.records) == 200 and page.end == path.stat().st_size
    assert page.start == page.end - 200 * len(line)
