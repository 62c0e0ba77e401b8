"""An unknown ``provider`` names the file (or the flag) that set it, as its
neighbours ``reasoning_effort`` and ``permission_mode`` do."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


def test_an_unknown_provider_names_the_prompt_file(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {"provider": "gpt"}})
    result = pr("run", packet)
    assert result.code == 2, result.err
    assert "02_" in result.err and ".prompt.md: provider: unknown provider 'gpt'" in result.err
    assert "use one of simulated" in result.err and result.err.count("\n") == 1


def test_an_unknown_provider_names_the_manifest(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"provider": "gpt"})
    result = pr("plan", packet)
    assert result.code == 2, result.err
    assert "prompt_runner_packet.md: provider: unknown provider 'gpt'" in result.err
    with pytest.raises(UserError, match=r"--provider \(provider=\): unknown provider 'x'"):
        api.plan(packet, provider="x")
