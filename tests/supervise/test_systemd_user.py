"""Containment ``systemd_user``: the exact ``systemd-run`` argv, the environment by name.

The real user manager is used where ``systemctl --user`` answers; elsewhere
those tests skip saying so, and ``start`` is driven through stand-in
``systemctl`` / ``systemd-run`` programs on PATH that record what they were
given (as the agent CLIs are faked), to hold that every value travels in
the environment and none on the command line.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from prompt_runner.errors import InfrastructureError
from prompt_runner.state.layout import StateLayout
from prompt_runner.supervise import Launch, Supervised, start_run, stop_run
from prompt_runner.supervise.containment import choose
from prompt_runner.supervise.members import MARKER_ENV
from prompt_runner.supervise.systemd_user import (
    passed_names,
    systemd_run_argv,
    unit_name,
    user_manager,
)
from tests.supervise._helpers import completed_ids, slow_packet, wait_for

SECRET = "sk-live-0123456789abcdef"
NO_MANAGER = user_manager()


def test_the_systemd_run_argv_is_exact_and_carries_no_value() -> None:
    env = {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": SECRET,
        "PROMPT_RUNNER_STATE_DIR": "/rt/state",
        "PWD": "/somewhere",  # the starter's shell bookkeeping: not passed
        "BAD-NAME": "x",  # systemd cannot take it: not passed
    }
    names = passed_names(env)
    assert names == ("ANTHROPIC_API_KEY", "PATH", "PROMPT_RUNNER_STATE_DIR")
    unit = unit_name("night shift", Path("/rt/state"))
    assert unit.startswith("prompt-runner-night-shift-") and unit.endswith(".service")
    assert unit == unit_name("night shift", Path("/rt/state"))  # one unit per state root
    assert unit != unit_name("night shift", Path("/other/state"))
    argv = systemd_run_argv(
        unit,
        ("/usr/bin/python3", "-m", "prompt_runner", "run", "/clone/packet"),
        cwd=Path("/clone/packet"),
        env_names=names,
        stdout=Path("/rt/logs/runner.out.log"),
        stderr=Path("/rt/logs/runner.err.log"),
        description="prompt-runner run night shift",
    )
    assert argv == (
        "systemd-run",
        "--user",
        f"--unit={unit}",
        "--collect",
        "--quiet",
        "--description=prompt-runner run night shift",
        "--property=Type=exec",
        "--property=KillMode=control-group",
        "--property=SuccessExitStatus=143",
        "--property=StandardInput=null",
        "--property=StandardOutput=append:/rt/logs/runner.out.log",
        "--property=StandardError=append:/rt/logs/runner.err.log",
        "--working-directory=/clone/packet",
        "--setenv=ANTHROPIC_API_KEY",
        "--setenv=PATH",
        "--setenv=PROMPT_RUNNER_STATE_DIR",
        "--",
        "/usr/bin/python3",
        "-m",
        "prompt_runner",
        "run",
        "/clone/packet",
    )
    assert not any(SECRET in arg or "/usr/bin=" in arg for arg in argv)


STANDIN = r"""#!{python}
import json, os, sys
name = os.path.basename(sys.argv[0])
log = os.environ["STANDIN_LOG"]
with open(log, "a") as fh:
    fh.write(json.dumps({{"program": name, "argv": sys.argv[1:], "env": dict(os.environ)}}) + "\n")
if name == "systemctl" and "--property=Version" in sys.argv:
    print("Version=252")
elif name == "systemctl" and "show" in sys.argv:
    print("LoadState=loaded\nActiveState=failed\nMainPID=0\nControlGroup=\n"
          "ExecMainCode=1\nExecMainStatus=3")
"""


def test_start_passes_every_variable_by_name_to_systemd_run(tmp_path: Path) -> None:
    """``auto`` takes systemd_user when ``systemctl --user`` answers; the values reach
    systemd-run through its environment, never its argv (stand-ins record both)."""
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
    os.environ["ANTHROPIC_API_KEY"] = SECRET
    try:
        state = StateLayout(tmp_path / "rt" / "state")
        sup = Supervised(
            label="ws1",
            state=state,
            files=state.supervisor,
            containment="auto",
            launch=Launch(
                ("python3", "-m", "prompt_runner", "run", "/p"), tmp_path, {"EXTRA": "1"}
            ),
        )
        assert choose("auto") == "systemd_user"
        with pytest.raises(InfrastructureError, match=r"ended \(exit 3\) before it was live; see "):
            start_run(sup, live_timeout_s=5)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    (run,) = [c for c in calls if c["program"] == "systemd-run"]
    assert run["argv"][:3] == ["--user", f"--unit={unit_name('ws1', state.root)}", "--collect"]
    assert "--property=KillMode=control-group" in run["argv"]
    assert {"--setenv=ANTHROPIC_API_KEY", "--setenv=EXTRA", f"--setenv={MARKER_ENV}"} <= set(
        run["argv"]
    )
    assert run["argv"][-6:] == ["--", "python3", "-m", "prompt_runner", "run", "/p"]
    assert not any(SECRET in arg for call in calls for arg in call["argv"])
    assert run["env"]["ANTHROPIC_API_KEY"] == SECRET  # where --setenv=NAME reads it from
    assert run["env"]["EXTRA"] == "1"
    record = json.loads(state.supervisor.record.read_text())
    assert record["containment"] == "systemd_user" and record["unit"].endswith(".service")
    assert SECRET not in state.supervisor.record.read_text()  # names only


@pytest.mark.skipif(NO_MANAGER is None, reason="a user manager answers here")
def test_systemd_user_without_a_user_manager_is_an_infrastructure_fault() -> None:
    with pytest.raises(InfrastructureError) as caught:
        choose("systemd_user")
    assert caught.value.exit_code == 3
    assert "needs a user service manager" in str(caught.value)
    assert choose("auto") == "process_group"


@pytest.mark.skipif(
    NO_MANAGER is not None, reason=f"no user manager: `systemctl --user` says {NO_MANAGER!r}"
)
def test_a_real_transient_unit_runs_and_stops(tmp_path: Path) -> None:
    packet = slow_packet(tmp_path, ids=("01", "02"), delay_ms=3000)
    state = StateLayout(packet / ".prompt_runner")
    sup = Supervised(
        label="real",
        state=state,
        files=state.supervisor,
        containment="systemd_user",
        launch=Launch((sys.executable, "-m", "prompt_runner", "run", str(packet)), packet),
    )
    started = start_run(sup)
    assert started.containment == "systemd_user" and started.live and started.unit
    time.sleep(0.5)
    report = stop_run(sup, grace_s=5)
    assert report.ok, report.lines()
    assert "02" not in completed_ids(packet)
    again = start_run(sup)
    wait_for(lambda: completed_ids(packet) == ["01", "02"] or None, 60, "the resumed run")
    assert again.live
