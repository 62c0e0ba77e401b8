"""Compatibility: the reference packets lint clean but for the warnings they earn (reads ../shared).

Every prompt of the reference packets uses ``changed_paths_only`` (correctly: the
runner owns the commit), so each gets ``changed_paths_only_vacuous`` -- and only
that (issue 7): a weak contract that has ``changed_paths_only`` gets that one,
more specific warning rather than ``contract_without_commands`` as well.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prompt_runner import lint_packet
from tests.packet._packets import cli

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "reference-packets"

pytestmark = pytest.mark.compat

EXPECTED = {
    "simulated_recovery_packet": {
        **{f"{i:02d}": ["changed_paths_only_vacuous"] for i in range(1, 10)},
    },
    "single_repo_packet": {
        "01": ["changed_paths_only_vacuous"],
        "02": ["changed_paths_only_vacuous"],
    },
}


def _packet(name: str) -> Path:
    path = SHARED / name
    if not path.is_dir():
        pytest.skip(f"skipped: reference packet {path} is not present (../shared absent)")
    return path


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reference_packet_lints_with_only_the_expected_warnings(name: str) -> None:
    report = lint_packet(_packet(name))
    assert report.errors == 0 and report.passed
    found: dict[str, list[str]] = {}
    for finding in report.findings:
        assert finding.prompt_id is not None
        found.setdefault(finding.prompt_id, []).append(finding.kind)
    assert found == EXPECTED[name]


def test_reference_packet_fails_strict_lint_only_through_those_warnings() -> None:
    packet = _packet("single_repo_packet")
    res: subprocess.CompletedProcess[str] = cli("packet", "lint", str(packet), "--strict")
    assert res.returncode == 1
    assert "2 errors, 0 warnings" in res.stdout
    assert cli("packet", "lint", str(packet)).returncode == 0
