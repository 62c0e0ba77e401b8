"""``status`` lists prompt ids in ``list``'s order, in one column (a new user's finding).

With ids ``2``, ``03`` and ``10``, ``list`` and ``run`` went 2, 03, 10 (by
the number a prompt file starts with) while ``status`` sorted the ids as text
(03, 10, 2); and both printed the shorter id's row out of line with the
others. ``status`` now orders by the leading number, then as text, and both
pad the id column to the longest id.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.packets import make_packet

PROMPT_RUNNER = Path(sys.executable).parent / "prompt-runner"


def _cli(tmp_path: Path, *args: str) -> list[str]:
    proc = subprocess.run(
        [str(PROMPT_RUNNER), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc
    return proc.stdout.splitlines()


def _rows(lines: list[str], ids: tuple[str, ...]) -> list[str]:
    return [line for line in lines if line.split()[:1] and line.split()[0] in ids]


def test_status_and_list_order_and_align_ids_of_different_lengths(tmp_path: Path) -> None:
    ids = ("2", "03", "10")
    make_packet(tmp_path, {pid: {} for pid in ids})
    for before_run in (True, False):
        status = _rows(_cli(tmp_path, "status", "demo"), ids)
        listed = _rows(_cli(tmp_path, "list", "demo"), ids)
        for rows in (status, listed):
            assert [row.split()[0] for row in rows] == ["2", "03", "10"], rows
            assert len({row.index(row.split()[1]) for row in rows}) == 1, rows  # one column
            assert rows[0].startswith("  2   "), rows
        if before_run:
            _cli(tmp_path, "run", "demo", "--no-commit")


def test_the_order_key() -> None:
    from prompt_runner.cli.status import id_order

    ids = ["10", "b", "2", "03", "a1", "1a", "001"]
    assert sorted(ids, key=id_order) == ["001", "1a", "2", "03", "10", "a1", "b"]
