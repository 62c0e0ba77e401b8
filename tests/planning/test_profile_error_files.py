"""An error about a key a profile sets, found when the plan is resolved (its
``recovery.failover`` entries, the failure classes its ``retry`` names), names
the profile's file -- ``profiles/NAME.md`` in the store -- and the key, as the
loader's own checks do; not ``profile NAME``, which names no file to open
(planning/resolve.py, ``level_file``).

Real ``prompt-runner plan`` subprocesses on a packet with a real git repo and a
profile file in the test's private config home.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet, write_front_matter

BAD = [
    (
        {"recovery": {"failover": [{"provider": "codex", "timeout": True}]}},
        "recovery.failover[0].timeout",
    ),
    (
        {"recovery": {"failover": [{"provider": "codex", "reasoning_effort": "ultra"}]}},
        "recovery.failover[0].reasoning_effort",
    ),
    ({"recovery": {"failover": [{"provider": "codex", "bogus": 1}]}}, "recovery.failover[0].bogus"),
    ({"recovery": {"failover": [{"provider": "nope"}]}}, "recovery.failover[0].provider"),
    ({"recovery": {"failover": [{"model": "m"}]}}, "recovery.failover[0].provider"),
    (
        {"recovery": {"retry": {"class_attempts": {"bogus": 1}}}},
        "recovery.retry.class_attempts.bogus",
    ),
]


def _profile(name: str, front: dict[str, Any]) -> Path:
    profiles = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner" / "profiles"
    return write_front_matter(profiles / f"{name}.md", front, f"# {name}\n")


def _error_line(proc: Any) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return str(lines[0])


@pytest.mark.parametrize(("front", "key"), BAD)
def test_a_profile_key_refused_by_the_plan_names_the_profiles_file(
    tmp_path: Path, front: dict[str, Any], key: str
) -> None:
    path = _profile("fo", {"provider": "simulated", **front})
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": "fo"})
    line = _error_line(cli("plan", packet, cwd=tmp_path))
    assert line.startswith(f"error: {path}: {key}: "), line
    assert "profile fo" not in line, line


def test_the_file_is_the_one_the_profile_was_loaded_from_whatever_its_name_key(
    tmp_path: Path,
) -> None:
    """``--profile fo`` loads ``profiles/fo.md``; its own ``name: other`` names no file."""
    bad = {"recovery": {"retry": {"class_attempts": {"bogus": 1}}}}
    path = _profile("fo", {"name": "other", "provider": "simulated", **bad})
    packet = make_packet(tmp_path, {"01": {}})
    line = _error_line(cli("plan", packet, "--profile", "fo", cwd=tmp_path))
    assert line.startswith(f"error: {path}: recovery.retry.class_attempts.bogus: "), line
    assert "other" not in line, line
