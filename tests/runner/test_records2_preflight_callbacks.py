"""A prompt completed by pre-flight verification tells the observers what a
session's completion does: on_prompt_started, then on_prompt_completed with its
record (source preflight_verify), once (t7 #7)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import prompt_runner
from tests.helpers.packets import make_packet


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


# -- 1. a pre-flight completion fires the observers' callbacks (t7 #7) ---------------


def test_a_prompt_completed_by_preflight_verification_fires_its_callbacks_once(
    tmp_path: Path,
) -> None:
    packet = make_packet(
        tmp_path,
        {
            pid: {
                "commit": f"feat: {pid}",
                "simulate": {"attempts": [{"writes": [{"path": f"f{pid}.txt", "text": "hi\n"}]}]},
                "verify": {"contains": [{"path": f"f{pid}.txt", "text": "hi"}]},
            }
            for pid in ("01", "02")
        },
    )
    repo = tmp_path / "repo"
    (repo / "f01.txt").write_text("hi\n")  # 01's work, done and committed by hand
    git(repo, "add", "f01.txt")
    git(repo, "commit", "-qm", "done by hand")
    events: list[tuple[Any, ...]] = []
    result = prompt_runner.run(
        packet,
        runtime_store="file",
        committer="git",
        remaining=True,
        on_prompt_started=lambda p: events.append(("started", p)),
        on_prompt_completed=lambda p, rec: events.append(("completed", p, rec.get("source"))),
    )
    assert result.prompts == {"01": "completed", "02": "completed"}
    assert prompt_runner.status(packet)["prompts"]["01"]["source"] == "preflight_verify"
    assert events == [
        ("started", "01"),
        ("completed", "01", "preflight_verify"),
        ("started", "02"),
        ("completed", "02", "verifier"),
    ]
