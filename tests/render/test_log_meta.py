"""``log_meta: full`` prints the provider's stderr and the failure's detail (issue 14).

The reference system's ``log_meta`` is ``none`` (the default) or ``full``;
``full`` shows what the CLI wrote on stderr and how the failure was judged.
A fake Codex CLI replays a failing session with a noisy stderr.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, write_config
from tests.helpers.packets import make_packet

STDERR = (
    "2026-01-01T00:00:00Z WARN codex_core::config: model_verbosity is deprecated\n"
    "thread 'main' reached the retry limit\n"
    "Error: unexpected status 401 Unauthorized: invalid api key\n"
)


def run(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    install_fake_cli(bin_dir, "codex")
    config = write_config(
        tmp_path / "fake.json", tmp_path / "rec.jsonl", [{"stderr": STDERR, "exit_code": 1}]
    )
    packet = tmp_path / "demo"
    if not packet.exists():
        make_packet(
            tmp_path,
            {"01": {"verify": {"files_exist": ["x.txt"]}}},
            manifest={
                "profile": None,
                "provider": "codex",
                "model": None,
                "recovery": {"retry": {"max_attempts": 0}, "repair": {"enabled": False}},
            },
        )
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env[CONFIG_ENV] = str(config)
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit", "--new-run",
         *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


def test_log_meta_full_shows_stderr_and_failure_detail(tmp_path: Path) -> None:
    quiet = run(tmp_path)
    assert quiet.returncode == 1, quiet.stdout + quiet.stderr
    assert "Error: unexpected status 401" in quiet.stdout  # the message, as always
    assert "model_verbosity is deprecated" not in quiet.stdout
    loud = run(tmp_path, "--log-meta", "full")
    assert loud.returncode == 1
    out = loud.stdout
    assert "  [01]     stderr:\n" in out
    assert "  [01]       2026-01-01T00:00:00Z WARN codex_core::config: model_verbosity" in out
    assert "  [01]       thread 'main' reached the retry limit\n" in out
    assert "  [01]     failure: class=provider_auth_claim" in out
    assert "retryable=" in out and "exit_code=1" in out


def test_log_meta_full_from_the_manifest(tmp_path: Path) -> None:
    run(tmp_path)  # builds the packet
    manifest = tmp_path / "demo" / "prompt_runner_packet.md"
    manifest.write_text(manifest.read_text().replace("---\n", '---\nlog_meta: "full"\n', 1))
    assert "model_verbosity is deprecated" in run(tmp_path).stdout
