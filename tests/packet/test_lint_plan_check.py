"""``packet.lint.lint_packet`` checks the whole packet through the ``plan`` it is
given: the packet layer alone only loads it; ``prompt_runner.lint`` plans it as
``run`` does (issue 13: packet/ imports nothing above it)."""

from __future__ import annotations

from pathlib import Path

import prompt_runner
from prompt_runner import api
from prompt_runner.packet.lint import lint_packet
from prompt_runner.packet.loader import Packet
from tests.packet._packets import make_packet, prompt


def cyclic(tmp_path: Path) -> Path:
    """A packet that loads, but that no plan accepts (a depends_on cycle)."""
    return make_packet(
        tmp_path / "p",
        prompts={
            "01_a.prompt.md": prompt("01", depends_on=["02"]),
            "02_b.prompt.md": prompt("02", depends_on=["01"]),
        },
    )


def load_errors(findings: tuple[object, ...]) -> list[str]:
    return [f.message for f in findings if getattr(f, "kind", None) == "packet_load_error"]


def test_without_a_plan_check_the_packet_is_loaded(tmp_path: Path) -> None:
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": prompt(depends_on=["77"])})
    [message] = load_errors(lint_packet(root).findings)
    assert "depends on unknown prompt '77'" in message
    assert load_errors(lint_packet(cyclic(tmp_path)).findings) == []  # loads; only a plan refuses


def test_the_plan_check_given_turns_what_stops_the_run_into_a_finding(tmp_path: Path) -> None:
    root = cyclic(tmp_path)
    asked: list[Path] = []

    def plan(at: Path) -> Packet:
        asked.append(at)
        return api.plan(at).packet

    [message] = load_errors(lint_packet(root, plan=plan).findings)
    assert asked == [root] and "dependency cycle [01, 02]" in message


def test_the_library_lint_plans_the_packet(tmp_path: Path) -> None:
    root = cyclic(tmp_path)
    for report in (prompt_runner.lint(root), prompt_runner.lint_packet(root)):
        [message] = load_errors(report.findings)
        assert "dependency cycle [01, 02]" in message
