"""Authoring error texts say the rule the value broke."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import cli


@pytest.mark.parametrize(("name", "first"), [(".hidden", "'.'"), ("-x", "'-'"), ("_p", "'_'")])
def test_packet_new_says_a_name_may_not_start_so(tmp_path: Path, name: str, first: str) -> None:
    done = cli("packet", "new", "--root", tmp_path, "--", name)
    assert done.returncode == 2
    assert f"starts with a letter or digit, not {first}" in done.stderr
    assert "'_', '.', '-' only" not in done.stderr  # a rule the name already keeps
    assert not (tmp_path / name).exists()


def test_packet_new_a_bad_character_keeps_the_character_rule(tmp_path: Path) -> None:
    done = cli("packet", "new", "--root", tmp_path, "a b")
    assert done.returncode == 2
    assert "use letters, digits, '_', '.', '-' only" in done.stderr
