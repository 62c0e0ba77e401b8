"""Containment ``systemd_user``: the transient unit counts a stopped run's exit,
143 (128 + SIGTERM: a requested stop ends as a polite SIGTERM, by design), a
success -- ``--property=SuccessExitStatus=143`` on the ``systemd-run`` command
line -- so a stop does not leave the unit ``failed`` (supervise/systemd_user.py
``systemd_run_argv``).

``systemctl --user`` is not available on the machines these tests were written
on, so no real unit is started: the argv is checked as built, and as the real
``start_run`` hands it to a stand-in ``systemd-run`` on PATH that records it
(tests/supervise/test_systemd_user.py's stand-ins). Where a user manager
answers, test_systemd_user.py's real transient unit runs and stops.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from prompt_runner.errors import InfrastructureError
from prompt_runner.runner.stopping import STOP_SIGNAL
from prompt_runner.state.layout import StateLayout
from prompt_runner.supervise import Launch, Supervised, start_run
from prompt_runner.supervise.systemd_user import systemd_run_argv
from tests.supervise.test_systemd_user import STANDIN

SUCCESS_143 = "--property=SuccessExitStatus=143"


def test_a_stopped_runs_exit_is_the_units_success_and_no_other_is() -> None:
    assert 128 + STOP_SIGNAL == 143  # the status a stopped run exits with
    argv = systemd_run_argv(
        "prompt-runner-x-0.service",
        ("python3", "-m", "prompt_runner", "run", "/p"),
        cwd=Path("/p"),
        env_names=("PATH",),
        stdout=Path("/l/out"),
        stderr=Path("/l/err"),
        description="prompt-runner run x",
    )
    options = argv[: argv.index("--")]  # systemd-run's own, not the runner's
    assert options.count(SUCCESS_143) == 1
    assert [a for a in options if "SuccessExitStatus" in a] == [SUCCESS_143]  # 3 stays a failure
    kill_mode = options.index("--property=KillMode=control-group")
    assert options[kill_mode + 1] == SUCCESS_143


def test_start_hands_the_success_status_to_systemd_run(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("systemctl", "systemd-run"):
        script = bin_dir / name
        script.write_text(STANDIN.format(python=sys.executable))
        script.chmod(0o755)
    log = tmp_path / "standin.jsonl"
    saved = dict(os.environ)
    os.environ.update(
        {"PATH": f"{bin_dir}{os.pathsep}{saved.get('PATH', '')}", "STANDIN_LOG": str(log)}
    )
    try:
        state = StateLayout(tmp_path / "rt" / "state")
        sup = Supervised(
            label="ws1",
            state=state,
            files=state.supervisor,
            containment="systemd_user",
            launch=Launch(("python3", "-m", "prompt_runner", "run", "/p"), tmp_path),
        )
        # the stand-in systemctl reports the unit failed with exit 3 at once
        with pytest.raises(InfrastructureError, match=r"ended \(exit 3\) before it was live"):
            start_run(sup, live_timeout_s=5)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    (run,) = [c for c in calls if c["program"] == "systemd-run"]
    assert SUCCESS_143 in run["argv"][: run["argv"].index("--")]
