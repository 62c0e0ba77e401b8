"""Cold start: the hot paths must not import heavy modules they don't need."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.helpers.packets import make_packet

HEAVY = ("pydantic", "yaml", "ruamel", "watchfiles", "apprise", "prompt_runner.packet.models")
WEB = ("starlette", "uvicorn", "sse_starlette", "prompt_runner.dashboard")
"""The dashboard's server (the `dashboard` extra): only `prompt-runner dashboard` loads it."""

PROBE = """
import contextlib, io, json, sys
from prompt_runner.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
heavy = [m for m in {heavy!r} if m in sys.modules]
print(json.dumps({{"code": code, "heavy": heavy}}))
"""


def probe(*args: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY + WEB), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_help_and_version_import_nothing_heavy() -> None:
    assert probe("--help") == {"code": 0, "heavy": []}
    assert probe("--version") == {"code": 0, "heavy": []}


def test_status_json_imports_nothing_heavy(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    assert probe("status", str(packet), "--json") == {"code": 0, "heavy": []}
    assert probe("status", str(packet)) == {"code": 0, "heavy": []}


def test_version_prints_only_the_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert proc.stdout.count("\n") == 1 and proc.stdout.strip().count(".") == 2
    proc = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "version", "--json"], capture_output=True, text=True
    )
    assert "version" in json.loads(proc.stdout)


def test_control_and_dashboard_help_load_no_web_server(tmp_path: Path) -> None:
    """The control commands (and the dashboard's --help) never import Starlette,
    uvicorn or the dashboard package: only serving the dashboard does."""
    packet = make_packet(tmp_path, {"01": {}})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    for args in (("control", "status", str(packet)), ("control", "log", str(packet))):
        assert [m for m in probe(*args)["heavy"] if m in WEB] == [], args
    assert probe("dashboard", "--help") == {"code": 0, "heavy": []}
