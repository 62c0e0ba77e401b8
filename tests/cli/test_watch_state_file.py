"""``watch`` meets a state directory that is a file as ``status`` does: exit 3 and
``status``'s one sentence naming the path, before any sample -- in every form
(``--once``, ``--json``, unbounded, bounded ``--for``), for the packet's own
``.prompt_runner``, ``--state-dir FILE`` and ``$PROMPT_RUNNER_STATE_DIR=FILE``.
Through the real CLI (``--once`` has an argparse-free path, ``cli/watching.serve_once``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner.state.layout_text import STATE_DIR_ENV
from tests.helpers.packets import make_packet

FILE_TEXT = "not a directory\n"

FORMS = [
    ("--once",),
    ("--once", "--json"),
    ("--interval", "1"),  # unbounded: without the check it samples until stopped
    ("--interval", "1", "--json"),
    ("--for", "2s", "--every", "1s"),
    ("--for", "2s", "--every", "1s", "--json"),
]


def _cli(cwd: Path, *args: str, state_env: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != STATE_DIR_ENV}
    if state_env is not None:
        env[STATE_DIR_ENV] = state_env
    try:
        return subprocess.run(
            [sys.executable, "-m", "prompt_runner", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired as exc:  # an unbounded watch that kept sampling
        pytest.fail(f"`prompt-runner {' '.join(args)}` did not stop: {exc.stdout!r}")


def _same_error(
    got: subprocess.CompletedProcess[str], status: subprocess.CompletedProcess[str]
) -> None:
    """``got`` failed with exit 3 and the sentence ``status`` printed, and printed no
    sample: on stderr, and with ``--json`` as the error document on stdout too."""
    assert status.returncode == 3, status.stdout + status.stderr
    assert "cannot be used as the runtime state directory" in status.stderr
    assert got.returncode == 3, got.stdout + got.stderr
    if "--json" not in got.args:
        assert (got.stdout, got.stderr) == ("", status.stderr)
        return
    doc = json.loads(got.stdout)
    assert doc["error"] == status.stderr.removeprefix("error: ").rstrip("\n")
    assert doc["exit_code"] == 3
    assert got.stderr == status.stderr


@pytest.fixture(scope="module")
def filed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet ``demo`` whose ``.prompt_runner`` is a file, and a file ``state-file``
    beside it (a ``--state-dir`` that is a file)."""
    root = tmp_path_factory.mktemp("filed")
    packet = make_packet(root, {"01": {}})
    (packet / ".prompt_runner").write_text(FILE_TEXT)
    (root / "state-file").write_text(FILE_TEXT)
    return root


def _untouched(filed: Path) -> None:
    assert (filed / "demo" / ".prompt_runner").read_text() == FILE_TEXT
    assert (filed / "state-file").read_text() == FILE_TEXT


@pytest.mark.parametrize("form", FORMS, ids=" ".join)
def test_watch_of_a_packet_whose_state_dir_is_a_file_is_exit_3(
    filed: Path, form: tuple[str, ...]
) -> None:
    status = _cli(filed, "status", "demo")
    assert status.stderr.startswith(
        "error: demo/.prompt_runner: cannot be used as the runtime state directory: "
        "it is a file, not a directory; move that file away, then run again"
    )
    _same_error(_cli(filed, "watch", "demo", *form), status)
    _untouched(filed)


@pytest.mark.parametrize("form", FORMS[:1] + FORMS[4:5], ids=" ".join)
def test_watch_from_inside_the_packet_is_exit_3(filed: Path, form: tuple[str, ...]) -> None:
    """``watch --once`` with no packet word (the current directory's): the fast path."""
    packet = filed / "demo"
    _same_error(_cli(packet, "watch", *form), _cli(packet, "status"))
    _untouched(filed)


@pytest.mark.parametrize("form", FORMS, ids=" ".join)
def test_watch_with_a_state_dir_flag_naming_a_file_is_exit_3(
    filed: Path, form: tuple[str, ...]
) -> None:
    (filed / "demo" / ".prompt_runner").unlink()  # only the flag's directory is wrong
    try:
        flag = ("--state-dir", str(filed / "state-file"))
        status = _cli(filed, "status", "demo", *flag)
        assert status.stderr.startswith("error: state-file: cannot be used as")
        _same_error(_cli(filed, "watch", "demo", *form, *flag), status)
    finally:
        (filed / "demo" / ".prompt_runner").write_text(FILE_TEXT)
    _untouched(filed)


@pytest.mark.parametrize("form", FORMS, ids=" ".join)
def test_watch_with_the_state_dir_variable_naming_a_file_is_exit_3(
    filed: Path, form: tuple[str, ...]
) -> None:
    (filed / "demo" / ".prompt_runner").unlink()
    try:
        env = str(filed / "state-file")
        status = _cli(filed, "status", "demo", state_env=env)
        assert status.stderr.startswith("error: state-file: cannot be used as")
        _same_error(_cli(filed, "watch", "demo", *form, state_env=env), status)
    finally:
        (filed / "demo" / ".prompt_runner").write_text(FILE_TEXT)
    _untouched(filed)


def test_watch_once_of_a_state_dir_that_is_a_directory_still_samples(tmp_path: Path) -> None:
    make_packet(tmp_path, {"01": {}})
    got = _cli(tmp_path, "watch", "demo", "--once")
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("WATCH ") and "runner=DOWN" in got.stdout
