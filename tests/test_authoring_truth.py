"""Authoring commands refuse what the plan would refuse, and tell the truth
(new-user findings 03, 06, 07): real CLI subprocesses, real files, real git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _store() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--retry-attempts", "-3", "must be 0 or more (got -3)"),
        ("--retry-base-delay-ms", "99999999999999", "must be 604800000 or less"),
        ("--repair-attempts", "-1", "must be 0 or more (got -1)"),
    ],
)
def test_profile_new_refuses_a_value_the_plan_refuses(flag: str, value: str, words: str) -> None:
    done = cli("profile", "new", "neg", "--provider", "simulated", "--model", "m", flag, value)
    assert done.returncode == 2, done.stderr
    assert f"{flag}: {words}" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (_store() / "profiles" / "neg.md").exists()


def test_packet_new_refuses_a_bad_recovery_shorthand(tmp_path: Path) -> None:
    done = cli("packet", "new", "pk", "--root", tmp_path, "--retry-attempts", "-3")
    assert done.returncode == 2, done.stderr
    assert "--retry-attempts: must be 0 or more (got -3)" in done.stderr
    assert not (tmp_path / "pk").exists()


def test_good_shorthands_still_write_a_profile_the_plan_takes(tmp_path: Path) -> None:
    done = cli("profile", "new", "ok", "--provider", "simulated", "--retry-attempts", "0")
    assert done.returncode == 0, done.stderr
    packet = make_packet(tmp_path, {"01": {}})
    plan = cli("plan", packet, "--profile", "ok")
    assert plan.returncode == 0, plan.stderr


def test_a_bad_profile_file_is_named_by_the_plan(tmp_path: Path) -> None:
    path = _store() / "profiles" / "bad.md"
    path.parent.mkdir(parents=True)
    path.write_text(
        "---\nname: bad\nprovider: simulated\nrecovery:\n  retry: {max_attempts: -3}\n---\n",
        encoding="utf-8",
    )
    packet = make_packet(tmp_path, {"01": {}})
    done = cli("plan", packet, "--profile", "bad")
    assert done.returncode == 2
    assert "profiles/bad.md: recovery.retry.max_attempts: must be 0 or more" in done.stderr


def test_init_default_profile_on_an_existing_store_names_it() -> None:
    assert cli("init").returncode == 0
    config = _store() / "config.md"
    config.write_text(config.read_text(encoding="utf-8") + "\nmy notes\n", encoding="utf-8")
    done = cli("init", "--default-profile", "mine")
    assert done.returncode == 0, done.stderr
    text = config.read_text(encoding="utf-8")
    assert 'default_profile: "mine"' in text
    assert text.endswith("my notes\n")  # the rest of the file is kept
    assert (_store() / "profiles" / "mine.md").is_file()
    assert f"wrote {config} (default_profile: mine)" in done.stdout


def _phases(tmp_path: Path, first: str, second: str, depends: str) -> Path:
    """Prompt 1 (phase ``first``) sorts before prompt 2 (phase ``second``), which
    depends on ``depends``."""
    return make_packet(
        tmp_path,
        {"1": {"phase": first}, "2": {"phase": second, "depends_on": [depends]}},
    )


def test_dependency_on_a_later_phase_whose_file_sorts_first_is_warned(tmp_path: Path) -> None:
    packet = _phases(tmp_path, "2", "1", "1")
    lint = cli("packet", "lint", packet)
    assert "WARNING depends_on_later_phase" in lint.stdout, lint.stdout
    plan = cli("plan", packet, "--phase", "1")
    assert "prompt 2 (phase 1) depends on 1 (phase 2)" in plan.stdout + plan.stderr


def test_dependency_on_an_earlier_phase_is_not_warned(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"1": {"phase": 2, "depends_on": ["2"]}, "2": {"phase": 1}})
    lint = cli("packet", "lint", packet)
    assert lint.returncode == 0, lint.stdout
    assert "depends_on_later_phase" not in lint.stdout


def test_phases_are_compared_as_numbers(tmp_path: Path) -> None:
    packet = _phases(tmp_path, "10", "9", "1")  # "10" < "9" as text, later as a number
    assert "depends_on_later_phase" in cli("packet", "lint", packet).stdout


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_template_is_not_listed_and_is_refused_by_name(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    (packet / "templates").mkdir()
    os.mkfifo(packet / "templates" / "fifo.prompt.md")
    listed = cli("template", "list", packet)
    assert listed.returncode == 0
    assert "fifo" not in listed.stdout
    done = cli(
        "prompt",
        "new",
        "02",
        "--packet",
        packet,
        "--name",
        "x",
        "--template",
        "fifo",
        timeout=30,
    )
    assert done.returncode == 2
    assert "fifo.prompt.md: is not a regular file (a named pipe)" in done.stderr
    assert "unknown prompt template" not in done.stderr


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_names_are_not_packet_names(tmp_path: Path, name: str) -> None:
    done = cli("packet", "new", name, "--root", tmp_path)
    assert done.returncode == 2
    assert f"{name!r} is not a packet name" in done.stderr


def test_an_overlong_packet_name_is_bad_input(tmp_path: Path) -> None:
    done = cli("packet", "new", "a" * 300, "--root", tmp_path)
    assert done.returncode == 2, done.stderr
    assert "255-byte limit" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_overlong_profile_name_is_bad_input() -> None:
    done = cli("profile", "new", "a" * 300, "--provider", "simulated")
    assert done.returncode == 2, done.stderr
    assert "252-character limit" in done.stderr
