"""A text setting given as empty text (``--model ""``, an unset shell variable) is refused.

Written as it is, ``model: ""`` would quietly stand for the provider's default,
which the user did not ask for; ``packet new`` and ``profile new`` (and the
library's ``new_packet``/``new_profile``) refuse it, naming the flag, and write
nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet.profiles import new_profile, profile_path
from prompt_runner.packet.scaffold import new_packet
from tests.packet._packets import cli


@pytest.mark.parametrize(
    ("flag", "value"),
    [("--model", ""), ("--reasoning", " "), ("--provider", ""), ("--permission", "\t")],
)
def test_packet_new_refuses_a_blank_flag(tmp_path: Path, flag: str, value: str) -> None:
    res = cli("packet", "new", "demo", "--root", str(tmp_path), flag, value)
    assert res.returncode == 2, res.stderr
    assert f"{flag}: is blank" in res.stderr
    assert "prompt_runner_packet.md" in res.stderr
    assert "Traceback" not in res.stderr
    assert not (tmp_path / "demo").exists()


def test_profile_new_refuses_a_blank_model(tmp_path: Path) -> None:
    res = cli("profile", "new", "mine", "--provider", "simulated", "--model", "")
    assert res.returncode == 2, res.stderr
    assert "--model: is blank" in res.stderr
    assert not profile_path("mine").exists()


def test_the_library_refuses_blank_text_too(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="--model: is blank"):
        new_packet("demo", root=tmp_path, model="")
    with pytest.raises(UserError, match="--profile: is blank"):
        new_packet("demo", root=tmp_path, profile=" ")
    with pytest.raises(UserError, match="--prompt-template: is blank"):
        new_profile("mine", prompt_template="")
    assert not (tmp_path / "demo").exists()


def test_a_real_value_is_written(tmp_path: Path) -> None:
    res = cli("packet", "new", "demo", "--root", str(tmp_path), "--model", "m1")
    assert res.returncode == 0, res.stderr
    assert 'model: "m1"' in (tmp_path / "demo" / "prompt_runner_packet.md").read_text()


@pytest.mark.parametrize("flag", ["--name", "--phase", "--template", "--commit"])
def test_prompt_new_refuses_a_blank_flag(tmp_path: Path, flag: str) -> None:
    made = cli("packet", "new", "demo", "--root", str(tmp_path))
    assert made.returncode == 0, made.stderr
    res = cli("prompt", "new", "01", "--packet", str(tmp_path / "demo"), flag, " ")
    assert res.returncode == 2, res.stderr
    assert f"{flag}: is blank; give {flag} a value, or leave it out" in res.stderr or (
        flag == "--commit" and "--commit: is blank" in res.stderr
    )
    assert list((tmp_path / "demo" / "prompts").iterdir()) == []
