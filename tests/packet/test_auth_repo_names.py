"""Repo names YAML 1.1 reads as booleans (``on``, ``yes``...) are written quoted,
as ``true`` already was, so the manifest the tool writes loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.packet.loader import load_packet
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo


@pytest.mark.parametrize("name", ["on", "yes", "Off", "NO"])
def test_packet_new_and_add_repo_quote_boolean_looking_names(tmp_path: Path, name: str) -> None:
    make_git_repo(tmp_path / "app")
    made = cli(
        "packet", "new", "p", "--root", tmp_path, "--repo", f"{name}=./app", "--default-repo", name,
        cwd=tmp_path,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    other = "yes" if name != "yes" else "off"
    added = cli("packet", "add-repo", other, "./app", "--packet", "p", cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    text = (tmp_path / "p" / "prompt_runner_packet.md").read_text(encoding="utf-8")
    assert f'"{name}":' in text and f'"{other}":' in text
    packet = load_packet(tmp_path / "p")
    assert set(packet.repos) >= {name, other}
    assert packet.default_repo == name
