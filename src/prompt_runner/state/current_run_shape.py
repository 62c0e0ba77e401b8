"""The JSON types of ``runs/current.json``'s fields, as its writers record them.

The runner writes (runner/opening.py ``record_start``, runner/finishing.py,
runner/locks.py, control/contracts.py)::

    {"schema_version": 1, "run_id": "<safe name>", "fingerprint": "...",
     "status": "running", "targets": ["01", ...], "packet": "...",
     "started_at": "...", "resumed_at": "..."|null, "finished_at": "...",
     "closed_by": "..."}

Its readers rely on those types: the ``run_id`` names ``runs/<run_id>/`` and is
compared with the run a command targets, ``status`` says whether that run
ended, ``targets`` is the fence a resumed run keeps. A field of another type
(``{"run_id": 5, "status": [1]}``) is a damaged file, refused as one that is
not JSON is (state/current_run.py): it was never silently read as "no run", or
resumed as run ``5``. A key missing stays what it was (no run id: no run
recorded), and keys not listed here are left alone.

Only ``re`` is imported (loaded with ``json`` already): ``cli/fast.py``, which
loads neither ``pathlib`` nor the error tree, checks the file with it too.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
"""``state/prompt_log._SAFE_NAME``: what a run id naming ``runs/<run_id>/`` may be."""


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _run_id(value: Any) -> bool:
    return isinstance(value, str) and _SAFE_NAME.fullmatch(value) is not None


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _text_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _ids(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "run_id": (
        _run_id,
        "must be a run id (1-128 characters of [A-Za-z0-9._-], not starting with . or -)",
    ),
    "status": (_text, 'must be a string (the run\'s status, e.g. "completed")'),
    "targets": (_ids, "must be a list of prompt id strings"),
    "schema_version": (_integer, "must be an integer"),
    "fingerprint": (_text_or_null, "must be a string"),
    "packet": (_text, "must be a string"),
    "started_at": (_text_or_null, "must be an ISO 8601 time string"),
    "resumed_at": (_text_or_null, "must be an ISO 8601 time string or null"),
    "finished_at": (_text_or_null, "must be an ISO 8601 time string"),
    "closed_by": (_text, "must be a string"),
}
"""Each known key: whether a value has its type, and the clause saying what it must be."""


def wrong_field(doc: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first known key of ``doc`` whose value has the wrong type, and the
    clause saying so (``must be ..., not a number``); ``None`` when every one
    present is right."""
    for key, (valid, need) in FIELDS.items():
        if key in doc and not valid(doc[key]):
            return key, f"{need}, not {_shown(doc[key])}"
    return None


def _shown(value: Any) -> str:
    """``value`` as the error names it: its JSON type, or a short string itself."""
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"a string of {len(value)} characters"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        others = [v for v in value if not isinstance(v, str)]
        return f"a list holding {_shown(others[0])}" if others else "a list"
    return "an object"
