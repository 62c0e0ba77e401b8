"""A manifest ``profile`` (or ``--profile``) that is no valid profile name is an
error naming the file and the key, with the rule `profile new` uses as the fix
(exit 2); a valid name that exists nowhere here keeps the warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.packet._packets import cli, make_packet, prompt

RULE = "a profile name is one word of letters, digits, '-', '_' and '.' (not first)"


def _packet(tmp_path: Path, profile: str) -> Path:
    manifest = {
        "name": "demo",
        "profile": profile,
        "provider": "simulated",
        "repos": {"app": {"path": "app", "default": True}},
    }
    (tmp_path / "pkt" / "app").mkdir(parents=True)
    return make_packet(tmp_path / "pkt", manifest=manifest, prompts={"01_a.prompt.md": prompt()})


@pytest.mark.parametrize("command", ["plan", "list", "run"])
@pytest.mark.parametrize("name", ["../../etc", "a/b", "-x"])
def test_invalid_manifest_profile_is_an_error(tmp_path: Path, command: str, name: str) -> None:
    root = _packet(tmp_path, name)
    extra = ["--dry-run"] if command == "run" else []
    done = cli(command, str(root), *extra)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert f"prompt_runner_packet.md: profile: invalid profile name {name!r}" in done.stderr
    assert RULE in done.stderr
    assert "or drop `profile:`" in done.stderr
    assert "profile new" not in done.stderr  # no fix that `profile new` refuses


def test_lint_reports_it_as_an_invalid_manifest(tmp_path: Path) -> None:
    root = _packet(tmp_path, "../../etc")
    done = cli("packet", "lint", str(root))
    assert "invalid_manifest" in done.stdout, done.stdout + done.stderr
    assert "profile: invalid profile name '../../etc'" in done.stdout
    assert "profile_not_found" not in done.stdout
    assert "profile new ../../etc" not in done.stdout


def test_explicit_profile_names_its_flag(tmp_path: Path) -> None:
    root = _packet(tmp_path, "simulated-default")
    done = cli("plan", str(root), "--profile", "../x")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--profile: invalid profile name '../x'" in done.stderr
    assert RULE in done.stderr


def test_valid_missing_profile_still_warns(tmp_path: Path) -> None:
    root = _packet(tmp_path, "nosuch")
    done = cli("run", str(root), "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "profile 'nosuch' (the manifest's `profile`) does not exist here" in out
    assert "prompt-runner profile new nosuch" in out
