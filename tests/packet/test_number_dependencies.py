"""``depends_on: [2]`` (a YAML number) names the prompt whose id is that
number however the id is padded -- ``"2"``, ``"02"`` or ``"002"``, when exactly
one such prompt exists; the front matter's model reads the number as ``"02"``,
which told a packet of ids "1", "2" that it "depends on unknown prompt '01'"
(packet/loader.py, ``_check_dependencies``). A number no id is, or more than
one is, is one sentence naming the prompt's file, ``depends_on[i]`` and the
ids that exist. A quoted id is taken as written.

Real ``prompt-runner`` subprocesses on packets with a real git repo; each
``plan`` twice, the second from the parsed-packet cache.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

DONE = {"verify": {"files_exist": ["README.md"]}}


def _plan(packet: Path) -> dict[str, list[str]]:
    """prompt id -> its depends_on, from ``plan --json`` (twice: fresh, then cached)."""
    seen = []
    for _ in range(2):
        done = cli("plan", packet, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        seen.append({p["id"]: p["depends_on"] for p in json.loads(done.stdout)["prompts"]})
    assert seen[0] == seen[1]
    return seen[0]


def _error(packet: Path) -> str:
    for _ in range(2):
        done = cli("plan", packet)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    return str(lines[0])


@pytest.mark.parametrize("ids", [("1", "2"), ("01", "02"), ("001", "002")])
def test_a_number_names_the_prompt_of_that_number_whatever_its_padding(
    tmp_path: Path, ids: tuple[str, str]
) -> None:
    first, second = ids
    packet = make_packet(tmp_path, {first: DONE, second: {**DONE, "depends_on": [1]}})
    assert _plan(packet) == {first: [], second: [first]}


def test_a_run_orders_and_blocks_by_the_resolved_id(tmp_path: Path) -> None:
    """Prompt "2" depends on 1 and comes first in the packet: the run takes "1" first."""
    packet = make_packet(tmp_path, {"1": {**DONE, "depends_on": [2]}, "2": DONE})
    done = cli("run", packet, "--no-commit")
    assert done.returncode == 0, done.stdout + done.stderr
    log = (packet / ".prompt_runner" / "progress.log").read_text(encoding="utf-8")
    assert [line.split(":")[:2] for line in log.splitlines()] == [
        ["2", "completed"],
        ["1", "completed"],
    ], log


@pytest.mark.parametrize(
    ("prompts", "problem"),
    [
        ({"1": DONE, "2": {**DONE, "depends_on": [7]}}, "no prompt's id is the number 7"),
        (
            {"1": DONE, "01": DONE, "3": {**DONE, "depends_on": [1]}},
            "2 prompts' ids are the number 1 (01, 1)",
        ),
    ],
)
def test_a_number_no_id_is_or_two_ids_are_names_the_file_key_and_ids(
    tmp_path: Path, prompts: dict[str, Any], problem: str
) -> None:
    packet = make_packet(tmp_path, prompts)
    line = _error(packet)
    dependent = next(i for i, fm in prompts.items() if "depends_on" in fm)
    assert f"prompts/{dependent}_step.prompt.md: depends_on[0]: " in line, line
    assert problem in line, line
    assert "write the id as a quoted string, one of: " in line, line
    for known in prompts:
        assert known in line.rsplit("one of: ", 1)[1], line


def test_a_quoted_id_is_taken_as_written(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": DONE, "02": {**DONE, "depends_on": ["1"]}})
    line = _error(packet)
    assert "prompts/02_step.prompt.md: depends_on[0]: depends on unknown prompt '1'" in line
    assert "use one of: 01, 02" in line, line
