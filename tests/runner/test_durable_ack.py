"""A prompt's result is durable before it is acknowledged.

``✓ ID completed`` (and ``✗ ID ...``) on the console is what the operator, a
push and a notification act on: by then the prompt's record
(``prompts/<id>.jsonl``, its directory entry when the file is new) and its
``progress.log`` line are fsynced -- no append to either after its last fsync.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from prompt_runner import api
from tests.helpers.packets import NOREPAIR, make_packet


class _Trace:
    """Every os.write / os.fsync on the state files and every console write, in order."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.root = root
        self.events: list[tuple[str, str]] = []
        real_write, real_fsync = os.write, os.fsync

        def write(fd: int, data: bytes) -> int:
            self._note("write", fd)
            return real_write(fd, data)

        def fsync(fd: int) -> None:
            real_fsync(fd)
            self._note("fsync", fd)

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", fsync)

    def _note(self, kind: str, fd: int) -> None:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return
        if target.startswith(str(self.root)):
            self.events.append((kind, os.path.relpath(target, self.root)))

    def say(self, text: str) -> None:
        self.events.append(("out", text))

    def at(self, line: str) -> int:
        """The index of the console write holding ``line``."""
        return next(
            i for i, (kind, text) in enumerate(self.events) if kind == "out" and line in text
        )

    def durable_before(self, index: int) -> set[str]:
        """The state files fsynced after their last write, as of event ``index``."""
        last: dict[str, dict[str, int]] = {"write": {}, "fsync": {}}
        for i, (kind, path) in enumerate(self.events[:index]):
            if kind in last:
                last[kind][path] = i
        return {p for p, i in last["fsync"].items() if i > last["write"].get(p, -1)}

    def first(self, kind: str, path: str) -> int:
        return next(i for i, event in enumerate(self.events) if event == (kind, path))

    def last_before(self, kind: str, path: str, index: int) -> int:
        return max(
            (i for i, event in enumerate(self.events[:index]) if event == (kind, path)), default=-1
        )


class _Stream(io.StringIO):
    def __init__(self, trace: _Trace) -> None:
        super().__init__()
        self._trace = trace

    def write(self, text: str) -> int:
        self._trace.say(text)
        return super().write(text)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc/self/fd")
def test_completed_and_failed_prompts_are_durable_before_they_are_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "one.txt", "text": "1"}]}]},
                "verify": {"files_exist": ["one.txt"]},
            },
            "02": {"verify": {"files_exist": ["never.txt"]}},
        },
        manifest={"recovery": NOREPAIR},
    )
    state = packet / ".prompt_runner"
    trace = _Trace(state, monkeypatch)
    api.run(
        packet,
        stream=_Stream(trace),
        default_runtime_store="file",
        default_committer="git",
    )
    for line, prompt_id in (("✓ 01 completed", "01"), ("✗ 02 ", "02")):
        printed = trace.at(line)
        log = f"prompts/{prompt_id}.jsonl"
        assert {log, "progress.log"} <= trace.durable_before(printed), (line, trace.events)
        # the new file's directory entry: the directory fsynced after the file was made
        assert trace.last_before("fsync", "prompts", printed) > trace.first("write", log), line
