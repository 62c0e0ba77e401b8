"""A stdout that cannot carry a packet's non-ASCII name ends no command in an
error (cli/_out.py): JSON is written ASCII-escaped (the same document), human
text with backslash escapes. Real runs, real subprocesses, a real
``PYTHONIOENCODING=ascii``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prompt_runner.state.status_cache import SETTLED_NS
from tests.helpers.packets import make_packet


@pytest.fixture(scope="module")
def packet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("enc")
    made = make_packet(root, {"01": {"name": "prüfung 🎉"}}, manifest={"name": "Früh"})
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(made), "--no-commit"],
        check=True,
        capture_output=True,
    )
    return made


def _run(*args: str, encoding: str) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONIOENCODING=encoding)
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args], capture_output=True, env=env
    )


@pytest.mark.parametrize("command", [("status",), ("list",), ("control", "status")])
def test_json_under_an_ascii_stdout_is_the_same_document_in_ascii(
    packet: Path, command: tuple[str, ...]
) -> None:
    utf8 = _run(*command, str(packet), "--json", encoding="utf-8")
    assert utf8.returncode == 0, utf8.stderr
    assert "prüfung".encode() in utf8.stdout  # written as is where the encoding can
    for _ in range(2):  # folded, then (status, list) a kept text
        ascii_ = _run(*command, str(packet), "--json", encoding="ascii")
        assert ascii_.returncode == 0 and ascii_.stderr == b"", ascii_.stderr
        ascii_.stdout.decode("ascii")  # nothing but ASCII
        assert json.loads(ascii_.stdout) == json.loads(utf8.stdout)
        time.sleep(SETTLED_NS / 1e9 + 0.2)


@pytest.mark.parametrize("command", [("status",), ("list",), ("control", "status")])
def test_text_under_an_ascii_stdout_is_backslash_escaped(
    packet: Path, command: tuple[str, ...]
) -> None:
    proc = _run(*command, str(packet), encoding="ascii")
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    assert b"internal error" not in proc.stderr
    proc.stdout.decode("ascii")
    if command == ("list",):
        assert b"Fr\\xfch" in proc.stdout and b"pr\\xfcfung \\U0001f389" in proc.stdout


def test_an_error_document_under_an_ascii_stdout(tmp_path: Path) -> None:
    missing = tmp_path / "nö"
    proc = _run("status", str(missing), "--json", encoding="ascii")
    assert proc.returncode == 2 and b"internal error" not in proc.stderr
    assert "nö" in json.loads(proc.stdout)["error"]


@pytest.mark.parametrize("handler", ["replace", "ignore"])
@pytest.mark.parametrize("command", [("status",), ("list",), ("control", "status")])
def test_a_lossy_error_handler_loses_no_character(
    packet: Path, command: tuple[str, ...], handler: str
) -> None:
    # a new user's finding: PYTHONIOENCODING=ascii:replace printed "Fr?h ?"
    utf8 = _run(*command, str(packet), "--json", encoding="utf-8")
    for _ in range(2):  # folded, then (status, list) a kept text
        lossy = _run(*command, str(packet), "--json", encoding=f"ascii:{handler}")
        assert lossy.returncode == 0 and lossy.stderr == b"", lossy.stderr
        assert json.loads(lossy.stdout) == json.loads(utf8.stdout)
        time.sleep(SETTLED_NS / 1e9 + 0.2)
    if command == ("list",):
        text = _run(*command, str(packet), encoding=f"ascii:{handler}")
        assert b"Fr\\xfch" in text.stdout and b"pr\\xfcfung \\U0001f389" in text.stdout
