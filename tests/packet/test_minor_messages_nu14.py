"""Small messages a new user found wrong (nu14): each says what is wrong, and where.

A raw NUL byte in front matter gave ``invalid YAML at front matter: invalid
YAML`` (no line, no cause); ``plan(all=True, select_all=False)`` said
``select_all and select_all``; ``schema('nope')`` listed only two of the four
schemas; a ``contains`` text of ``" "`` was ``must not be empty``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import ArgumentError, UserError
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_a_raw_nul_in_front_matter_names_its_line_and_the_character(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    prompt = next((packet / "prompts").glob("*.prompt.md"))
    prompt.write_bytes(b'---\nid: "01"\nname: "v\x00"\ntargets: [app]\n---\n# v\n')
    res = cli("list", packet)
    assert res.returncode == 2, res.stdout + res.stderr
    assert (
        f"{prompt.name}: invalid YAML at line 3: the character \\x00 is not allowed in YAML;"
        in res.stderr
    ), res.stderr
    assert "Traceback" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_all_and_select_all_together_name_both_spellings(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    with pytest.raises(ArgumentError) as err:
        prompt_runner.plan(packet, all=True, select_all=False)
    assert str(err.value).startswith("plan(): all and select_all are the same option")


def test_an_unknown_schema_lists_every_schema_there_is() -> None:
    with pytest.raises(UserError) as err:
        prompt_runner.schema("nope")
    assert str(err.value).endswith("use manifest, prompt, workspace or fleet.")
    for which in ("manifest", "prompt", "workspace", "fleet"):
        assert prompt_runner.schema(which)["$schema"]


def test_a_blank_contains_text_is_called_blank(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"contains": [{"path": "README.md", "text": " "}]}}}
    )
    res = cli("verify", packet)
    assert res.returncode == 2, res.stdout + res.stderr
    assert "verify.contains[0].text: must not be blank; give a value." in res.stderr
