"""A recorded run whose ``control/snapshot.json`` is damaged or gone is named as
that -- never "no recorded run" -- and a follower ends on it; a follower of a
packet no run has started in says on stderr that it waits. Real runs of the
simulated provider, the real CLI in subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet whose one run completed."""
    root = tmp_path_factory.mktemp("ran")
    packet = make_packet(root, {"01": {}})
    done = cli("run", packet, "--no-commit")
    assert done.returncode == 0, done.stdout + done.stderr
    return root


@pytest.fixture
def packet(ran: Path, tmp_path: Path) -> Path:
    subprocess.run(["cp", "-a", str(ran), str(tmp_path / "w")], check=True)
    return tmp_path / "w" / "demo"


def _run_id(packet: Path) -> str:
    doc = json.loads((packet / ".prompt_runner" / "runs" / "current.json").read_text())
    return str(doc["run_id"])


@pytest.mark.parametrize("damage", ["{", None], ids=["torn", "missing"])
def test_control_status_names_the_snapshot_not_no_run(packet: Path, damage: str | None) -> None:
    snapshot = packet / ".prompt_runner" / "control" / "snapshot.json"
    if damage is None:
        snapshot.unlink()
    else:
        snapshot.write_text(damage)
    run_id = _run_id(packet)
    what = "is not valid JSON at line 1" if damage else "does not exist"
    sentence = (
        f"demo/.prompt_runner/control/snapshot.json: {what}; it is only the live view of "
        f"run {run_id}, whose state is intact: `prompt-runner status demo` shows the run, "
        "and the next run writes a new snapshot."
    )
    human = cli("control", "status", "demo", cwd=packet.parent)
    assert (human.returncode, human.stdout, human.stderr) == (2, "", f"error: {sentence}\n")
    doc = cli("control", "status", "demo", "--json", cwd=packet.parent)
    assert doc.returncode == 2, doc.stderr
    assert json.loads(doc.stdout)["error"] == sentence
    shown = cli("status", "demo", cwd=packet.parent)  # what the sentence says is true
    assert shown.returncode == 0 and f"Run: {run_id}" in shown.stdout
    if damage is not None:
        assert snapshot.read_text() == damage  # a reader leaves it for the runner


@pytest.mark.parametrize("command", ["events", "log"])
def test_a_follower_of_an_ended_run_with_no_snapshot_ends(packet: Path, command: str) -> None:
    (packet / ".prompt_runner" / "control" / "snapshot.json").unlink()
    got = cli("control", command, packet, "--follow", "--json", timeout=30)
    assert got.returncode == 0, got.stderr
    last = json.loads(got.stdout.splitlines()[-1])
    assert (last["kind"], last["run_id"], last["status"]) == (
        "run_finished",
        _run_id(packet),
        "completed",
    )
    assert got.stderr == ""  # a run is recorded: no "waiting" line


def _readline(stream: object, timeout: float) -> str:
    """The first line of ``stream`` (a pipe), waiting at most ``timeout`` s."""
    import selectors

    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)  # type: ignore[arg-type]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=0.2):
            return stream.readline()  # type: ignore[attr-defined,no-any-return]
    raise AssertionError("no line within the timeout")


@pytest.mark.parametrize("command", ["events", "log"])
def test_a_follower_before_any_run_says_it_waits_on_stderr(tmp_path: Path, command: str) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    follower = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "control", command, "demo", "--follow", "--json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = _readline(follower.stderr, 30)
        assert line == "waiting for a run of demo to start (Ctrl-C to stop)\n"
        assert follower.poll() is None  # still waiting
        done = cli("run", packet, "--no-commit")
        assert done.returncode == 0, done.stdout + done.stderr
        out, err = follower.communicate(timeout=60)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.communicate()
    assert follower.returncode == 0, err
    assert err == ""  # the one line only
    records = [json.loads(x) for x in out.splitlines()]  # stdout: the records alone
    assert records[-1]["kind"] == "run_finished"
    assert records[-1]["run_id"] == _run_id(packet)
    again = cli("control", command, packet, "--follow", timeout=30)  # a run is recorded now
    assert (again.returncode, again.stderr) == (0, "")
