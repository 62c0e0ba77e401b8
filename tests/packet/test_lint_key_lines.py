"""Lint places findings with the node the front matter was parsed into, not a
second parse, wherever that node is the one a second parse would give; the
lines are the same either way."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from prompt_runner.errors import UserError
from prompt_runner.packet.frontmatter import split_front_matter_node
from prompt_runner.packet.lint.context import KeyLines

TEXTS = [
    "---\nid: '01'\nverify:\n  commands:\n    - exec: [true]\n  files_exist: [a]\n---\nbody\n",
    "---\r\nid: '01'\r\nverify:\r\n  files_exist: [a]\r\n---\r\nbody\r\n",
    "\ufeff---\nid: 1\ntargets: [app, lib]\n---\n",
    "---\nbase: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n---\n",
    "---\na: &l [1, 2]\nb: *l\n---\n",
    "---\nkey: |\n  text\n   ---\nafter: 1\n---\n",
    "---\na: 1\x0bb: 2\n---\n",
    "---\n---\nbody\n",
    "---\nid: x\n...\nbody\n",
]

PATHS = [
    ("id",),
    ("verify",),
    ("verify", "commands", 0),
    ("verify", "files_exist", 0),
    ("targets", 1),
    ("m", "y"),
    ("m", "<<"),
    ("b", 1),
    ("after",),
    ("key",),
    ("a",),
    ("nothing", "here"),
]


def lines_of(keys: KeyLines) -> list[int | None]:
    return [keys.line(*path) for path in PATHS]


@pytest.mark.parametrize("text", TEXTS)
def test_the_parsed_node_gives_the_lines_a_second_parse_gives(text: str) -> None:
    try:
        _, _, parsed = split_front_matter_node(text, file="x.md")
    except UserError:
        parsed = None
    assert lines_of(KeyLines(text, parsed)) == lines_of(KeyLines(text))


def test_a_plain_front_matter_is_not_composed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    text = TEXTS[0]
    _, _, parsed = split_front_matter_node(text, file="x.md")

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("composed again")

    monkeypatch.setattr(yaml, "compose", refuse)
    assert KeyLines(text, parsed).line("verify", "files_exist", 0) == 6
    with pytest.raises(AssertionError, match="composed again"):
        KeyLines(TEXTS[1], split_front_matter_node(TEXTS[1], file="x.md")[2]).line("id")
