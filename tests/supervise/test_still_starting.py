"""``start --timeout 0.5s`` whose runner needs longer to be live: the run goes
on starting and becomes live later, so ``start`` says exactly that -- exit 3,
one sentence: launched, still starting, it may become live yet, how to check
(``control status`` / ``status``, naming the packet as given) and how to stop
it -- not that the run is "not live" as if it had failed; and nothing is
ended (supervise/start.py, ``StillStartingError``).

A real detached start (``process_group``) of a simulated packet; the runner
is slowed by two seconds before it starts (a ``sitecustomize`` on its
``PYTHONPATH`` that sleeps only in a process carrying the launch's marker, so
the ``start`` command itself is not slowed).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from prompt_runner.supervise.members import MARKER_ENV
from tests.supervise._helpers import cli, completed_ids, slow_packet, wait_for

SLOW_START = f"""\
import os, time
if os.environ.get({MARKER_ENV!r}):
    time.sleep(2.0)
"""


def test_a_start_whose_wait_ends_first_says_the_run_may_still_become_live(
    tmp_path: Path,
) -> None:
    packet = slow_packet(tmp_path / "p", ids=("01",), delay_ms=200)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SLOW_START, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(site)}
    began = time.monotonic()
    started = cli("start", packet, "--containment", "process_group", "--timeout", "0.5s", env=env)
    assert started.returncode == 3, (started.stdout, started.stderr)
    assert time.monotonic() - began < 30
    assert "Traceback" not in started.stderr
    lines = started.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), started.stderr
    line = lines[0]
    assert "is still starting: not live after 0.5 s" in line, line
    assert "it may become live yet" in line, line
    assert f"`prompt-runner control status {packet}`" in line, line
    assert f"`prompt-runner status {packet}`" in line, line
    assert f"`prompt-runner stop {packet}`" in line, line
    # What it says is true: the run was left to start, and it runs to its end.
    wait_for(lambda: completed_ids(packet) == ["01"], 60, "the run to complete prompt 01")
    shown = cli("control", "status", packet, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "completed" in shown.stdout, shown.stdout
