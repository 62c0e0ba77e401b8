"""``status --json`` prints a kept text only while the files it was folded from
are unchanged (state/status_cache.py): any change to them -- an appended line,
a torn tail and its completion, a same-size rewrite with its old mtime put
back, a new log -- prints the new fold, as does a held run, and a change while
the files are read or too recent to tell apart is never kept."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import prompt_runner.api_status
from prompt_runner.api_status import status as fold_status
from prompt_runner.cli import _out
from prompt_runner.cli.main import main
from prompt_runner.cli.status import _keepable
from prompt_runner.state import status_cache
from prompt_runner.state.layout import StateLayout
from prompt_runner.state.lock import process_start_time
from tests.helpers.packets import make_packet

UPDATE = (
    b'{"schema_version":1,"op":"update","at":"2099-01-01T00:00:00.000Z","fields":{"note":"n"}}\n'
)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet whose run recorded three prompts (copied fresh for each test)."""
    root = tmp_path_factory.mktemp("ran")
    packet = make_packet(root, {"01": {}, "02": {}, "03": {}})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    return packet


@pytest.fixture
def packet(ran: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "packet"
    subprocess.run(["cp", "-a", str(ran), str(copy)], check=True)
    monkeypatch.delenv("PROMPT_RUNNER_STATE_DIR", raising=False)
    monkeypatch.setattr(status_cache, "SETTLED_NS", 0)  # files made just now count as settled
    return copy


def _printed(packet: Path) -> str:
    """What ``status PACKET --json`` prints (in-process; stdout a UTF-8 text stream)."""
    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-8", newline="")
    with contextlib.redirect_stdout(out):
        assert main(["status", str(packet), "--json"]) == 0
        out.flush()
    return buffer.getvalue().decode("utf-8")


def _folded(packet: Path) -> str:
    """The text of the state document folded now, the cache left aside."""
    return json.dumps(fold_status(packet), indent=2, ensure_ascii=False) + "\n"


def _layout(packet: Path) -> StateLayout:
    return StateLayout(packet / ".prompt_runner")


def _no_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(packet: object) -> object:
        raise AssertionError("folded the logs although a kept text was valid")

    monkeypatch.setattr(prompt_runner.api_status, "status", refuse)


def test_the_kept_text_is_the_folded_text_and_is_printed_without_a_fold(
    packet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _printed(packet)
    assert first == _folded(packet)
    assert status_cache.read(_layout(packet)) == first.encode("utf-8")
    _no_fold(monkeypatch)
    assert _printed(packet) == first


def test_an_appended_line_prints_the_new_fold(packet: Path) -> None:
    first = _printed(packet)
    with open(packet / ".prompt_runner/prompts/01.jsonl", "ab") as f:
        f.write(UPDATE)
    now = _printed(packet)
    assert now == _folded(packet) != first
    assert json.loads(now)["prompts"]["01"]["note"] == "n"


def test_a_same_size_rewrite_with_its_old_mtime_put_back_prints_the_new_fold(
    packet: Path,
) -> None:
    """Only the ctime tells this change (a restore with ``cp -p``, ``touch -d``)."""
    first = _printed(packet)
    log = packet / ".prompt_runner/prompts/02.jsonl"
    before = os.stat(log)
    data = log.read_bytes()
    assert b'"completed"' in data
    with open(log, "r+b") as f:  # same inode, same size
        f.write(data.replace(b'"completed"', b'"COMPLETED"'))
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(log)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    now = _printed(packet)
    assert now == _folded(packet) != first
    assert json.loads(now)["prompts"]["02"]["status"] == "COMPLETED"


def test_a_torn_tail_and_its_completion(packet: Path) -> None:
    first = _printed(packet)
    log = packet / ".prompt_runner/prompts/03.jsonl"
    with open(log, "ab") as f:
        f.write(UPDATE[:30])  # a writer killed mid-line: not a record yet
    assert _printed(packet) == _folded(packet) == first
    with open(log, "ab") as f:
        f.write(UPDATE[30:])
    now = _printed(packet)
    assert now == _folded(packet) != first
    assert json.loads(now)["prompts"]["03"]["note"] == "n"


def test_a_new_prompt_log_prints_the_new_fold(packet: Path) -> None:
    first = _printed(packet)
    (packet / ".prompt_runner/prompts/04.jsonl").write_bytes(UPDATE)
    now = _printed(packet)
    assert now == _folded(packet) != first
    assert json.loads(now)["removed_prompts"] == {"04": None}  # a log of no prompt of the packet


def test_a_held_run_is_folded_and_its_text_not_kept(packet: Path) -> None:
    first = _printed(packet)
    layout = _layout(packet)
    layout.run_pid.write_text(f"{os.getpid()} {process_start_time(os.getpid())}\n")
    now = _printed(packet)
    assert json.loads(now)["runner"] == {"alive": True}
    assert now == _folded(packet) != first
    assert status_cache.read(layout) == first.encode("utf-8")  # the live text was not kept


@pytest.mark.parametrize("damage", ["cut short", "grown", "another format"])
def test_a_damaged_cache_is_not_printed(packet: Path, damage: str) -> None:
    first = _printed(packet)
    cache = _layout(packet).status_cache
    data = cache.read_bytes()
    if damage == "cut short":
        data = data[:-10]
    elif damage == "grown":
        data += b"  \n"
    else:
        data = data.replace(status_cache.FORMAT, b"prompt-runner status-cache 1", 1)
    cache.write_bytes(data)
    assert status_cache.read(_layout(packet)) is None
    assert _printed(packet) == first
    assert status_cache.read(_layout(packet)) == first.encode("utf-8")  # rebuilt


@pytest.mark.parametrize("to", ["pipe", "file"])
def test_the_kept_text_reaches_a_descriptor_whole(packet: Path, tmp_path: Path, to: str) -> None:
    """Copied by the kernel (sendfile) to a pipe or a file, byte for byte."""
    first = _printed(packet)  # kept (files settle at once here)
    argv = [sys.executable, "-c", PRINTS_KEPT, "status", str(packet), "--json"]
    if to == "pipe":
        proc = subprocess.run(argv, capture_output=True, check=True)
        out = proc.stdout
    else:
        with open(tmp_path / "out.json", "wb") as f:
            proc = subprocess.run(argv, stdout=f, stderr=subprocess.PIPE, check=True)
        out = (tmp_path / "out.json").read_bytes()
    assert proc.stderr == b"folded: False"
    assert out == first.encode("utf-8")


PRINTS_KEPT = (
    "import sys; from prompt_runner.cli.main import main; code = main(sys.argv[1:]); "
    "sys.stderr.write(f\"folded: {'prompt_runner.state.store' in sys.modules}\"); sys.exit(code)"
)


def test_another_version_s_cache_is_not_printed(
    packet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _printed(packet)
    # another version, or other code under this one (state/code_stamp.py)
    monkeypatch.setattr(status_cache, "_stamp", lambda: b"0.0.0-other+000000")
    assert status_cache.read(_layout(packet)) is None
    assert _printed(packet) == first


def test_a_change_while_the_files_are_read_is_not_kept(packet: Path) -> None:
    layout = _layout(packet)
    keeper = status_cache.Keeper.start(layout)
    with open(layout.prompt_log("01"), "ab") as f:  # a writer appends during the fold
        f.write(UPDATE)
    assert keeper.keep(b"the fold of what was read\n") is False
    assert not layout.status_cache.exists()


def test_files_changed_too_recently_to_tell_apart_are_not_kept(
    packet: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(status_cache, "SETTLED_NS", 3_600 * 10**9)  # an hour: all too new
    _printed(packet)
    assert not _layout(packet).status_cache.exists()
    assert status_cache.Keeper.start(_layout(packet)).keep(b"x\n") is False


def test_a_cache_that_cannot_be_written_still_prints(packet: Path) -> None:
    _layout(packet).status_cache.mkdir()  # in the way of the replace: the write fails
    assert _printed(packet) == _folded(packet)
    assert _printed(packet) == _folded(packet)


def test_a_document_that_read_live_agent_progress_is_not_kept() -> None:
    live = {"runner": {"alive": False}, "prompts": {"01": {"agent_control": {"live": {}}}}}
    assert _keepable(live) is False
    assert _keepable({"runner": {"alive": False}, "prompts": {"01": {}}}) is True
    assert _keepable({"runner": {"alive": True}, "prompts": {}}) is False


def test_a_kept_text_reaches_a_non_utf8_stdout_as_its_text(packet: Path) -> None:
    first = _printed(packet)
    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-16", newline="")
    kept = status_cache.open_kept(_layout(packet))
    assert kept is not None
    with kept, contextlib.redirect_stdout(out):
        _out.emit_json_kept(kept)
        out.flush()
    assert buffer.getvalue().decode("utf-16") == first
