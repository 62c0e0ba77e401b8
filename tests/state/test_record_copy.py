"""``record_copy``: the store's copy of a folded record (state/_store_common.py).

The runner reads the running prompt's record several times a prompt, and each
read handed back ``copy.deepcopy`` of the kept fold; ``record_copy`` copies
the JSON values a fold gives (dicts, lists, scalars) without deepcopy's
memo. What the readers rely on: an equal value, and no mutation of the copy
ever reaches the kept record (or the reverse).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from prompt_runner.state._store_common import record_copy
from prompt_runner.state.store import FileStore


def _record() -> dict[str, object]:
    return {
        "status": "running",
        "attempts": [
            {"n": 1, "verifier": {"passed": False, "checks": [{"ok": True}, {"ok": None}]}},
            {"n": 2, "usage": {"cost_usd": 0.25, "tokens": 12}},
        ],
        "steered": False,
        "empty": {},
        "none": [],
    }


def test_an_equal_value_that_shares_no_container() -> None:
    original = _record()
    copied = record_copy(original)
    assert copied == original
    assert json.dumps(copied) == json.dumps(original)  # key order too
    copied["attempts"][0]["verifier"]["checks"].append({"ok": False})
    copied["attempts"][1]["usage"]["tokens"] = 99
    copied["empty"]["x"] = 1
    assert original == _record()


def test_a_value_json_does_not_give_is_still_deep_copied() -> None:
    when = {"at": [datetime.datetime(2026, 12, 4)]}
    copied = record_copy({"odd": when})
    assert copied == {"odd": when}
    assert copied["odd"] is not when and copied["odd"]["at"] is not when["at"]


def test_the_kept_record_is_not_reached_by_a_readers_change(tmp_path: Path) -> None:
    store = FileStore(tmp_path / ".prompt_runner")
    store.update_prompt("01", {"status": "running", "notes": {"a": [1, 2]}})
    first = store.load_prompt("01")
    first["notes"]["a"].append(3)
    first["status"] = "changed"
    again = store.load_prompt("01")
    assert again["status"] == "running" and again["notes"] == {"a": [1, 2]}
    assert FileStore(tmp_path / ".prompt_runner").load_prompt("01") == again
    store.close()
