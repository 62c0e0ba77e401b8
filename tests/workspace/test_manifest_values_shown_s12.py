"""A workspace manifest value of the wrong type is named in YAML's words, never
Python's (new user s12: ``workspace_root: ~`` said "None is not a string",
``yes`` "True ...", ``id: 010`` "8 is not a string")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("id: ", "id: yes\n#", "id: true (YAML reads an unquoted yes, on or true as a boolean)"),
        ("id: ", "id: ~\n#", "id: an empty value (YAML reads nothing, ~ or null as null)"),
        ("id: ", "id: 010\n#", "id: 8 (YAML reads unquoted digits as a number)"),
    ],
)
def test_a_wrong_type_is_named_in_yaml_words(tmp_path: Path, old: str, new: str, said: str) -> None:
    manifest = make_workspace(tmp_path)
    text = manifest.read_text(encoding="utf-8")
    assert old in text
    manifest.write_text(text.replace(old, new, 1), encoding="utf-8")
    done = cli("workspace", "plan", manifest)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{said} is not a string; quote the value." in done.stderr, done.stderr
    assert "True" not in done.stderr and "None" not in done.stderr
