"""A key given twice inside one flow mapping, on one line (a new user's finding).

The refusal named the line twice: ``duplicate key 'path' at line 7 (first at
line 7)``. It now says the key is there twice on that line; keys on two lines
are named as before, both lines.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.packets import make_packet

PROMPT_RUNNER = Path(sys.executable).parent / "prompt-runner"


def _refusal(tmp_path: Path) -> str:
    proc = subprocess.run(
        [str(PROMPT_RUNNER), "run", "demo", "--no-commit"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc
    (line,) = proc.stderr.splitlines()
    return line


def _write_repos(packet: Path, repos: str) -> int:
    manifest = packet / "prompt_runner_packet.md"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    start = lines.index("repos:")
    end = start + 1
    while end < len(lines) and lines[end].startswith(" "):
        end += 1
    lines[start:end] = repos.splitlines()
    manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return start + 1  # the 1-based line of repos: (the file's first line is ---)


def test_a_key_twice_on_one_line_is_named_once(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    at = _write_repos(packet, "repos: {app: {path: ../repo, path: ../repo, default: true}}")
    line = _refusal(tmp_path)
    assert f"duplicate key 'path' twice on line {at};" in line, line
    assert "first at line" not in line


def test_a_key_on_two_lines_names_both(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    at = _write_repos(packet, "repos:\n  app:\n    path: ../repo\n    path: ../repo\n")
    line = _refusal(tmp_path)
    assert f"duplicate key 'path' at line {at + 3} (first at line {at + 2});" in line, line
