"""A simulated step's ``error.recovery`` (the failure envelope's overrides): every
entry is one the envelope applies, or the packet is refused naming the file and
the key -- an unknown key (``retry: {max_attempts: 0}``) or a wrong value was
dropped without a word before (new user t5, #11). Real CLI runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def packet_with(root: Path, recovery: dict[str, object]) -> Path:
    return make_packet(
        root,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {"error": {"kind": "provider_capacity", "recovery": recovery}},
                        {"writes": [{"path": "d.txt", "text": "d"}]},
                    ]
                },
                "verify": {"files_exist": ["d.txt"]},
            }
        },
    )


@pytest.mark.parametrize(
    ("recovery", "said"),
    [
        ({"retry": {"max_attempts": 0}}, "unknown key 'retry'"),
        ({"retryable?": "no"}, "retryable? must be true or false"),
        ({"suggested_max_attempts": -1}, "suggested_max_attempts must be a whole number"),
        ({"suggested_delay_ms": True}, "suggested_delay_ms must be a whole number"),
        ({"class": "bogus"}, "class 'bogus' is no failure class"),
    ],
)
def test_an_entry_the_envelope_would_drop_is_refused_naming_file_and_key(
    tmp_path: Path, recovery: dict[str, object], said: str
) -> None:
    packet = packet_with(tmp_path, recovery)
    for args in (("run", packet), ("packet", "lint", packet)):
        done = cli(*args)
        text = done.stdout + done.stderr
        assert done.returncode in (1, 2) and "Traceback" not in text, text
        assert "01_step.prompt.md" in text and "simulate.attempts[0].error.recovery" in text
        assert said in text
    assert cli("run", packet).returncode == 2
    assert not (tmp_path / "repo" / "d.txt").exists()  # nothing ran


def test_the_entries_the_envelope_applies_still_load_and_apply(tmp_path: Path) -> None:
    # retryable? false: the capacity error is not retried, the prompt fails at once
    packet = packet_with(tmp_path, {"retryable?": False, "suggested_max_attempts": 0})
    done = cli("run", packet)
    assert done.returncode == 1, done.stdout + done.stderr
    assert not (tmp_path / "repo" / "d.txt").exists()
