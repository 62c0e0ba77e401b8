"""``packet doctor`` and ``packet preflight`` see what ``run`` sees first: a
provider CLI that is not on PATH is a readiness error, not "runtime ready"
followed by ``run``'s exit 3 (a new user's finding). Real subprocesses with a
PATH that holds git and, in the ready case, a fake ``codex`` executable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.packets import make_packet

CODEX = {"provider": "codex", "model": "gpt-5", "permission_mode": "bypass"}


def _bin(tmp_path: Path, *, codex: bool) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    git = shutil.which("git")
    assert git is not None
    (bin_dir / "git").symlink_to(git)
    if codex:
        fake = bin_dir / "codex"
        fake.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
        fake.chmod(0o755)
    return bin_dir


def _run(tmp_path: Path, bin_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": str(bin_dir)}
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


MISSING = "provider 'codex' needs the `codex` CLI, which is not on PATH"


def test_doctor_and_preflight_refuse_what_run_refuses_a_missing_provider_cli(
    tmp_path: Path,
) -> None:
    make_packet(tmp_path, {"01": {}, "02": {}}, manifest=CODEX)
    bin_dir = _bin(tmp_path, codex=False)
    ran = _run(tmp_path, bin_dir, "run", "demo", "--no-commit")
    assert ran.returncode == 3 and MISSING in ran.stderr, ran

    doctor = _run(tmp_path, bin_dir, "packet", "doctor", "demo")
    assert doctor.returncode == 1, doctor
    assert f"NOT READY provider_missing provider 01: {MISSING}" in doctor.stdout
    assert doctor.stdout.rstrip().endswith("runtime NOT ready")

    doc = json.loads(_run(tmp_path, bin_dir, "packet", "doctor", "demo", "--json").stdout)
    assert doc["runtime_ready"] is False

    pre = _run(tmp_path, bin_dir, "packet", "preflight", "demo")
    assert pre.returncode == 1, pre
    report = json.loads(pre.stdout)
    assert report["runtime_ready"] is False
    [error] = report["readiness_errors"]  # one per distinct problem, naming its prompts
    assert error["kind"] == "provider_missing" and error["prompts"] == ["01", "02"]
    assert MISSING in error["reason"]


def test_a_failover_target_s_missing_cli_is_a_readiness_error_too(tmp_path: Path) -> None:
    failover = {"recovery": {"failover": [{"provider": "claude", "model": "haiku"}]}}
    make_packet(tmp_path, {"01": failover}, manifest=CODEX)
    bin_dir = _bin(tmp_path, codex=True)
    pre = _run(tmp_path, bin_dir, "packet", "preflight", "demo")
    assert pre.returncode == 1, pre
    [error] = json.loads(pre.stdout)["readiness_errors"]
    assert error["reason"].startswith("prompt 01: recovery.failover[0] cannot start, ")
    assert "`claude` CLI, which is not on PATH" in error["reason"]


def test_with_the_cli_on_path_doctor_and_preflight_are_ready(tmp_path: Path) -> None:
    make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}}, manifest=CODEX)
    bin_dir = _bin(tmp_path, codex=True)
    pre = _run(tmp_path, bin_dir, "packet", "preflight", "demo")
    assert pre.returncode == 0, pre
    assert json.loads(pre.stdout)["runtime_ready"] is True
    doctor = _run(tmp_path, bin_dir, "packet", "doctor", "demo")
    assert "runtime ready" in doctor.stdout, doctor
