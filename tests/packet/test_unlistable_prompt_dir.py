"""A prompt directory that exists but cannot be listed is an error, never "0 prompts".

Root reads every directory, so the command runs as the unprivileged user
``nobody`` through ``setpriv`` (util-linux); the test skips, saying why, where
that is not possible (not root, no setpriv, an interpreter nobody cannot run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    # pytest's tmp_path is private to root; nobody must be able to reach the packet.
    path = Path(tempfile.mkdtemp(prefix="pr-unlistable-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _as_nobody(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPT_RUNNER_")}
    env["PROMPT_RUNNER_CACHE_DIR"] = ""  # off: nobody has no cache dir of its own
    env["HOME"] = str(cwd)
    return subprocess.run(
        [*NOBODY, sys.executable, "-m", "prompt_runner", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_an_unreadable_prompt_dir_is_refused_in_one_sentence(shared_dir: Path) -> None:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run the command as a user the directory refuses")
    probe = subprocess.run(
        [*NOBODY, sys.executable, "-c", "import prompt_runner"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip("the user nobody cannot run this interpreter (its path is private)")
    packet = shared_dir / "demo"
    packet.mkdir()
    (packet / "prompt_runner_packet.md").write_text("---\nname: demo\n---\n", encoding="utf-8")
    prompts = packet / "prompts"
    prompts.mkdir()
    (prompts / "01_a.prompt.md").write_text("---\nid: '01'\n---\nDo it.\n", encoding="utf-8")
    for path in (packet, packet / "prompt_runner_packet.md", prompts / "01_a.prompt.md"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    prompts.chmod(0o311)  # search but no read: the directory cannot be listed

    listed = _as_nobody("list", str(packet), cwd=shared_dir)

    assert listed.returncode == 2, listed
    assert "0 prompt" not in listed.stdout
    assert "Traceback" not in listed.stderr
    assert "cannot be listed" in listed.stderr
    assert "prompts" in listed.stderr and "prompt_dir" in listed.stderr
