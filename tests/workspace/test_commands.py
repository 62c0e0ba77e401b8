"""W resolution (a path, a registered id, found from the current directory) and
--workspace on verify, status, control and watch."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.workspace.runspec import run_command
from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    manifest = make_workspace(tmp_path)
    prompt_runner.prepare_workspace(manifest)
    cmd = run_command(prompt_runner.load_workspace(manifest))
    done = subprocess.run(
        cmd.argv, cwd=cmd.cwd, env=cmd.full_env(os.environ), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return manifest


def test_w_is_a_path_an_id_or_found_from_the_current_directory(
    manifest: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = prompt_runner.load_workspace(manifest)
    assert prompt_runner.resolve_workspace(manifest) == ws
    assert prompt_runner.resolve_workspace("demo-ws") == ws
    monkeypatch.chdir(ws.clone("lib"))
    assert prompt_runner.resolve_workspace(None) == ws
    monkeypatch.chdir(tmp_path / "author")
    with pytest.raises(UserError, match="is not a packet, and no registered workspace holds it"):
        prompt_runner.resolve_workspace(None)
    with pytest.raises(UserError, match="no workspace 'nope' is registered"):
        prompt_runner.resolve_workspace("nope")
    # a second registered workspace over the same manifest directory: ambiguous there
    other = manifest.with_name("other.yml")
    other.write_text(manifest.read_text().replace("id: demo-ws", "id: other-ws"))
    prompt_runner.prepare_workspace(other)
    monkeypatch.chdir(manifest.parent)
    with pytest.raises(UserError, match=r"several registered workspaces .*demo-ws, other-ws"):
        prompt_runner.resolve_workspace(None)


def test_the_commands_read_the_workspace_state(manifest: Path) -> None:
    ws = prompt_runner.load_workspace(manifest)
    for clone in (ws.clone("app"), ws.clone("lib")):
        assert not list(clone.rglob(".prompt_runner"))  # state never in a clone
        assert (
            subprocess.run(
                ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True
            ).stdout
            == ""
        )
    status = json.loads(cli("status", "--workspace", "demo-ws", "--json").stdout)
    assert status["state"] == "completed"
    verified = cli("verify", "--workspace", manifest, "--json")
    assert verified.returncode == 0 and json.loads(verified.stdout)["pass"] is True
    snap = cli("control", "status", "--workspace", "demo-ws", "--json")
    assert snap.returncode == 0, snap.stderr
    assert json.loads(snap.stdout)["status"] == "completed"
    events = cli("control", "events", "--workspace", "demo-ws", "--json")
    assert events.returncode == 0 and "run_" in events.stdout
    contract = cli("control", "contract", "--workspace", "demo-ws", "01", "--json")
    assert contract.returncode == 0, contract.stderr
    watched = cli("watch", "--workspace", "demo-ws", "--once", "--json")
    assert watched.returncode == 0, watched.stderr
    # found from the current directory too (inside a clone)
    here = cli("status", "--workspace", manifest, "--json", cwd=ws.clone("app"))
    assert json.loads(here.stdout)["workspace"] == "demo-ws"
    # the plain packet-local status of the clone's packet sees nothing: nothing is in there
    local = json.loads(cli("status", ws.packet_dir, "--json").stdout)
    assert local["prompts"] == {}


def test_workspace_and_a_packet_or_state_dir_are_refused(manifest: Path, tmp_path: Path) -> None:
    both = cli("status", tmp_path, "--workspace", manifest)
    assert both.returncode == 2 and "give --workspace or a packet, not both" in both.stderr
    twice = cli("status", "--workspace", manifest, "--state-dir", tmp_path)
    assert twice.returncode == 2 and "give --workspace or --state-dir" in twice.stderr
    unknown = cli("control", "status", "--workspace", "nope")
    assert unknown.returncode == 2 and "no workspace 'nope' is registered" in unknown.stderr


def test_a_bare_stop_outside_any_packet_names_both_ways_to_name_the_run(tmp_path: Path) -> None:
    # new user s13 #7: it said "--workspace: no registered workspace holds the
    # current directory", a flag the user never gave, and never `stop PACKET`
    from tests.helpers.cli import cli

    plain = tmp_path / "plain"
    plain.mkdir()
    done = cli("stop", cwd=plain)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a packet, and no registered workspace holds it" in done.stderr, done.stderr
    assert "`prompt-runner stop PACKET`" in done.stderr and "--workspace:" not in done.stderr
