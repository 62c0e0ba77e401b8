"""``profile new``'s refusals name the file it would write (``profiles/NAME.md`` in
the store) and the key -- a shorthand by its flag and the ``recovery`` key it
sets, a ``recovery`` block or a plan key by its path -- not ``profile NAME``;
and nothing is written (packet/profiles.py ``new_profile``).

The CLI half runs the real ``prompt-runner`` in a subprocess (its cwd outside
the store, so the store's absolute path is shown as it is); the library half calls
``prompt_runner.new_profile`` in this process.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import UserError
from tests.helpers.cli import cli


def _profile(name: str) -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner" / "profiles" / f"{name}.md"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--retry-attempts", "-3"],
            "--retry-attempts: must be 0 or more (got -3) (it sets recovery.retry.max_attempts)",
        ),
        (
            ["--repair-attempts", "-1"],
            "--repair-attempts: must be 0 or more (got -1) (it sets recovery.repair.max_attempts)",
        ),
        (["--provider", "nope"], "--provider: unknown provider 'nope'"),
    ],
)
def test_the_cli_names_the_file_it_would_write_and_the_key(
    tmp_path: Path, args: list[str], said: str
) -> None:
    done = cli("profile", "new", "neg", *args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"error: {_profile('neg')}: {said}"), done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "profile neg:" not in done.stderr
    assert not _profile("neg").exists()


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"recovery": {"retry": {"max_attempts": -3}}}, "recovery.retry.max_attempts"),
        ({"recovery": {"bogus": 1}}, "recovery.bogus"),
        ({"permission_mode": "wild"}, "permission_mode"),
    ],
)
def test_the_library_names_the_file_and_the_key_of_a_bad_block(
    kwargs: dict[str, object], key: str
) -> None:
    with pytest.raises(UserError) as caught:
        prompt_runner.new_profile("blk", **kwargs)
    err = caught.value
    assert err.file is not None and Path(err.file).resolve() == _profile("blk").resolve()
    assert err.key == key, err
    assert not str(err).startswith("profile blk"), err
    assert not _profile("blk").exists()
