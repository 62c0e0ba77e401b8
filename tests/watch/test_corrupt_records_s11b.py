"""A bounded watch fails a run whose records of truth are corrupt (a new user's finding).

A garbage line appended to ``prompts/01.jsonl`` or a bad line in
``progress.log``: ``status`` and ``run --remaining`` exit 2 naming it, but
``watch --for 2s --every 1s`` said "watch passed: 3 healthy samples" (exit
0), also while a live run went on. Now each sample checks the prompt logs
and ``progress.log`` as ``status`` reads them: a bad line is its
``state_error`` -- ``status``'s sentence -- judged ``runtime_unhealthy``
(``state_unreadable``). A torn last line (a live runner's line in flight) is
not corruption. The check reads each line once per watch
(watch/records.py). Real runs of the simulated provider, the real CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner.state.layout import StateLayout
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.supervise._helpers import run_finished, slow_packet, wait_for

GARBAGE = b"garbage not json\n"
BAD_PROGRESS = b"zz:bogus line\n"


@pytest.fixture
def ran(tmp_path: Path) -> Path:
    """Prompt 01 of two ran and completed."""
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    done = cli("run", packet, "01", "--no-commit")
    assert done.returncode == 0, done.stderr
    return packet


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


def _status_sentence(packet: Path) -> str:
    shown = cli("status", packet)
    assert shown.returncode == 2, shown.stdout
    return shown.stderr.strip().splitlines()[-1].removeprefix("error: ")


def _watched(packet: Path, *flags: str) -> tuple[int, list[dict[str, object]]]:
    shown = cli("watch", packet, "--for", "2s", "--every", "1s", "--json", *flags)
    docs = [json.loads(line) for line in shown.stdout.splitlines()]
    return shown.returncode, docs


@pytest.mark.parametrize(
    ("name", "data"), [("prompts/01.jsonl", GARBAGE), ("progress.log", BAD_PROGRESS)]
)
def test_a_bad_line_fails_the_first_sample_with_status_sentence(
    ran: Path, name: str, data: bytes
) -> None:
    _append(ran / ".prompt_runner" / name, data)
    sentence = _status_sentence(ran)
    assert name in sentence
    code, docs = _watched(ran)
    assert code == 1
    first, report = docs[0], docs[-1]
    assert first["state_error"] == sentence
    assert first["violations"] == [
        {"code": "runtime_unhealthy", "reason": "state_unreadable", "detail": sentence}
    ]
    assert report["passed"] is False and report["failed_sample"] == 1
    human = cli("watch", ran, "--for", "2s", "--every", "1s")
    assert human.returncode == 1
    assert "state_unreadable" in human.stdout.splitlines()[-1]


def test_a_torn_last_line_is_not_corruption_until_it_ends_bad(ran: Path) -> None:
    state = ran / ".prompt_runner"
    _append(state / "prompts" / "01.jsonl", b'{"schema_version": 1, "op": "upd')
    _append(state / "progress.log", b"02:runn")
    code, docs = _watched(ran)
    assert code == 0, docs[-1]
    assert all(doc["state_error"] is None for doc in docs[:-1])
    _append(state / "progress.log", b"ing\n")  # not ID:STATUS:TIME: a bad line now
    code, docs = _watched(ran)
    assert code == 1 and "progress.log: line 2 is not" in str(docs[0]["state_error"])


def test_each_line_is_read_once_and_a_rewrite_is_read_again(
    ran: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prompt_runner.watch import records  # new with the check (the tests above run without)

    layout = StateLayout(ran / ".prompt_runner")
    log = layout.prompt_log("01")
    read: list[int] = []
    real = records._read

    def counted(fd: int, offset: int, length: int) -> bytes:
        read.append(length)
        return real(fd, offset, length)

    monkeypatch.setattr(records, "_read", counted)
    check = records.RecordsCheck()
    assert check.error(layout) is None
    whole = sum(read)
    assert whole == log.stat().st_size + layout.progress_log.stat().st_size
    read.clear()
    assert check.error(layout) is None
    assert read == []  # nothing changed: nothing read
    line = (
        b'{"schema_version": 1, "at": "2026-01-01T00:00:00.000Z", "op": "update", "fields": {}}\n'
    )
    _append(log, line)
    assert check.error(layout) is None
    assert sum(read) <= len(line) + records._EDGE  # the appended line (and the edge before it)
    # an attempt out of order is refused as status's fold refuses it
    _append(log, b'{"schema_version": 1, "op": "attempt_start", "key": 7, "attempt": {}}\n')
    sentence = check.error(layout)
    assert sentence is not None and sentence == _status_sentence(ran)
    # a file rewritten in place, the same length and inode: read again from its start
    fixed = records.RecordsCheck()
    text = log.read_bytes()
    bad_end = text.rstrip(b"\n").rfind(b"\n") + 1
    with log.open("r+b") as handle:
        handle.truncate(bad_end)  # the bad line deleted: healthy again
    assert fixed.error(layout) is None
    with log.open("r+b") as handle:
        handle.seek(0)
        handle.write(b"x" * 8)  # line 1 damaged in place; the size and the last line the same
    assert fixed.error(layout) is not None and "line 1" in str(fixed.error(layout))


def test_a_live_run_with_a_corrupt_prompt_log_is_unhealthy(
    tmp_path: Path, started: list[int]
) -> None:
    packet = slow_packet(tmp_path, ("01", "02"), delay_ms=1)
    path = packet / "prompts" / "02_step.prompt.md"
    path.write_text(path.read_text().replace("delay_ms: 1\n", "delay_ms: 60000\n"))
    runner = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    started.append(runner.pid)
    try:
        state = packet / ".prompt_runner"
        wait_for(lambda: (state / "prompts" / "02.jsonl").exists(), 30, "prompt 02 to start")
        code, docs = _watched(packet, "--require-running")
        assert code == 0, docs[-1]  # the live run's own appends are never corruption
        _append(state / "prompts" / "01.jsonl", GARBAGE)
        code, docs = _watched(packet)
        assert code == 1
        assert docs[0]["state"] == "running"
        assert "prompts/01.jsonl: corrupt prompt record" in str(docs[0]["state_error"])
    finally:
        runner.terminate()
        runner.wait(30)
    assert run_finished(packet) or runner.returncode is not None
