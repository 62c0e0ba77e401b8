"""C: misnamed prompt files are reported, a packet without prompts is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.source import read_packet_source
from tests.cli.inproc import PR
from tests.helpers.packets import make_packet

NOT_LOADED = (
    "warning: prompts/02_p.md is not a prompt file (prompt files end in .prompt.md); "
    "it was not loaded"
)


def _misnamed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch | None = None) -> Path:
    packet = make_packet(tmp_path, {"01": {}, "02": {}, "03": {}})
    if monkeypatch is not None:
        monkeypatch.chdir(packet)  # messages name files from here: prompts/...
    prompts = packet / "prompts"
    (prompts / "02_step.prompt.md").rename(prompts / "02_p.md")
    (prompts / "01_step.prompt.checklist.md").write_text("# checklist\n")
    return packet


def test_the_loader_lists_markdown_files_that_are_not_prompts(tmp_path: Path) -> None:
    packet = _misnamed(tmp_path)
    (packet / "prompts" / "notes.txt").write_text("not markdown\n")
    expected = (packet / "prompts" / "02_p.md",)
    assert read_packet_source(packet).ignored == expected
    loaded = load_packet(packet)
    assert loaded.ignored == expected
    assert loaded.ids() == ["01", "03"]


@pytest.mark.parametrize("command", ["run", "plan"])
def test_run_and_plan_warn_about_each_ignored_file(
    tmp_path: Path, pr: PR, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = _misnamed(tmp_path, monkeypatch)
    result = pr(command, packet, "--dry-run", "--no-commit")
    assert result.code == 0, result.err
    assert NOT_LOADED in result.err.splitlines()
    assert "02_p.md" not in result.out


def test_the_warning_keeps_json_output_clean(
    tmp_path: Path, pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = _misnamed(tmp_path, monkeypatch)
    result = pr("plan", packet, "--json")
    assert result.code == 0
    assert json.loads(result.out)["selected"] == ["01", "03"]
    assert NOT_LOADED in result.err


@pytest.mark.parametrize(
    ("layout", "why"),
    [
        ("renamed", "has no prompts (there is no prompts/ directory)"),
        ("file", "has no prompts (prompts is a file, not a directory)"),
        ("empty", "has no prompts;"),
    ],
)
@pytest.mark.parametrize("command", ["run", "plan", "verify"])
def test_a_packet_without_prompts_is_an_error(
    tmp_path: Path, pr: PR, command: str, layout: str, why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # messages name files from here: demo
    packet = make_packet(tmp_path, {"01": {}})
    prompts = packet / "prompts"
    (prompts / "01_step.prompt.md").unlink()
    if layout == "renamed":
        prompts.rename(packet / "prompt")
    elif layout == "file":
        prompts.rmdir()
        prompts.write_text("")
    result = pr(command, packet, *(["--no-commit"] if command == "run" else []))
    assert result.code == 2
    assert f"error: demo: {why}" in result.err
    assert "add prompts/NN_name.prompt.md (see `prompt-runner prompt new`)" in result.err
    assert not (packet / ".prompt_runner").exists()


def test_require_prompts_accepts_a_packet_with_prompts(tmp_path: Path) -> None:
    load_packet(make_packet(tmp_path, {"01": {}})).require_prompts()
    empty = make_packet(tmp_path / "e", {})
    with pytest.raises(UserError, match="has no prompts"):
        load_packet(empty).require_prompts()


def test_run_warns_that_an_unnumbered_prompt_runs_last(
    tmp_path: Path, pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = make_packet(tmp_path, {"01": {}, "zz": {}})
    monkeypatch.chdir(packet)  # messages name files from here: prompts/...
    prompts = packet / "prompts"
    (prompts / "zz_step.prompt.md").rename(prompts / "step.prompt.md")
    result = pr("run", packet, "--dry-run")
    assert result.code == 0
    assert (
        "warning: prompts/step.prompt.md has no numeric prefix, so it runs after the "
        "numbered prompts" in result.err
    )
    numbered = make_packet(tmp_path / "n", {"01": {}})
    assert "numeric prefix" not in pr("run", numbered, "--dry-run").err
