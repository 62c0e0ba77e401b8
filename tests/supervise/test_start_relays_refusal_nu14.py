"""``start`` relays the sentence of a runner that refused its input before it
was live as one sentence of its own: one ``error:``, no stray full stop, and
the file named as the user sees it from where they typed ``start`` (nu14 04),
not from the runner's working directory (the packet's, a workspace's clone)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import prompt_runner
from prompt_runner.errors import SHOWN_FROM_ENV
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.helpers.workspaces import make_workspace


def _refused(said: str) -> None:
    assert said.count("error:") == 1, said
    assert ".;" not in said, said
    assert said.rstrip().endswith("; fix what it names, then start again."), said


def test_a_packets_refusal_names_the_file_from_the_starters_directory(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert cli("run", packet, cwd=tmp_path).returncode == 0
    (packet / ".prompt_runner" / "runs" / "current.json").write_text("{bad\n")
    ran = cli("run", packet.name, "--remaining", cwd=tmp_path)
    assert ran.returncode == 2
    shown = f"{packet.name}/.prompt_runner/runs/current.json: is not valid JSON"
    assert shown in ran.stderr, ran.stderr

    started = cli("start", packet.name, "--remaining", cwd=tmp_path, timeout=90)
    assert started.returncode == 2, (started.stdout, started.stderr)
    said = started.stderr
    _refused(said)
    assert f"before it was live: {shown} at line 1; delete it;" in said, said
    inside = cli("start", "--remaining", cwd=packet, timeout=90)  # typed in the packet
    assert inside.returncode == 2
    assert "live: .prompt_runner/runs/current.json: is not valid JSON" in inside.stderr


def test_a_bad_prompt_file_is_named_from_the_starters_directory(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": 5}}})
    started = cli("start", packet.name, cwd=tmp_path, timeout=90)
    assert started.returncode == 2, (started.stdout, started.stderr)
    _refused(started.stderr)
    name = next(p.name for p in (packet / "prompts").iterdir())
    assert f"live: {packet.name}/prompts/{name}: verify.files_exist:" in started.stderr


def test_a_workspaces_refusal_names_the_file_from_the_starters_directory(
    tmp_path: Path,
) -> None:
    manifest = make_workspace(tmp_path)
    prompt_runner.prepare_workspace(manifest)
    ws = prompt_runner.load_workspace(manifest)
    current = ws.layout.state.current_run
    current.parent.mkdir(parents=True, exist_ok=True)
    current.write_text("{bad\n")
    here = ws.layout.state.root.parent  # the workspace's runtime root, above its state
    started = cli("start", "--workspace", manifest, cwd=here, timeout=90)
    assert started.returncode == 2, (started.stdout, started.stderr)
    _refused(started.stderr)
    shown = os.path.relpath(current, here)
    assert not shown.startswith(".."), shown
    assert f"live: {shown}: is not valid JSON" in started.stderr, started.stderr


def _run(packet: Path, *args: str, shown_from: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, SHOWN_FROM_ENV: str(shown_from)}
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", *args],
        cwd=packet,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_runner_names_files_from_its_starter_and_its_children_do_not(tmp_path: Path) -> None:
    """The runner ``start`` launches (its cwd the packet) words paths from the
    starter's directory; what it runs (a verify command here) is not told it."""
    unset = 'test -z "${PROMPT_RUNNER_SHOWN_FROM+set}"'
    check = {"exec": "sh", "args": ["-c", unset], "timeout_ms": 10000}
    packet = make_packet(tmp_path, {"01": {"verify": {"commands": [check]}}})
    ran = _run(packet, shown_from=tmp_path)
    assert ran.returncode == 0, (ran.stdout, ran.stderr)
    (packet / ".prompt_runner" / "runs" / "current.json").write_text("{bad\n")
    refused = _run(packet, "--remaining", shown_from=tmp_path)
    assert refused.returncode == 2
    assert "error: demo/.prompt_runner/runs/current.json: is not valid" in refused.stderr
