"""Every process a supervision test launched is gone when it ends, whatever happened."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.supervise._helpers import kill_marked


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path: Path) -> Iterator[None]:
    yield
    tokens: list[str] = []
    for path in tmp_path.rglob("record.json"):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("schema") == "prompt_runner.supervisor/v1":
            tokens += [doc.get("marker", ""), *doc.get("earlier_markers", [])]
    kill_marked([t for t in tokens if t])
