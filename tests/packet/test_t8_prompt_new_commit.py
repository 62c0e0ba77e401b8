"""``prompt new --commit '   '`` names the flag, not the built-in template (new-user t8)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet


@pytest.mark.parametrize("blank", ["   ", ""])
def test_a_blank_commit_flag_is_blamed_on_the_flag(tmp_path: Path, blank: str) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}})
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "prompt_runner",
            "prompt",
            "new",
            "02",
            "--packet",
            str(packet),
            "--name",
            "two",
            "--commit",
            blank,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    said = res.stderr.strip()
    assert res.returncode == 2, res.stdout + res.stderr
    assert said.count("\n") == 0 and "Traceback" not in said
    assert "--commit: is blank" in said and "leave --commit out" in said
    assert "template" not in said
    assert not list((packet / "prompts").glob("02_*"))
