"""JSON nested too deeply to decode is bad input like any other malformed JSON
(finding 13): the readers of untrusted JSON, the JSONL readers, and the
commands that meet such a line in a record of truth or in the event stream."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from prompt_runner.errors import StateError
from prompt_runner.state._store_common import check_fields, json_copy
from prompt_runner.state.jsonl import decode_line, iter_from, read_from, read_records
from prompt_runner.state.untrusted_json import JsonNestingError, loads, loads_unique
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

DEEP = "[" * 100_000 + "]" * 100_000


# -- the reader ---------------------------------------------------------------------


def test_loads_turns_nesting_too_deep_to_decode_into_a_value_error() -> None:
    with pytest.raises(JsonNestingError, match="nested too deeply to decode") as info:
        loads(DEEP)
    assert isinstance(info.value, ValueError)
    with pytest.raises(JsonNestingError):
        loads(DEEP.encode("utf-8"))
    assert loads('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    with pytest.raises(json.JSONDecodeError):
        loads("{bad")


def test_loads_keeps_the_last_of_a_repeated_key_as_json_does() -> None:
    assert loads('{"a": 1, "a": 2}') == {"a": 2}


def test_loads_unique_names_a_repeated_key_at_any_level() -> None:
    with pytest.raises(ValueError, match=r"^duplicate key 'command'$"):
        loads_unique('{"command": "set_view", "command": "stop"}')
    with pytest.raises(ValueError, match=r"^duplicate key 'x'$"):
        loads_unique('{"params": [{"x": 1, "y": 2, "x": 3}]}')
    assert loads_unique('{"a": {"a": {"a": 1}}, "b": [{"a": 2}]}') == {
        "a": {"a": {"a": 1}},
        "b": [{"a": 2}],
    }


def test_loads_unique_takes_max_depth_levels_and_no_more() -> None:
    assert loads_unique("[" * 5 + "]" * 5, max_depth=5) == [[[[[]]]]]
    assert loads_unique('{"a": {"b": [1, 2]}}', max_depth=3) == {"a": {"b": [1, 2]}}
    with pytest.raises(JsonNestingError, match="nested deeper than 5 levels"):
        loads_unique("[" * 6 + "]" * 6, max_depth=5)
    with pytest.raises(JsonNestingError, match="nested deeper than 2 levels"):
        loads_unique('[1, {"a": 2}, [3, [4]]]', max_depth=2)
    assert loads_unique('"text"', max_depth=1) == "text"
    with pytest.raises(JsonNestingError, match="nested too deeply to decode"):
        loads_unique(DEEP)


def test_loads_is_safe_however_deep_the_caller_already_is() -> None:
    def at_depth(n: int) -> object:
        return loads("[" * 800 + "]" * 800) if n == 0 else at_depth(n - 1)

    assert loads("[" * 800 + "]" * 800) is not None  # from the test's own depth: decoded
    with pytest.raises(JsonNestingError):  # from half the recursion limit down: refused
        at_depth(sys.getrecursionlimit() // 2)


# -- JSONL ---------------------------------------------------------------------------


def _log_with_a_deep_line(tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_text('{"n": 1}\n' + DEEP + '\n{"n": 3}\n', encoding="utf-8")
    return path


def test_decode_line_refuses_a_deep_line_with_a_value_error() -> None:
    with pytest.raises(JsonNestingError):
        decode_line(DEEP.encode("utf-8"))


def test_a_strict_read_names_the_file_and_line_of_a_deep_record(tmp_path: Path) -> None:
    path = _log_with_a_deep_line(tmp_path)
    with pytest.raises(StateError) as info:
        read_records(path, strict=True)
    message = str(info.value)
    assert str(path.name) in message
    assert "corrupt record at line 2 (nested too deeply to decode)" in message


def test_lenient_reads_and_the_tailer_skip_a_deep_line(tmp_path: Path) -> None:
    path = _log_with_a_deep_line(tmp_path)
    assert read_records(path, strict=False) == [{"n": 1}, {"n": 3}]
    records, offset = read_from(path, 0)
    assert (records, offset) == ([{"n": 1}, {"n": 3}], path.stat().st_size)
    assert [record for record, _ in iter_from(path)] == [{"n": 1}, {"n": 3}]
    assert [end for _, end in iter_from(path)][-1] == path.stat().st_size


# -- the commands --------------------------------------------------------------------


@pytest.fixture
def ran(tmp_path: Path) -> Path:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    done = cli("run", packet, "--no-commit")
    assert done.returncode == 0, done.stdout + done.stderr
    return packet


def _lines(path: Path) -> int:
    return len(path.read_bytes().splitlines())


def test_a_deep_line_in_a_prompt_record_stops_status_and_run_naming_file_and_line(
    ran: Path,
) -> None:
    record = ran / ".prompt_runner" / "prompts" / "01.jsonl"
    with record.open("a", encoding="utf-8") as f:
        f.write(DEEP + "\n")
    line = _lines(record)
    for args in (("status", ran), ("run", ran, "--remaining", "--no-commit")):
        result = cli(*args)
        assert result.returncode == 2, (args, result.stderr[-400:])
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr
        assert "prompts/01.jsonl" in result.stderr
        assert f"corrupt prompt record at line {line} (nested too deeply to decode)" in (
            result.stderr
        )


def test_control_events_skips_a_deep_line_as_any_bad_line(ran: Path) -> None:
    events = ran / ".prompt_runner" / "control" / "events.jsonl"
    before = cli("control", "events", ran)
    assert before.returncode == 0, before.stderr
    with events.open("a", encoding="utf-8") as f:
        f.write(DEEP + "\n")
    for extra in ((), ("--json",)):
        result = cli("control", "events", ran, *extra)
        assert result.returncode == 0, (extra, result.stderr[-400:])
        assert "Traceback" not in result.stderr and DEEP[:50] not in result.stdout
    assert cli("control", "events", ran).stdout == before.stdout


def test_a_value_too_deep_to_copy_is_refused_as_not_json_safe() -> None:
    deep: list[object] = []
    for _ in range(5_000):
        deep = [deep]
    with pytest.raises(JsonNestingError):
        json_copy({"detail": deep})
    with pytest.raises(ValueError):
        check_fields({"detail": deep})
    assert json_copy({"detail": [[1]]}) == {"detail": [[1]]}
