"""Catalog H2: the ``agent_control`` block is validated before any session and is
part of the run fingerprint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import PacketChangedError, UserError
from prompt_runner.packet.loader import load_packet
from tests.agent_control._helpers import DONE, h_packet, prompts, run
from tests.helpers.cli import cli
from tests.helpers.packets import FAST, make_packet, write_front_matter


def packet_with(root: Path, control: dict[str, Any]) -> Path:
    return make_packet(
        root, {"01": {}}, manifest={"profile": None, "recovery": FAST, "agent_control": control}
    )


@pytest.mark.parametrize(
    ("control", "needle"),
    [
        ({"enabled": True, "max_iterations": 20}, "completion_verify"),
        ({"enabled": True, "completion_verify": {}}, "completion_verify"),
        ({"enabled": True, "completion_verify": {"files_exist": [DONE]}, "bogus": 1}, "bogus"),
        (
            {
                "enabled": True,
                "default_action": "finish",
                "completion_verify": {"files_exist": [DONE]},
            },
            "default_action",
        ),
        (
            {"enabled": True, "max_iterations": 0, "completion_verify": {"files_exist": [DONE]}},
            "max_iterations",
        ),
        (
            {"enabled": True, "completion_verify": {"files_exist": ["../escape"]}},
            "completion_verify",
        ),
    ],
)
def test_invalid_configuration_is_rejected_before_any_session(
    tmp_path: Path, control: dict[str, Any], needle: str
) -> None:
    packet = packet_with(tmp_path, control)
    with pytest.raises(UserError, match=needle):
        load_packet(packet)
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert not (packet / ".prompt_runner" / "prompts").exists()


def test_a_valid_configuration_loads(tmp_path: Path) -> None:
    control = {
        "enabled": True,
        "default_action": "repeat",
        "max_iterations": 20,
        "completion_verify": {"files_exist": [DONE]},
    }
    packet = load_packet(packet_with(tmp_path, control))
    assert packet.manifest.agent_control.default_action == "repeat"
    assert packet.completion_contract is not None


def test_changing_agent_control_during_an_unfinished_run_fails_closed(tmp_path: Path) -> None:
    packet = h_packet(tmp_path, default_action="repeat", max_iterations=1)
    result, _ = run(packet)
    assert result.exit_code == 1 and prompts(packet)["01"]["status"] == "iteration_limit"
    manifest = packet / "prompt_runner_packet.md"
    front = {
        "name": "demo",
        "provider": "simulated",
        "model": "simulated-demo",
        "recovery": {**FAST, "repair": {"enabled": False}},
        "repos": {"app": {"path": "../repo", "default": True}},
        "agent_control": {
            "enabled": True,
            "default_action": "repeat",
            "max_iterations": 3,
            "completion_verify": {"files_exist": [{"repo": "app", "path": DONE}]},
        },
    }
    write_front_matter(manifest, front, "# demo\n")
    with pytest.raises(PacketChangedError):
        run(packet, remaining=True)
    again, _ = run(packet, remaining=True, new_run=True)
    assert again.run_id != result.run_id
