"""The runner's reads of the files an agent writes (its directive, its progress,
the client's rejection lines): JSON nested too deeply to decode is "not valid
JSON" like any other, never a RecursionError out of the runner."""

from __future__ import annotations

import os
from pathlib import Path

from prompt_runner.agent.invocation import read_client_rejections, read_private_json
from prompt_runner.agent.protocol import REJECTIONS_NAME

DEEP = "[" * 20_000 + "]" * 20_000  # 40 KB: under the 64 KiB a private file may hold


def test_a_deep_private_file_is_not_valid_json(tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write('{"action": ' + DEEP + "}")
    assert read_private_json(path, tmp_path) == (None, "request.json is not valid JSON")


def test_a_deep_rejection_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / REJECTIONS_NAME
    path.write_text('{"n": 1}\n' + DEEP + '\n{"n": 3}\n', encoding="utf-8")
    lines, offset = read_client_rejections(tmp_path, 0)
    assert (lines, offset) == ([{"n": 1}, {"n": 3}], path.stat().st_size)
