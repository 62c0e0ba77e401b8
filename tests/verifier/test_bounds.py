"""Durations in a contract are bounded at load time (no overflow deep in a run)."""

from __future__ import annotations

import pytest

from prompt_runner.errors import UserError
from prompt_runner.verifier import parse_contract


def test_a_huge_timeout_is_a_load_time_error() -> None:
    with pytest.raises(UserError) as info:
        parse_contract(
            {"commands": [{"exec": "true", "timeout_ms": 99999999999999999999}]}, file="p.md"
        )
    assert "verify.commands[0].timeout_ms: must be at most 604800000" in str(info.value)


def test_a_week_is_accepted() -> None:
    parse_contract({"commands": [{"exec": "true", "timeout_ms": 604800000}]}, file="p.md")
