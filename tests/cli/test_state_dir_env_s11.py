"""A state directory chosen by ``$PROMPT_RUNNER_STATE_DIR`` alone is named as such.

``status``, ``control status`` and ``stop`` with a state directory that does
not exist or holds no run say how to find the right one. When only the
environment chose it, passing "the same --state-dir DIR" is the wrong advice
(the user passed none): the hint names ``$PROMPT_RUNNER_STATE_DIR``; when the
flag chose it (also over the variable), ``--state-dir``. Real CLI runs (a child
process with the variable set, and in-process ``pr``) on a simulated packet.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.state.layout import STATE_DIR_ENV
from tests.cli.inproc import PR
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.helpers.workspaces import make_workspace

ENV = f"${STATE_DIR_ENV}"


@pytest.fixture
def packet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(STATE_DIR_ENV, raising=False)
    return make_packet(tmp_path, {"01": {}})


def _places(tmp_path: Path) -> list[tuple[Path, str]]:
    empty = tmp_path / "empty"
    empty.mkdir()
    return [(tmp_path / "typo", "does not exist"), (empty, "holds no recorded run")]


def test_status_and_control_status_name_the_variable_that_chose_the_dir(
    packet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for where, what in _places(tmp_path):
        monkeypatch.setenv(STATE_DIR_ENV, str(where))
        shown = cli("status", cwd=packet)
        assert shown.returncode == 0, shown.stderr
        assert f"({where}, from {ENV}) {what}: set {ENV} to the state directory" in shown.stdout
        assert "--state-dir" not in shown.stdout, shown.stdout
        ctl = cli("control", "status", cwd=packet)
        assert ctl.returncode == 2, ctl.stdout + ctl.stderr
        assert f"({where}, from {ENV}) {what}" in ctl.stderr, ctl.stderr
        assert "--state-dir" not in ctl.stderr and "Traceback" not in ctl.stderr, ctl.stderr


def test_the_flag_is_named_when_it_chose_the_dir_even_over_the_variable(
    packet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for env in (None, elsewhere):
        if env is not None:
            monkeypatch.setenv(STATE_DIR_ENV, str(env))
        for where, what in (
            _places(tmp_path) if env is None else [(tmp_path / "typo2", "does not exist")]
        ):
            shown = cli("status", "--state-dir", where, cwd=packet)
            assert f"({where}) {what}: pass the same --state-dir DIR" in shown.stdout, shown
            assert ENV not in shown.stdout, shown.stdout
            ctl = cli("control", "status", "--state-dir", where, cwd=packet)
            assert ctl.returncode == 2 and f"({where}) {what}: pass the same" in ctl.stderr


def test_in_process_the_source_is_read_per_command(
    packet: Path, tmp_path: Path, pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    typo = tmp_path / "typo"
    monkeypatch.chdir(packet)
    flagged = pr("status", "--state-dir", typo)
    assert f"({typo}) does not exist: pass the same --state-dir DIR" in flagged.out
    # the flag exported the directory for that command's children only (session
    # 12: it used to stay set, so the next command here read it as the variable's)
    unflagged = pr("status")
    assert "No prompt has run yet" in unflagged.out and str(typo) not in unflagged.out


def test_stop_names_the_variable_or_the_flag_that_chose_the_dir(
    packet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typo = tmp_path / "typo"
    empty = tmp_path / "empty"
    empty.mkdir()

    monkeypatch.setenv(STATE_DIR_ENV, str(typo))
    stopped = cli("stop", cwd=packet)
    assert stopped.returncode == 0, stopped.stderr
    assert "Nothing to stop" in stopped.stdout, stopped.stdout
    # not "holds no recorded run": stop itself makes supervisor/ there
    assert f"({typo}, from {ENV}) does not exist: set {ENV}" in stopped.stdout, stopped.stdout
    assert "--state-dir" not in stopped.stdout, stopped.stdout
    monkeypatch.setenv(STATE_DIR_ENV, str(empty))
    stopped = cli("stop", cwd=packet)
    assert f"({empty}, from {ENV}) holds no recorded run" in stopped.stdout, stopped.stdout

    monkeypatch.delenv(STATE_DIR_ENV)
    flagged = cli("stop", "--state-dir", tmp_path / "typo2", cwd=packet)
    assert f"({tmp_path / 'typo2'}) does not exist: pass the same --state-dir DIR" in (
        flagged.stdout
    ), flagged.stdout
    assert ENV not in flagged.stdout, flagged.stdout

    guessed = cli("stop", cwd=packet)  # the packet's own state: a run may keep it elsewhere
    assert f"or with {ENV} set) keeps its state elsewhere" in guessed.stdout, guessed.stdout


def test_a_workspace_s_state_dir_is_named_as_the_workspace_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(STATE_DIR_ENV, raising=False)
    manifest = make_workspace(tmp_path)
    prepared = cli("workspace", "prepare", manifest)
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    ctl = cli("control", "status", "--workspace", manifest)
    assert ctl.returncode == 2, ctl.stdout + ctl.stderr
    assert "the workspace's) holds no recorded run: the workspace has not run" in ctl.stderr
    assert "--state-dir" not in ctl.stderr and ENV not in ctl.stderr, ctl.stderr
    # the command to type names this workspace, not a placeholder (session 12)
    assert f"(`prompt-runner start {manifest}` starts it)" in ctl.stderr, ctl.stderr


def test_stop_at_a_state_dir_that_does_not_exist_creates_nothing(
    packet: Path, tmp_path: Path
) -> None:
    """``stop --state-dir TYPO`` once made ``TYPO/supervisor/`` for its lock, so the
    next ``status --state-dir TYPO`` said "holds no recorded run" instead of
    "does not exist"."""
    typo = tmp_path / "typo" / "state"
    stopped = cli("stop", packet, "--state-dir", typo)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert "does not exist" in stopped.stdout, stopped.stdout
    assert not (tmp_path / "typo").exists()
    shown = cli("status", packet, "--state-dir", typo)
    assert "does not exist" in shown.stdout, shown.stdout


def test_state_dir_does_not_leak_into_the_next_in_process_command(
    packet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # session 12: main(["run", ..., "--state-dir", D]) left $PROMPT_RUNNER_STATE_DIR
    # set, so a later main([...]) in the same process (a library caller, a test)
    # used D without being asked to.
    import os

    from prompt_runner.cli.main import main

    elsewhere = tmp_path / "elsewhere"
    assert main(["run", str(packet), "--state-dir", str(elsewhere)]) == 0
    assert (elsewhere / "state.json").exists() and STATE_DIR_ENV not in os.environ
    assert main(["run", str(packet)]) == 0  # the packet's own state dir, a fresh run
    assert (packet / ".prompt_runner" / "state.json").exists()
    capsys.readouterr()
