"""``stop`` on a run hosted by a program that calls ``prompt_runner.run()``: the run
applies the stop and run() returns; the program carries on. ``stop`` is done
when the run has ended and released the run lock -- it once waited for the
host's *process* to end, so it SIGTERMed the host after ``--grace`` and, with
``--after-prompt``, blocked until the host exited on its own
(supervise/stop.py ``_wait_for``; new-user finding t7 #1).

Also: a detached runner whose run has ended, shutting down, exits by itself
rather than being SIGTERMed by a ``stop`` that found it then.

Real processes: a Python host running a simulated packet (a slow step), a
detached ``start``, and ``prompt-runner stop`` as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from prompt_runner.supervise.members import MARKER_ENV
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.live_run import wait_for_snapshot
from tests.supervise._helpers import alive, cli, record, run_finished, slow_packet, wait_for

HOST = textwrap.dedent(
    """
    import sys, time
    import prompt_runner
    r = prompt_runner.run(sys.argv[1], runtime_store="file", committer="noop")
    print("returned", r.status, flush=True)
    time.sleep(float(sys.argv[2]))
    print("finished normally", flush=True)
    """
)


def _slow_packet(root: Path, delay_ms: int) -> Path:
    packet = root / "pkt"
    (packet / "prompts").mkdir(parents=True)
    make_git_repo(packet / "workspace")
    (packet / "prompt_runner_packet.md").write_text(
        '---\nname: "slow"\nprofile: "simulated-default"\n'
        'repos:\n  app: {path: "./workspace", default: true}\n---\n# slow\n'
    )
    for n in (1, 2):
        (packet / "prompts" / f"0{n}_p.prompt.md").write_text(
            f'---\nid: "0{n}"\nname: "p{n}"\ntargets: ["app"]\n'
            f'verify:\n  files_exist: ["f{n}.txt"]\n'
            f"simulate:\n  attempts:\n    - delay_ms: {delay_ms}\n"
            f'      writes:\n        - {{path: "f{n}.txt", text: "hi"}}\n---\nWrite f{n}.txt.\n'
        )
    return packet


def _host(tmp_path: Path, packet: Path, carry_on_s: float) -> subprocess.Popen[str]:
    script = tmp_path / "host.py"
    script.write_text(HOST)
    host = subprocess.Popen(
        [sys.executable, str(script), str(packet), str(carry_on_s)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_snapshot(packet, lambda snap: snap.get("status") == "running")
    assert host.poll() is None, host.communicate()
    return host


def _stop(packet: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", "stop", str(packet), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _end(host: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return host.communicate(timeout=60)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()


@pytest.mark.parametrize("args", [("--grace", "3"), ("--after-prompt",)])
def test_stop_leaves_a_library_host_alone_once_its_run_has_ended(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    packet = _slow_packet(tmp_path, 1500)
    host = _host(tmp_path, packet, 8.0)
    try:
        began = time.monotonic()
        stop = _stop(packet, *args)
        took = time.monotonic() - began
    finally:
        out, err = _end(host)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    assert host.returncode == 0, f"host killed ({host.returncode}): {out}{err}\n{stop.stdout}"
    assert "finished normally" in out, out + err
    # done when the run ended, not when the host exited (8 s after run() returned)
    assert took < 6, (took, stop.stdout)
    assert f"pid {host.pid} ended the run and carries on" in stop.stdout, stop.stdout
    assert "killed with" not in stop.stdout, stop.stdout
    assert "no process of the run is left" in stop.stdout, stop.stdout


SLOW_EXIT = f"""\
import atexit, os, time
if os.environ.get({MARKER_ENV!r}):
    atexit.register(time.sleep, 0.6)
"""


def test_stop_lets_a_detached_runner_whose_run_ended_exit_by_itself(tmp_path: Path) -> None:
    """A detached runner that has released the run lock after its last prompt is
    shutting down: ``stop`` right then found its process, no runner to ask, and
    SIGTERMed it at once (tests/supervise/test_stop_agents.py's last ``stop``
    did so now and then). The runner here lingers 0.6 s at exit (an ``atexit``
    in a ``sitecustomize`` that only a process carrying the launch's marker runs)."""
    packet = slow_packet(tmp_path / "p", ids=("01",), delay_ms=50)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_EXIT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(site)}
    started = cli("start", packet, "--containment", "process_group", env=env)
    assert started.returncode == 0, started.stdout + started.stderr
    runner = record(packet)["pid"]
    wait_for(lambda: run_finished(packet), 60, "the run to end")
    assert alive(runner), "the runner exited before the stop: nothing was tested"
    stop = cli("stop", packet, "--json", env=env)
    assert stop.returncode == 0, stop.stdout + stop.stderr
    doc = json.loads(stop.stdout)
    how = {e["pid"]: e["how"] for e in doc["ended"]}
    assert how.get(runner) == "exited", doc
    assert doc["stopped_by"] == "exited", doc
