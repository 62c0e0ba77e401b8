"""A ``reasoning_effort`` no provider accepts, on the simulated provider (a new user's finding).

``profile new --provider simulated --reasoning ultra`` refused the value
("not a value any provider accepts"), while ``run`` and ``plan`` with
``--reasoning-effort ultra`` (or ``reasoning_effort: ultra`` in a prompt) on a
simulated packet accepted it and ran: the simulated provider ignores the
effort, and its plan-time check said nothing. A packet rehearsed on the
simulated provider must run unchanged on a real one, so the plan now refuses
such a value there too, naming the level that set it (exit 2); a value some
provider accepts is still ignored by the simulated provider.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers.packets import make_packet

PROMPT_RUNNER = Path(sys.executable).parent / "prompt-runner"


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROMPT_RUNNER), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_flag_no_provider_accepts_is_refused_before_any_session(tmp_path: Path) -> None:
    make_packet(tmp_path, {"01": {}})
    for command in ("run", "plan"):
        proc = _cli(tmp_path, command, "demo", "--reasoning-effort", "ultra", "--no-commit")
        assert proc.returncode == 2, proc
        (line,) = proc.stderr.splitlines()
        assert line.startswith("error: --reasoning-effort (reasoning_effort=): 'ultra' is not a")
        assert "use one of none, minimal, low, medium, high" in line
    assert not (tmp_path / "demo" / ".prompt_runner" / "prompts").exists()  # nothing ran


def test_a_prompts_own_effort_is_refused_naming_its_file(tmp_path: Path) -> None:
    make_packet(tmp_path, {"01": {"reasoning_effort": "turbo"}})
    proc = _cli(tmp_path, "plan", "demo")
    assert proc.returncode == 2, proc
    (line,) = proc.stderr.splitlines()
    assert ".prompt.md: reasoning_effort: 'turbo' is not a value any provider accepts" in line


def test_an_effort_some_provider_accepts_still_runs(tmp_path: Path) -> None:
    make_packet(tmp_path, {"01": {}})
    proc = _cli(tmp_path, "run", "demo", "--reasoning-effort", "xhigh", "--no-commit")
    assert proc.returncode == 0, proc
