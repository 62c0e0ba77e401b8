"""``status`` on a manifest that ``run`` refuses (a finding left from session 15).

``status`` reads the manifest as text for its ``prompt_dir:`` line only, so a
manifest whose YAML does not parse, whose ``repos:`` entry gives a key twice
or whose values have the wrong type passed it without a word, while the next
``run`` refused the packet. Whether the rest of the manifest loads is now the
loader's verdict, kept for the manifest's text (packet/manifest_check.py):
``status`` gives the loader's sentence in one ``warning:`` line and
``status --json`` as ``packet_error`` (exit 0: the state shown is valid), as
for a prompt file that does not load.

The installed ``prompt-runner`` runs as a real subprocess, each test with its
own cache directory (the conftest's ``XDG_CACHE_HOME``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet

PROMPT_RUNNER = Path(sys.executable).parent / "prompt-runner"

PROBE = """
import contextlib, io, json, sys
from prompt_runner.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[1:])
loaded = {name: name in sys.modules for name in ("yaml", "pydantic")}
print(json.dumps({"code": code, **loaded}))
"""


def _run(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROMPT_RUNNER), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def _refusal(tmp_path: Path) -> str:
    refused = _run("run", "demo", "--no-commit", cwd=tmp_path)
    assert refused.returncode == 2, refused
    (line,) = refused.stderr.splitlines()
    return line.removeprefix("error: ")


def _status_warning(tmp_path: Path, env: dict[str, str] | None = None) -> str:
    shown = _run("status", "demo", cwd=tmp_path, env=env)
    assert shown.returncode == 0, shown
    assert "Traceback" not in shown.stderr
    return shown.stderr


def _loads_heavy(tmp_path: Path) -> bool:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "status", "demo", "--json"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    doc = json.loads(proc.stdout.splitlines()[-1])
    assert doc["code"] == 0
    return bool(doc["yaml"] or doc["pydantic"])


def _edit_manifest(packet: Path, old: str, new: str) -> None:
    manifest = packet / "prompt_runner_packet.md"
    text = manifest.read_text(encoding="utf-8")
    assert old in text
    manifest.write_text(text.replace(old, new, 1), encoding="utf-8")


FAULTS = {
    # YAML that does not parse (an unclosed flow sequence)
    "invalid_yaml": ("repos:\n", "repos: [\n"),
    # a key given twice inside repos: (the text reader sees top-level keys only)
    "nested_duplicate": ("    default: true\n", "    default: true\n    default: false\n"),
    # a value of the wrong type inside repos: (the model refuses it)
    "wrong_type": ("    default: true\n", "    default: perhaps\n"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_status_says_the_manifest_does_not_load(tmp_path: Path, fault: str) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    assert _status_warning(tmp_path) == ""  # a manifest that loads: no warning
    _edit_manifest(packet, *FAULTS[fault])
    sentence = _refusal(tmp_path)
    assert "prompt_runner_packet.md" in sentence
    assert _status_warning(tmp_path) == f"warning: the packet does not load: {sentence}\n"
    doc = json.loads(_run("status", "demo", "--json", cwd=tmp_path).stdout)
    assert doc["packet_error"] == sentence


def test_the_verdict_is_kept_for_the_manifests_text(tmp_path: Path) -> None:
    """Once judged (or loaded by a run), a status of the same manifest text
    loads neither YAML nor pydantic; an edit is judged anew."""
    packet = make_packet(tmp_path, {"01": {}})
    assert _loads_heavy(tmp_path)  # nothing kept yet: the loader judges it
    assert not _loads_heavy(tmp_path)  # the same text: the kept verdict
    _edit_manifest(packet, "repos:\n", "repos: [\n")
    assert _loads_heavy(tmp_path)
    assert "does not load" in _status_warning(tmp_path)
    _edit_manifest(packet, "repos: [\n", "repos:\n")  # fixed: the old text, kept still
    assert not _loads_heavy(tmp_path)
    assert _status_warning(tmp_path) == ""


def test_a_run_keeps_the_verdict(tmp_path: Path) -> None:
    make_packet(tmp_path, {"01": {}})
    assert _run("run", "demo", "--no-commit", cwd=tmp_path).returncode == 0
    assert not _loads_heavy(tmp_path)


def test_with_the_cache_off_status_still_judges_the_manifest(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    env = {**os.environ, "PROMPT_RUNNER_CACHE_DIR": ""}
    assert _status_warning(tmp_path, env) == ""
    _edit_manifest(packet, "repos:\n", "repos: [\n")
    assert "does not load" in _status_warning(tmp_path, env)
