"""A reasoning_effort the provider refuses is named where it was set: the
manifest, the prompt's file, the profile's file (as paths that resolve from the
current directory), or the flag."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet, write_front_matter

CODEX = {"provider": "codex", "model": None, "profile": None}


def _packet(tmp_path: Path, manifest: dict[str, Any], prompt: dict[str, Any]) -> Path:
    return make_packet(
        tmp_path, {"01": {"verify": {"files_exist": ["a"]}, **prompt}}, manifest=manifest
    )


def _error(done: Any) -> str:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    assert "'ultra' is not supported by codex" in done.stderr
    line: str = done.stderr.strip().splitlines()[-1]
    return line


def test_set_in_the_manifest_names_the_manifest(tmp_path: Path) -> None:
    packet = _packet(tmp_path, {**CODEX, "reasoning_effort": "ultra"}, {})
    line = _error(cli("plan", "demo", cwd=tmp_path))
    assert line.startswith("error: demo/prompt_runner_packet.md: reasoning_effort:")
    assert (tmp_path / "demo/prompt_runner_packet.md") == packet / "prompt_runner_packet.md"
    assert "01_step.prompt.md" not in line


def test_set_in_the_prompt_names_the_prompt_by_a_path_from_the_cwd(tmp_path: Path) -> None:
    _packet(tmp_path, CODEX, {"reasoning_effort": "ultra"})
    line = _error(cli("plan", "demo", cwd=tmp_path))
    assert line.startswith("error: demo/prompts/01_step.prompt.md: reasoning_effort:")
    assert (tmp_path / "demo/prompts/01_step.prompt.md").is_file()


def test_set_by_the_flag_names_the_flag(tmp_path: Path) -> None:
    _packet(tmp_path, CODEX, {})
    line = _error(cli("plan", "demo", "--reasoning-effort", "ultra", cwd=tmp_path))
    assert line.startswith("error: --reasoning-effort (reasoning_effort=): ")
    assert ".prompt.md" not in line and "prompt_runner_packet.md" not in line


def test_set_in_a_profile_names_the_profile_file(tmp_path: Path) -> None:
    home = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"
    write_front_matter(
        home / "profiles" / "pu.md",
        {"name": "pu", "provider": "codex", "reasoning_effort": "ultra"},
        "# pu\n",
    )
    _packet(tmp_path, {"provider": None, "model": None, "profile": None}, {})
    line = _error(cli("plan", "demo", "--profile", "pu", cwd=tmp_path))
    assert "profiles/pu.md: reasoning_effort:" in line
    assert ".prompt.md" not in line


def test_a_provider_without_efforts_is_told_where_to_remove_it(tmp_path: Path) -> None:
    _packet(tmp_path, {"provider": "amp", "model": None, "reasoning_effort": "high"}, {})
    done = cli("plan", "demo", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("error: demo/prompt_runner_packet.md: reasoning_effort:")
    assert "has no reasoning effort setting" in line
    assert "for this prompt" not in line
