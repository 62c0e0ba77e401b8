"""The ``recovery`` shorthands of ``packet new`` / ``profile new`` are declared once
(``packet.profiles.RECOVERY_SHORTHANDS``): the arguments of both library calls, the
flags of both commands and the block they write follow that one table."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from prompt_runner import new_packet, new_profile
from prompt_runner.cli.parser import build_parser
from prompt_runner.packet.profiles import RECOVERY_SHORTHANDS, profile_path, recovery_settings
from tests.packet._packets import cli

ALL_SET = {
    "resume_attempts": 2,
    "retry_attempts": 3,
    "retry_base_delay_ms": 10,
    "retry_max_delay_ms": 20,
    "retry_jitter": False,
    "auto_repair": True,
    "repair_attempts": 4,
}
BLOCK = (
    "recovery:\n"
    "  resume_attempts: 2\n"
    "  retry:\n"
    "    max_attempts: 3\n"
    "    base_delay_ms: 10\n"
    "    max_delay_ms: 20\n"
    "    jitter: false\n"
    "  repair:\n"
    "    enabled: true\n"
    "    max_attempts: 4\n"
)
FLAGS = [
    "--resume-attempts", "2", "--retry-attempts", "3", "--retry-base-delay-ms", "10",
    "--retry-max-delay-ms", "20", "--no-retry-jitter", "--auto-repair", "--repair-attempts", "4",
]  # fmt: skip


def test_every_shorthand_is_an_argument_and_a_flag_of_both_commands() -> None:
    assert set(ALL_SET) == set(RECOVERY_SHORTHANDS)
    for call in (new_packet, new_profile):
        assert set(RECOVERY_SHORTHANDS) <= set(inspect.signature(call).parameters)
    for argv in (["packet", "new", "x"], ["profile", "new", "x"]):
        parsed = vars(build_parser().parse_args(argv))
        assert {name: parsed[name] for name in RECOVERY_SHORTHANDS} == dict.fromkeys(
            RECOVERY_SHORTHANDS
        )


def test_the_block_keeps_the_order_and_sets_only_what_is_given() -> None:
    assert list(recovery_settings(ALL_SET)) == ["resume_attempts", "retry", "repair"]
    some = dict.fromkeys(RECOVERY_SHORTHANDS) | {"repair_attempts": 1, "retry_jitter": True}
    assert recovery_settings(some) == {"retry": {"jitter": True}, "repair": {"max_attempts": 1}}
    with pytest.raises(KeyError):
        recovery_settings({"retry_attempts": 1})  # a shorthand left out is a bug, not None


def test_library_and_cli_write_the_same_block(tmp_path: Path) -> None:
    made = new_packet("lib", root=tmp_path, **ALL_SET)
    assert BLOCK in (made / "prompt_runner_packet.md").read_text()
    assert cli("packet", "new", "cli", "--root", str(tmp_path), *FLAGS).returncode == 0
    assert BLOCK in (tmp_path / "cli" / "prompt_runner_packet.md").read_text()
    assert BLOCK in new_profile("lib", provider="simulated", **ALL_SET).read_text()
    assert cli("profile", "new", "cli", "--provider", "simulated", *FLAGS).returncode == 0
    assert BLOCK in profile_path("cli").read_text()
