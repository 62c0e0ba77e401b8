"""``status`` and ``control status`` with a ``--state-dir`` that does not exist or
holds no run name that directory (not the packet or the current directory) and
say how to find the right one. Real CLI runs on a simulated-provider packet."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_missing_and_empty_state_dir_are_named(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    empty = tmp_path / "empty"
    empty.mkdir()
    for where, what in ((tmp_path / "typo", "does not exist"), (empty, "holds no recorded run")):
        shown = cli("status", "--state-dir", where, cwd=packet)
        assert shown.returncode == 0, shown.stderr
        assert f"The state directory looked in ({where}) {what}" in shown.stdout
        ctl = cli("control", "status", "--state-dir", where, cwd=packet)
        assert ctl.returncode == 2
        assert f"({where}) {what}" in ctl.stderr and "Traceback" not in ctl.stderr
        assert str(packet) + ":" not in ctl.stderr
        doc = json.loads(cli("status", "--state-dir", where, "--json", cwd=packet).stdout)
        assert doc.get("run_id") is None
