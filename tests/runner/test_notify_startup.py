"""A run outside a workspace does not import the workspace room (start-up cost).

``runner/notifying.py`` names ``$PROMPT_RUNNER_WORKSPACE`` itself and imports
``workspace`` only when it is set; a workspace's ``notify:`` still reaches the
run (``tests/notify/test_run_notifications.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prompt_runner.runner import notifying
from prompt_runner.workspace import runspec
from tests.helpers.packets import make_packet

PROBE = """
import sys
from prompt_runner.cli.main import main
try:
    main(["run", sys.argv[1]])
except SystemExit as exc:
    code = exc.code
else:
    code = 0
loaded = sorted(m for m in sys.modules if m.startswith("prompt_runner.workspace"))
print("LOADED", loaded, "CODE", code, file=sys.stderr)
"""


def test_the_variable_is_the_workspace_rooms() -> None:
    assert notifying.WORKSPACE_ENV == runspec.WORKSPACE_ENV


def test_a_run_outside_a_workspace_does_not_import_the_room(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    env = {k: v for k, v in os.environ.items() if k != runspec.WORKSPACE_ENV}
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(packet)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "LOADED [] CODE 0" in proc.stderr, proc.stderr
