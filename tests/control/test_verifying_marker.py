"""The runner's side of the verification marker (``control/verifying.py``), on real files.

The marker is kept in memory by the process that writes it (``settle`` and
``done`` no longer read it back), so these pin what the file says at each
step, what an amendment arriving mid-verification does, and that ``done``
writes nothing where there is nothing to record.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from prompt_runner.control import verifying
from prompt_runner.control.amendments import amendments_path
from prompt_runner.control.audit import append_record_line
from prompt_runner.packet.loader import Prompt, load_packet
from tests.control._helpers import make_packet

RUN = "run-1"


def _setup(tmp_path: Path) -> tuple[Path, Prompt]:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    state = packet / ".prompt_runner"
    state.mkdir()
    return state, load_packet(packet).prompts[0]


def _marker(state: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((state / "amendments" / "verifying.json").read_text())
    return doc


def _amend(state: Path, n: int) -> None:
    """An amendment of this run (as ``control amend`` records one) adding a file."""
    append_record_line(
        amendments_path(state, "01"),
        {"schema_version": 1, "prompt": "01", "direction": "amend", "operation": "add",
         "add": {"files_exist": [f"extra{n}.txt"]}, "run_id": RUN, "persist": False,
         "at": f"2026-01-01T00:00:0{n}Z"},
    )  # fmt: skip


def test_the_marker_goes_verifying_verified_recorded(tmp_path: Path) -> None:
    state, prompt = _setup(tmp_path)
    contract, fp = verifying.begin(state, RUN, prompt, 1)
    assert contract is prompt.contract
    assert fp == verifying.contract_fingerprint(prompt.contract.to_raw())
    doc = _marker(state)
    assert (doc["stage"], doc["pid"], doc["attempt"]) == ("verifying", os.getpid(), 1)
    assert doc["contract_fingerprint"] == fp
    assert verifying.settle(state, RUN, prompt, 1, fp, passed=True, rounds=1) is None
    assert (_marker(state)["stage"], _marker(state)["pass"]) == ("verified", True)
    verifying.done(state)
    assert _marker(state)["stage"] == "recorded"
    assert _marker(state)["pass"] is True
    before = (state / "amendments" / "verifying.json").read_bytes()
    verifying.done(state)  # nothing to record: the file is left as it is
    assert (state / "amendments" / "verifying.json").read_bytes() == before


def test_an_amendment_between_begin_and_settle_is_verified_again(tmp_path: Path) -> None:
    state, prompt = _setup(tmp_path)
    _contract, fp = verifying.begin(state, RUN, prompt, 2)
    _amend(state, 1)
    newer = verifying.settle(state, RUN, prompt, 2, fp, passed=True, rounds=1)
    assert newer is not None
    amended, fp2 = newer
    assert fp2 != fp
    assert "extra1.txt" in json.dumps(amended.to_raw())
    assert fp2 == verifying.contract_fingerprint(amended.to_raw())
    assert (_marker(state)["stage"], _marker(state)["contract_fingerprint"]) == ("verifying", fp2)
    # No further amendment: the verdict stands.
    assert verifying.settle(state, RUN, prompt, 2, fp2, passed=False, rounds=2) is None
    assert (_marker(state)["stage"], _marker(state)["pass"]) == ("verified", False)


def test_the_last_round_is_frozen_against_later_amendments(tmp_path: Path) -> None:
    state, prompt = _setup(tmp_path)
    _contract, fp = verifying.begin(state, RUN, prompt, 1)
    _amend(state, 1)
    rounds = verifying.MAX_ROUNDS - 1
    newer = verifying.settle(state, RUN, prompt, 1, fp, passed=True, rounds=rounds)
    assert newer is not None
    assert _marker(state)["stage"] == "frozen"
    _amend(state, 2)  # arrives while the frozen round runs: it waits for the next verification
    assert verifying.settle(state, RUN, prompt, 1, newer[1], passed=True, rounds=rounds + 1) is None
    doc = _marker(state)
    assert (doc["stage"], doc["contract_fingerprint"]) == ("verified", newer[1])


def test_done_without_a_verification_writes_no_marker(tmp_path: Path) -> None:
    state, _prompt = _setup(tmp_path)
    verifying.done(state)
    verifying.done(None)
    assert not (state / "amendments" / "verifying.json").exists()


def test_a_persisted_fingerprint_counts_only_persisted_amendments(tmp_path: Path) -> None:
    state, prompt = _setup(tmp_path)
    plain = verifying.contract_fingerprint(prompt.contract.to_raw())
    assert verifying.persisted_fingerprint(state, prompt, RUN) == plain
    _amend(state, 1)  # run-local: not part of the prompt file's contract
    assert verifying.persisted_fingerprint(state, prompt, RUN) == plain
    append_record_line(
        amendments_path(state, "01"),
        {"schema_version": 1, "prompt": "01", "direction": "amend", "operation": "add",
         "add": {"files_exist": ["kept.txt"]}, "run_id": RUN, "persist": True,
         "at": "2026-01-01T00:00:09Z"},
    )  # fmt: skip
    raw = prompt.contract.to_raw()
    raw["files_exist"] = [*raw["files_exist"], "kept.txt"]
    assert verifying.persisted_fingerprint(state, prompt, RUN) == verifying.contract_fingerprint(
        raw
    )
