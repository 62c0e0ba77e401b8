"""Every reader of a small JSON file of the state treats a value nested too
deeply to decode as it treats any other malformed JSON (``json.loads`` raises
``RecursionError`` there, which is no ``ValueError``): a torn amendment line
is skipped, an unreadable marker or agent registration is no marker or
registration. A new user's finding, with ``[`` repeated 100,000 times."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.control.amendments import amendments_path, read_amendments
from prompt_runner.control.marker import marker_path, own_marker, read_marker
from prompt_runner.runner.orphans import reap
from prompt_runner.supervise.members import registered

DEEP = "[" * 100_000 + "]" * 100_000


def test_a_deep_amendment_line_is_skipped(tmp_path: Path) -> None:
    path = amendments_path(tmp_path, "01")
    path.parent.mkdir(parents=True)
    path.write_text(DEEP + '\n{"op": "add"}\n', encoding="utf-8")
    assert read_amendments(tmp_path, "01") == [{"op": "add"}]


def test_a_deep_marker_is_no_marker(tmp_path: Path) -> None:
    path = marker_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(DEEP, encoding="utf-8")
    assert read_marker(tmp_path) is None
    assert own_marker(tmp_path) is None


def test_a_deep_agent_registration_is_unreadable(tmp_path: Path) -> None:
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "1.json").write_text(DEEP, encoding="utf-8")
    assert registered(agents) == []
    assert reap(agents) == []
    assert not (agents / "1.json").exists()  # unreadable: cleared, as before
