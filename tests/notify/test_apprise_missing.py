"""URLs in ``notify:`` without the ``apprise`` library installed: ``plan`` notes it
and ``run`` warns as it starts, naming ``pip install 'prompt-runner[notify]'``
(before, the run said nothing until "deliveries failed" at its end).

The library is made unimportable the way Python documents for blocking an
import: ``sys.modules["apprise"] = None`` in the CLI's process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet
from tests.helpers.workspaces import make_workspace

NO_APPRISE = (
    "import sys; sys.modules['apprise'] = None; "
    "from prompt_runner.cli.main import leave, main; sys.exit(leave(main(sys.argv[1:])))"
)
INSTALL = "pip install 'prompt-runner[notify]'"


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", NO_APPRISE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_urls_without_apprise_are_noted_by_plan_and_warned_by_run(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {}}, manifest={"notify": {"urls": ["json://127.0.0.1:9/hook"]}}
    )
    planned = _cli("plan", packet)
    assert planned.returncode == 0, planned.stderr
    assert INSTALL in planned.stdout + planned.stderr
    ran = _cli("run", packet)
    assert ran.returncode == 0, ran.stderr
    output = ran.stdout + ran.stderr
    assert output.count("warning: notify: urls in ") == 1 and INSTALL in output
    # the warning comes as the run starts, before the first prompt's line
    assert output.index(INSTALL) < output.index("01")


def test_a_command_only_notify_is_not_warned_about(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"notify": {"command": ["true"]}})
    ran = _cli("run", packet)
    assert ran.returncode == 0, ran.stderr
    assert "apprise" not in ran.stdout + ran.stderr


def test_with_apprise_installed_nothing_is_said(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {}}, manifest={"notify": {"urls": ["json://127.0.0.1:9/hook"]}}
    )
    planned = subprocess.run(
        [sys.executable, "-m", "prompt_runner", "plan", str(packet)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert planned.returncode == 0 and INSTALL not in planned.stdout + planned.stderr


def test_workspace_urls_without_apprise_are_warned_as_the_run_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = make_workspace(
        tmp_path / "ws", manifest={"notify": {"urls": ["json://127.0.0.1:9/h"]}}
    )
    packet = make_packet(tmp_path, {"01": {}})
    monkeypatch.setenv("PROMPT_RUNNER_WORKSPACE", str(workspace))
    ran = _cli("run", packet)
    output = ran.stdout + ran.stderr
    assert ran.returncode == 0, output
    assert output.count("warning: notify: urls in ") == 1 and "workspace.yml" in output
    assert INSTALL in output
