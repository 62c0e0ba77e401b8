"""Fixtures for provider adapter tests: recorded transcripts and a fake CLI on PATH."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.providers._stream import Outcome, StreamParser
from prompt_runner.providers.events import Event
from tests.helpers.fake_cli import CONFIG_ENV, install_fake_cli, read_records, write_config

DATA = Path(__file__).resolve().parents[1] / "data" / "agent-cli"


def case_dir(provider: str, case: str) -> Path:
    """The recorded transcript directory of ``provider``/``case``."""
    path = DATA / provider / case
    assert path.is_dir(), path
    return path


def replay(
    make: Callable[[Callable[[str, dict[str, Any]], None]], StreamParser],
    provider: str,
    case: str,
) -> tuple[list[Event], Outcome]:
    """Feed a recorded transcript through a parser; return its events and outcome."""
    events: list[Event] = []
    parser = make(lambda kind, data: events.append(Event(kind, data)))  # type: ignore[arg-type]
    folder = case_dir(provider, case)
    for line in (folder / "stdout.jsonl").read_text(encoding="utf-8").splitlines():
        parser.feed_line(line)
    stderr_file = folder / "stderr.txt"
    stderr = stderr_file.read_text(encoding="utf-8") if stderr_file.exists() else ""
    code = int((folder / "exit_code").read_text().strip())
    return events, parser.outcome(code, stderr)


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


@dataclass
class FakeCli:
    """A fake agent CLI installed on PATH (see tests/helpers/fake_cli.py)."""

    bin_dir: Path
    record: Path
    config: Path
    names: list[str] = field(default_factory=list)

    def install(self, name: str, runs: list[dict[str, Any]]) -> None:
        install_fake_cli(self.bin_dir, name)
        write_config(self.config, self.record, runs)

    def records(self) -> list[dict[str, Any]]:
        return read_records(self.record)


@pytest.fixture
def fake_cli(tmp_path: Path) -> FakeCli:
    """A fake-CLI bin dir put first on PATH (the autouse fixture restores the env)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = FakeCli(bin_dir, tmp_path / "record.jsonl", tmp_path / "fake.json")
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ[CONFIG_ENV] = str(fake.config)
    return fake


def load_json_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
