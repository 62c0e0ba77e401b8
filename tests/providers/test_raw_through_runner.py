"""Unknown provider records flow through ``prompt-runner run`` as raw events, never crash it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, write_config
from tests.helpers.packets import make_packet
from tests.providers.conftest import case_dir


def test_unknown_records_and_garbage_become_raw_events_and_the_run_completes(
    tmp_path: Path,
) -> None:
    recorded = (case_dir("claude", "success_write") / "stdout.jsonl").read_text().splitlines()
    novel = json.dumps({"type": "brand_new_kind", "payload": "z" * 20_000})
    stdout = "\n".join([recorded[0], novel, "some banner text", *recorded[1:]]) + "\n"
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "claude")
    config = write_config(
        tmp_path / "fake.json", tmp_path / "rec.jsonl", [{"stdout": stdout, "exit_code": 0}]
    )
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"files_exist": ["README.md"]}}},
        manifest={"profile": None, "provider": "claude", "model": None},
    )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    logs = list((packet / ".prompt_runner").rglob("*.events.jsonl"))
    assert logs, "no JSONL event log was written"
    events = [json.loads(x) for log in logs for x in log.read_text().splitlines() if x]
    flat = [e.get("e") or e.get("data") or e for e in events]
    raws = [e for e in flat if e.get("kind") == "raw"]
    assert [r["type"] for r in raws] == ["brand_new_kind", "non_json"]
    assert raws[0]["line"].startswith('{"type": "brand_new_kind"')
    assert len(raws[0]["line"]) < 4100  # capped, not the 20 kB line
    assert raws[1]["line"] == "some banner text"
    assert any(e.get("kind") == "result" and e.get("ok") for e in flat)
