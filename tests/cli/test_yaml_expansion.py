"""A: front matter whose anchors/aliases expand past a bound is refused quickly."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet.frontmatter import MAX_VALUES, parse_yaml, split_front_matter
from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


def laughs(levels: int = 9, width: int = 9, key: str = "adapter_opts") -> str:
    """The tester's ~700-byte front matter: each level lists ``width`` aliases of the last."""
    lines = [f"{key}:"]
    previous = None
    for index in range(levels):
        name = chr(ord("a") + index)
        items = ["x"] * width if previous is None else [f"*{previous}"] * width
        lines.append(f"  {name}: &{name} [{', '.join(items)}]")
        previous = name
    return "\n".join(lines) + "\n"


def test_billion_laughs_front_matter_is_refused_fast() -> None:
    text = "---\nid: '01'\n" + laughs() + "---\n# body\n"
    assert len(text) < 1000
    started = time.monotonic()
    with pytest.raises(UserError) as info:
        split_front_matter(text, file="demo/prompts/01_x.prompt.md")
    assert time.monotonic() - started < 2
    message = str(info.value)
    assert message.startswith("demo/prompts/01_x.prompt.md: front matter expands to more than")
    assert "anchors/aliases" in message and "remove the aliases" in message


def test_a_self_referencing_alias_is_refused() -> None:
    with pytest.raises(UserError, match="nests more than 100 levels"):
        parse_yaml("a: &a [*a]\n", file="x.md")


def test_shared_aliases_within_the_bound_still_load() -> None:
    data = parse_yaml(laughs(levels=3, width=9), file="x.md")
    assert len(data["adapter_opts"]["c"]) == 9
    assert data["adapter_opts"]["c"][0][0] == ["x"] * 9


def test_a_plain_document_just_under_the_bound_loads() -> None:
    items = ", ".join(["1"] * (MAX_VALUES - 10))
    assert len(parse_yaml(f"k: [{items}]\n", file="x.md")["k"]) == MAX_VALUES - 10


@pytest.mark.parametrize("command", ["list", "plan", "run --dry-run"])
def test_cli_commands_fail_with_exit_2_on_laughs_in_a_prompt(
    tmp_path: Path, pr: PR, command: str
) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    prompt = packet / "prompts" / "02_step.prompt.md"
    prompt.write_text(prompt.read_text().replace("---\n", "---\n" + laughs(), 1))
    started = time.monotonic()
    result = pr(*command.split(), packet)
    assert time.monotonic() - started < 10
    assert result.code == 2
    assert "demo/prompts/02_step.prompt.md: front matter expands" in result.err


def test_laughs_in_the_manifest_are_refused(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    manifest = packet / "prompt_runner_packet.md"
    manifest.write_text(manifest.read_text().replace("---\n", "---\n" + laughs(key="x_laughs"), 1))
    result = pr("plan", packet)
    assert result.code == 2
    assert "demo/prompt_runner_packet.md: front matter expands" in result.err
