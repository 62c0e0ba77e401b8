"""The list checks of a yaml / json clause (``array_items_require``,
``array_none_match``) say the same when the path holds no list."""

from __future__ import annotations

import json
from pathlib import Path

from tests.verifier.conftest import Check

LISTS = {
    "json": [
        {
            "path": "m.json",
            "array_items_require": {"missing": ["a"], "scalar": ["a"]},
            "array_none_match": [
                {"path": "gone", "equals": 1},
                {"path": "scalar", "field": "a", "equals": 1},
                {"path": "items", "equals": 1},
            ],
        }
    ]
}


def test_a_path_without_a_list_is_missing_or_not_a_list_in_order(
    check: Check, git_repo: Path
) -> None:
    (git_repo / "m.json").write_text(json.dumps({"scalar": 3, "items": [0, 1]}))
    [found] = check(LISTS).items
    assert not found.passed
    assert found.details == (
        "missing is missing; scalar is not a list; gone is missing; scalar is not a list; "
        "items[1] equals 1, which no item may match"
    )
