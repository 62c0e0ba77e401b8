"""A pre-flight verification that fails leaves a prompt that never started without a record.

Found by a fresh tester: a resumed run (`run --remaining`) judges the prompts
it may complete without a session. Judging prompt 02 -- amended while no run
ran -- wrote the amendments in force to 02's prompt log, so the resumed run,
stopped during 01, left 02 with a record and no status: `status` then called
it "no record ... the state directory was damaged" and left it out of
`pending`, though 02 had never started. A pre-flight verification now writes
to the prompt's log only when it passes (the prompt completes with it).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo


def _packet(tmp_path: Path) -> Path:
    make_git_repo(tmp_path / "app", {"R": "b\n"})
    packet = tmp_path / "pkt"
    (packet / "prompts").mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text(
        "---\nname: t\nprofile: simulated-default\nprovider: simulated\n"
        'repos:\n  app: {path: "../app", default: true}\n---\n# t\n'
    )
    for pid in ("01", "02"):
        (packet / "prompts" / f"{pid}_p.prompt.md").write_text(
            f'---\nid: "{pid}"\ntargets: ["app"]\nsimulate:\n  attempts:\n'
            f'    - delay_ms: 20000\n      writes:\n        - {{path: "f{pid}.txt", text: "hi"}}\n'
            f'verify:\n  contains:\n    - {{path: "f{pid}.txt", text: "hi"}}\n---\n# p{pid}\n'
        )
    return packet


def _stop_once_01_runs(packet: Path, *extra: str) -> None:
    """Run the packet, and end the run with SIGTERM once prompt 01's session is under way."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    logs = packet / ".prompt_runner" / "logs"
    seen = len(list(logs.glob("prompt-01-*.log"))) if logs.is_dir() else 0
    deadline = time.monotonic() + 60
    while len(list(logs.glob("prompt-01-*.log"))) <= seen:
        assert proc.poll() is None and time.monotonic() < deadline, "01 never started"
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)


def test_a_prompt_judged_before_the_run_stopped_is_still_pending(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    _stop_once_01_runs(packet)
    amended = cli("control", "amend", packet, "02", "--add-file", "g.txt", "--reason", "r")
    assert amended.returncode == 0, amended.stderr
    _stop_once_01_runs(packet, "--remaining")

    shown = cli("status", packet)
    assert shown.returncode == 0, shown.stderr
    assert "no record" not in shown.stdout and "damaged" not in shown.stdout, shown.stdout
    line = next(ln for ln in shown.stdout.splitlines() if ln.strip().startswith("02"))
    assert "pending" in line and "not run yet" in line, shown.stdout
    assert "not run: 02" in shown.stdout, shown.stdout
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert doc["pending"] == ["02"], doc["pending"]
    assert "02" not in doc["prompts"], doc["prompts"].get("02")
