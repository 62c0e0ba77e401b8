"""A JSON document nested too deeply to decode is a damaged document (finding
13): ``state.json`` is moved aside and rebuilt, ``runs/current.json`` stops the
command naming the file (exit 2, "delete it"), a damaged control snapshot is no
snapshot -- each as for any other malformed JSON in that file."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.errors import StateError
from prompt_runner.state.atomic import read_json
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

DEEP = "[" * 100_000 + "]" * 100_000 + "\n"


def test_read_json_reports_a_deep_document_as_not_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(DEEP, encoding="utf-8")
    with pytest.raises(StateError) as info:
        read_json(path, fix="move it aside")
    assert info.value.exit_code == 2
    assert "doc.json: is not valid JSON (nested too deeply to decode); move it aside" in str(
        info.value
    )


@pytest.fixture
def ran(tmp_path: Path) -> Path:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    done = cli("run", packet, "--no-commit")
    assert done.returncode == 0, done.stdout + done.stderr
    return packet


def _clean(result_stderr: str) -> None:
    assert "Traceback" not in result_stderr and "internal error" not in result_stderr


def test_a_deep_state_json_is_a_corrupt_cache_moved_aside_by_the_next_run(ran: Path) -> None:
    state = ran / ".prompt_runner" / "state.json"
    state.write_text(DEEP, encoding="utf-8")
    status = cli("status", ran)
    assert status.returncode == 0, status.stderr[-400:]
    _clean(status.stderr)
    assert "completed" in status.stdout  # folded from the prompt records
    again = cli("run", ran, "01", "--no-commit")  # a run writes state.json (a resume too)
    assert again.returncode == 0, again.stderr[-400:]
    _clean(again.stderr)
    asides = list(state.parent.glob("state.json.corrupt.*"))
    assert len(asides) == 1 and asides[0].read_text(encoding="utf-8") == DEEP
    assert state.read_text(encoding="utf-8").lstrip().startswith("{")


def test_a_deep_current_run_stops_the_run_naming_the_file(ran: Path) -> None:
    (ran / ".prompt_runner" / "runs" / "current.json").write_text(DEEP, encoding="utf-8")
    result = cli("run", ran, "--remaining", "--no-commit")
    assert result.returncode == 2, result.stderr[-400:]
    _clean(result.stderr)
    assert "runs/current.json: is not valid JSON (nested too deeply to decode); delete it" in (
        result.stderr
    )


def test_a_deep_control_snapshot_is_read_as_no_snapshot(ran: Path) -> None:
    (ran / ".prompt_runner" / "control" / "snapshot.json").write_text(DEEP, encoding="utf-8")
    for extra in ((), ("--json",)):
        result = cli("control", "status", ran, *extra)
        assert result.returncode == 2, (extra, result.stderr[-400:])
        _clean(result.stderr)
        shown = result.stdout + result.stderr
        assert "control/snapshot.json: is not valid JSON (nested too deeply to decode)" in shown
        assert "whose state is intact" in shown and "no recorded run" not in shown
