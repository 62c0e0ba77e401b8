"""apprise is imported only when a notification is sent to a URL."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.packets import make_packet

PROBE = """
import sys
from prompt_runner.cli.main import main
code = main(["run", sys.argv[1]])
print("apprise" in sys.modules, code)
"""


@pytest.mark.parametrize(
    ("notify", "imported"),
    [
        (None, False),
        ({"urls": ["json://127.0.0.1:9/x"], "on": ["run_failed"]}, False),  # nothing sent
        ({"command": ["true"]}, False),  # a command needs no apprise
        ({"urls": ["json://127.0.0.1:9/x"], "timeout": "1s", "retries": 0}, True),
    ],
)
def test_apprise_is_imported_only_to_send(
    tmp_path: Path, notify: dict[str, Any] | None, imported: bool
) -> None:
    packet = make_packet(tmp_path, {"01": {}}, manifest={"notify": notify})
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(packet)], capture_output=True, text=True, check=True
    )
    assert proc.stdout.split()[-2:] == [str(imported), "0"], proc.stdout + proc.stderr
