"""A prompt ``name:`` holding a line break is shown on one line, escaped
(new-user s12): ``checklist sync``'s warning printed it raw over two lines, as
``list`` and the checklist file itself no longer do."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def test_a_name_with_a_newline_is_one_line_in_checklist_syncs_warning(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"name": "two\nlines"}})

    done = cli("checklist", "sync", packet)

    assert done.returncode == 0, done.stdout + done.stderr
    warning = [line for line in done.stderr.splitlines() if "WARNING" in line]
    assert warning == ["WARNING: prompt 01 (two\\x0alines) has no verification items yet"], (
        done.stderr
    )
