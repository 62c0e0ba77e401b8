"""A negative, zero or absurd span or count on start, stop, watch or fleet is exit 2
in one sentence naming the flag, and nothing is started, asked or written."""

from __future__ import annotations

from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.errors import ArgumentError
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet
from tests.helpers.workspaces import tree_digest

SLOW = {"simulate": {"attempts": [{"delay_ms": 30000}]}}


@pytest.mark.parametrize(
    "argv",
    [
        ("start", "{packet}", "--timeout", "-1"),
        ("start", "{packet}", "--timeout=-1"),
        ("start", "{packet}", "--timeout", "0"),
        ("start", "{packet}", "--timeout", "9999d"),
        ("start", "{packet}", "--timeout", "inf"),
        ("stop", "{packet}", "--grace", "-5"),
        ("stop", "{packet}", "--grace=-5"),
        ("stop", "{packet}", "--grace", "nan"),
        ("watch", "{packet}", "--interval", "-3"),
        ("watch", "{packet}", "--interval", "0"),
        ("fleet", "stop", "{root}/fleet.yml", "--grace", "-1"),
        ("fleet", "worker", "--address", "127.0.0.1:1", "--slots", "0"),
        ("fleet", "worker", "--address", "127.0.0.1:1", "--slots", "-2"),
        ("dashboard", "--port", "-3"),
        ("dashboard", "--port", "70000"),
    ],
)
def test_a_bad_number_is_exit_2_in_one_sentence_and_starts_nothing(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    packet = make_packet(tmp_path, {"01": SLOW})
    before = tree_digest(tmp_path)
    done = cli(*(a.format(packet=packet, root=tmp_path) for a in argv), cwd=tmp_path, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    flag = [a for a in argv if a.startswith("--")][-1].split("=")[0]
    assert flag in lines[0] and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert tree_digest(tmp_path) == before  # nothing launched, nothing written


def test_a_span_is_written_as_a_duration_too(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    done = cli("watch", packet, "--once", "--interval", "15m", cwd=tmp_path, timeout=60)
    assert done.returncode in (0, 1), done.stderr
    assert "WATCH" in done.stdout


@pytest.mark.parametrize("bad", [-1, 0, float("nan"), float("inf"), True, "60"])
def test_the_library_start_refuses_a_bad_timeout_before_launching(
    tmp_path: Path, bad: object
) -> None:
    packet = make_packet(tmp_path, {"01": SLOW})
    before = tree_digest(tmp_path)
    with pytest.raises(ArgumentError, match=r"start\(live_timeout_s=\.\.\.\)"):
        prompt_runner.start(packet, live_timeout_s=bad)  # type: ignore[arg-type]
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("bad", [-5, float("nan"), float("-inf")])
def test_the_library_stop_refuses_a_bad_grace(tmp_path: Path, bad: float) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    before = tree_digest(tmp_path)
    with pytest.raises(ArgumentError, match=r"stop\(grace_s=\.\.\.\)"):
        prompt_runner.stop(packet, grace_s=bad)
    assert tree_digest(tmp_path) == before
