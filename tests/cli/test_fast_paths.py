"""The argparse-free paths (cli/fast.py) print what the full command prints:
``control status --json`` of an ended run, ``status --json`` from its kept
text in every form of the line; a running snapshot, a damaged one and a
damaged kept text go to the full command. Real runs, real subprocesses."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prompt_runner.cli.exits import Invocation, run_wrapper
from prompt_runner.cli.main import _command
from prompt_runner.state.status_cache import SETTLED_NS
from tests.helpers.packets import make_packet


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fast")
    packet = make_packet(root, {"01": {}, "02": {}})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    return root


@pytest.fixture
def packet(ran: Path, tmp_path: Path) -> Path:
    subprocess.run(["cp", "-a", str(ran), str(tmp_path / "w")], check=True)
    return tmp_path / "w" / "demo"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args], capture_output=True, text=True, cwd=cwd
    )


def _full(*args: str) -> tuple[int, str]:
    """The full command's exit code and stdout (argparse, the handler), in process."""
    buffer = io.BytesIO()
    out = io.TextIOWrapper(buffer, encoding="utf-8", newline="")
    invocation = Invocation(json="--json" in args, debug=False)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = run_wrapper(lambda: _command(list(args), invocation), invocation)
        out.flush()
    return code, buffer.getvalue().decode("utf-8")


def test_control_status_json_is_the_full_commands(packet: Path) -> None:
    (packet / ".prompt_runner" / "control" / "requests").mkdir(exist_ok=True)
    (packet / ".prompt_runner" / "control" / "requests" / "r1.json").write_text("{}")
    for argv, cwd in (
        (("control", "status", str(packet), "--json"), None),
        (("control", "status", "--json", str(packet)), None),
        (("control", "status", "--json"), packet),
    ):
        fast = _cli(*argv, cwd=cwd)
        assert fast.returncode == 0, fast.stderr
        assert json.loads(fast.stdout)["pending_requests"] == 1
        assert (0, fast.stdout) == _full("control", "status", str(packet), "--json")


def test_a_running_snapshot_is_judged_by_the_full_command(packet: Path) -> None:
    path = packet / ".prompt_runner" / "control" / "snapshot.json"
    snap = json.loads(path.read_text())
    path.write_text(json.dumps(dict(snap, status="running")))
    doc = json.loads(_cli("control", "status", str(packet), "--json").stdout)
    assert doc["status"] == "unknown" and doc["recorded_status"] == "running"  # no runner


def test_a_damaged_snapshot_is_the_full_commands_error(packet: Path) -> None:
    path = packet / ".prompt_runner" / "control" / "snapshot.json"
    path.write_text('{"status": "completed"')  # torn
    proc = _cli("control", "status", str(packet), "--json")
    assert _full("control", "status", str(packet), "--json")[0] == proc.returncode == 2
    doc = json.loads(proc.stdout)
    assert doc["kind"] == "StateError"  # the full command's error: the snapshot named
    assert "demo/.prompt_runner/control/snapshot.json: is not valid JSON" in doc["error"]


def test_status_json_from_its_kept_text_in_every_form(packet: Path) -> None:
    time.sleep(SETTLED_NS / 1e9 + 0.2)
    folded = _cli("status", str(packet), "--json")
    assert folded.returncode == 0
    assert (packet / ".prompt_runner" / "status-cache").is_file()
    for argv, cwd in (
        (("status", str(packet), "--json"), None),
        (("status", "--json", str(packet)), None),
        (("status", "--json"), packet),
        (("status", str(packet / "prompt_runner_packet.md"), "--json"), None),
        (("status", "--js", str(packet)), None),  # an abbreviation: the full parser
    ):
        proc = _cli(*argv, cwd=cwd)
        assert (proc.returncode, proc.stdout) == (0, folded.stdout), argv


def test_a_damaged_kept_status_text_is_folded_anew(packet: Path) -> None:
    time.sleep(SETTLED_NS / 1e9 + 0.2)
    folded = _cli("status", str(packet), "--json").stdout
    cache = packet / ".prompt_runner" / "status-cache"
    data = bytearray(cache.read_bytes())
    at = data.rindex(b'"alive"')
    data[at + 1] = ord("A")  # same length, last bytes of the text: the check refuses it
    cache.write_bytes(bytes(data))
    os.utime(cache)
    assert _cli("status", str(packet), "--json").stdout == folded
