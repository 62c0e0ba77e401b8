"""Cold start: the hot paths must not import heavy modules they don't need."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from prompt_runner.state.status_cache import SETTLED_NS
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


def probe(*args: str, heavy: tuple[str, ...] = ()) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY + WEB + heavy), *args],
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


def test_a_kept_status_json_loads_no_encoder_no_store_and_no_typing(tmp_path: Path) -> None:
    """The second ``status --json`` of an ended run prints the kept text
    (state/status_cache.py): no JSON encoder, no store, no lock, no typing."""
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    time.sleep(SETTLED_NS / 1e9 + 0.2)  # only files older than this are kept
    lean = ("orjson", "typing", "prompt_runner.state.store", "prompt_runner.state.lock")
    first = probe("status", str(packet), "--json", heavy=lean)
    folded = first["heavy"]
    assert first["code"] == 0 and isinstance(folded, list) and "orjson" in folded
    assert (packet / ".prompt_runner" / "status-cache").is_file()
    assert probe("status", str(packet), "--json", heavy=lean) == {"code": 0, "heavy": []}


def test_control_status_json_loads_no_typing_store_or_datetime(tmp_path: Path) -> None:
    """``control status --json`` reads the snapshot through ``control.runs`` alone:
    not the store (its event stream, its inbox), not the rest of the client, not
    ``typing`` nor ``datetime``, nor ``shutil`` for argparse's help width."""
    packet = make_packet(tmp_path, {"01": {}})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    lean = (
        "typing",
        "datetime",
        "prompt_runner.control.store",
        "prompt_runner.control.client",
        "prompt_runner.control.requests",
        "prompt_runner.state.records",
        "shutil",
    )
    assert probe("control", "status", str(packet), "--json", heavy=lean) == {
        "code": 0,
        "heavy": [],
    }


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


WATCH_PROBE = """
import re, sys  # as the console script does, before the command
before = set(sys.modules)
from prompt_runner.cli.main import main
code = main(["watch", sys.argv[1], "--once", "--json"])
loaded = sorted(set(sys.modules) - before)
sys.stderr.write(__import__("json").dumps({"code": code, "loaded": loaded}) + "\\n")
"""

NOT_ON_THE_WATCH_PATH = (
    "pathlib",
    "urllib",
    "urllib.parse",
    "ipaddress",
    "warnings",
    "prompt_runner.api_watch",
    "prompt_runner.api_calls",
    "prompt_runner.api_status",
    "prompt_runner.state.layout",
    "prompt_runner.state.lock",
)


def _watch_once(packet: Path) -> tuple[dict[str, object], list[str]]:
    ran = subprocess.run(
        [sys.executable, "-c", WATCH_PROBE, str(packet)],
        capture_output=True,
        text=True,
        check=True,
    )
    probe = json.loads(ran.stderr.strip().splitlines()[-1])
    assert probe["code"] == 0
    return json.loads(ran.stdout), probe["loaded"]


def test_watch_once_json_imports_no_pathlib(tmp_path: Path) -> None:
    """``watch PACKET --once --json`` takes its sample on text paths: no
    ``pathlib`` (with ``urllib.parse`` and ``ipaddress``), no ``api_*`` module,
    no pathlib state layout; the lock module only while ``run.pid`` exists --
    and then still no pathlib. The first sample reads the manifest with YAML
    (which loads pathlib) and keeps the reading; the ones after it use it."""
    from prompt_runner.state.lock import current_identity

    packet = make_packet(tmp_path, {"01": {}})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    first, loaded = _watch_once(packet)
    assert "yaml" in loaded and "pathlib" in loaded  # the manifest read anew, and kept
    second, loaded = _watch_once(packet)
    assert [m for m in NOT_ON_THE_WATCH_PATH if m in loaded] == []
    assert "prompt_runner.watch.facts" in loaded  # the probe saw the sample's imports
    assert (second["runner"], second["prompt"], second["root"]) == (
        "down",
        "01",
        str(packet.resolve()),
    )
    assert {k: v for k, v in second.items() if k != "at"} == {
        k: v for k, v in first.items() if k != "at"
    }
    (packet / ".prompt_runner" / "run.pid").write_text(current_identity().render())
    held, loaded = _watch_once(packet)  # this test's process holds the packet: up
    assert (held["runner"], held["pid"]) == ("up", os.getpid())
    assert "prompt_runner.state.lock" in loaded
    assert [m for m in NOT_ON_THE_WATCH_PATH if m in loaded] == ["prompt_runner.state.lock"]
