"""A simulated step's ``error.kind`` takes the failure classes a provider reports,
declared once in ``providers/failure.py`` (SPEC 2.9)."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from prompt_runner import schema
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.model_types import SIMULATED_ERROR_KINDS
from prompt_runner.providers.failure import FAILURE_CLASSES, ReportedClass
from tests.helpers.packets import make_packet

RUNNERS_OWN = ("cli_confirmation_missing", "cli_confirmation_mismatch", "launch_failed", "unknown")


def test_the_simulated_kinds_are_the_reported_classes_and_the_runner_adds_its_own() -> None:
    assert get_args(ReportedClass) == SIMULATED_ERROR_KINDS
    assert (*SIMULATED_ERROR_KINDS, *RUNNERS_OWN) == FAILURE_CLASSES
    kind = schema("prompt")["$defs"]["SimulateError"]["properties"]["kind"]
    assert kind["enum"] == list(SIMULATED_ERROR_KINDS)


def _simulated(tmp_path: Path, kind: str) -> Path:
    simulate = {"attempts": [{"error": {"kind": kind, "message": "boom"}}]}
    return make_packet(tmp_path / kind, {"01": {"simulate": simulate}})


def test_a_reported_class_loads_and_a_runner_class_is_refused(tmp_path: Path) -> None:
    load_packet(_simulated(tmp_path, "transport_timeout"))
    with pytest.raises(UserError, match="kind"):
        load_packet(_simulated(tmp_path, "launch_failed"))
