"""State outside the packet: one rule (StateLayout.of_packet) that every reader and writer honours.

A run given ``--state-dir`` (or ``$PROMPT_RUNNER_STATE_DIR``) writes nothing
under the packet, and ``status``, ``control`` and ``verify`` read the same
directory when told the same way.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from prompt_runner.state.layout import STATE_DIR_ENV, StateLayout
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under ``root`` (but ``.git``) -> (size, mtime_ns)."""
    out: dict[str, tuple[int, int]] = {}
    for path in sorted(root.rglob("*")):
        if ".git" in path.relative_to(root).parts:
            continue
        st = path.stat()
        out[str(path.relative_to(root))] = (st.st_size, st.st_mtime_ns if path.is_file() else 0)
    return out


def _packet(root: Path) -> Path:
    return make_packet(
        root,
        {
            "01": {
                "commit": "feat: one",
                "simulate": {"attempts": [{"writes": [{"path": "one.txt", "text": "1"}]}]},
                "verify": {"files_exist": ["one.txt"]},
            }
        },
    )


def test_the_layout_rule_explicit_then_environment_then_the_packet(tmp_path: Path) -> None:
    packet = tmp_path / "p"
    assert StateLayout.of_packet(packet).root == packet / ".prompt_runner"
    os.environ[STATE_DIR_ENV] = str(tmp_path / "env")
    assert StateLayout.of_packet(packet).root == tmp_path / "env"
    assert StateLayout.of_packet(packet, tmp_path / "given").root == tmp_path / "given"
    os.environ[STATE_DIR_ENV] = ""
    assert StateLayout.of_packet(packet).root == packet / ".prompt_runner"


def test_a_relative_environment_value_is_one_sentence(tmp_path: Path) -> None:
    os.environ[STATE_DIR_ENV] = "rel/state"
    with pytest.raises(UserError) as caught:
        StateLayout.of_packet(tmp_path)
    assert "PROMPT_RUNNER_STATE_DIR='rel/state' is a relative path" in str(caught.value)
    packet = _packet(tmp_path)
    done = cli("status", packet)
    assert done.returncode == 2 and "set it to an absolute directory" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_run_with_state_dir_writes_nothing_under_the_packet(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    state = tmp_path / "runtime" / "state"
    before = _tree(packet)
    done = cli("run", packet, "--state-dir", state)
    assert done.returncode == 0, done.stderr
    assert _tree(packet) == before
    assert not list(tmp_path.rglob(".prompt_runner"))
    assert "01:completed" in (state / "progress.log").read_text()
    assert (tmp_path / "repo" / "one.txt").is_file()
    # the readers find it when told the same way, and not otherwise
    told = json.loads(cli("status", packet, "--state-dir", state, "--json").stdout)
    assert told["prompts"]["01"]["status"] == "completed"
    assert json.loads(cli("status", packet, "--json").stdout)["prompts"] == {}
    assert cli("control", "status", packet, "--state-dir", state, "--json").returncode == 0
    assert not (packet / ".prompt_runner").exists()


def test_the_environment_variable_is_the_same_state_for_run_and_readers(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    state = tmp_path / "elsewhere"
    os.environ[STATE_DIR_ENV] = str(state)
    assert cli("run", packet).returncode == 0
    assert "01:completed" in (state / "progress.log").read_text()
    assert not (packet / ".prompt_runner").exists()
    assert prompt_runner.status(packet)["prompts"]["01"]["status"] == "completed"
    assert prompt_runner.plan(packet).state.root == state
    verified = cli("verify", packet, "--json")
    assert verified.returncode == 0 and not (packet / ".prompt_runner").exists()
    del os.environ[STATE_DIR_ENV]
    assert prompt_runner.status(packet)["prompts"] == {}


def test_the_plan_says_where_its_state_lives(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    doc = json.loads(cli("plan", packet, "--state-dir", tmp_path / "s", "--json").stdout)
    assert doc["state_dir"] == str(tmp_path / "s")
    library = prompt_runner.plan(packet, state_dir=str(tmp_path / "lib"))
    assert library.state.root == tmp_path / "lib"
    assert prompt_runner.plan(packet).to_dict()["state_dir"] == str(packet / ".prompt_runner")
