"""A refused ``init`` writes nothing: every check comes before the first file."""

from __future__ import annotations

import os
from pathlib import Path

from tests.helpers.cli import cli


def test_init_refusing_a_malformed_config_leaves_no_new_profile(tmp_path: Path) -> None:
    home = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"
    assert cli("init").returncode == 0
    config = home / "config.md"
    bad = '---\ndefault_profile: "x"\ndefault_profile: "y"\n---\n'
    config.write_text(bad, encoding="utf-8")
    before = sorted(p.name for p in (home / "profiles").iterdir())

    done = cli("init", "--default-profile", "z")

    assert done.returncode == 2
    assert "config.md" in done.stderr and "duplicate key" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in (home / "profiles").iterdir()) == before
    assert config.read_text(encoding="utf-8") == bad


def test_init_naming_a_new_default_creates_it_and_names_it(tmp_path: Path) -> None:
    home = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"
    assert cli("init").returncode == 0
    done = cli("init", "--default-profile", "z")
    assert done.returncode == 0, done.stderr
    assert (home / "profiles" / "z.md").is_file()
    assert 'default_profile: "z"' in (home / "config.md").read_text(encoding="utf-8")
