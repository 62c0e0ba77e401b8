"""Per-prompt operation logs: ``prompts/<prompt_id>.jsonl`` under the store root.

A prompt's record (status, source, last verifier report, ... and its attempt
history) is kept as an append-only log of operations, folded on read::

    {"schema_version":1,"op":"update","at":"...","fields":{"status":"running"}}
    {"schema_version":1,"op":"attempt_start","at":"...","key":1,"attempt":{"attempt":1,"mode":"run",...}}
    {"schema_version":1,"op":"attempt_finish","at":"...","key":1,"fields":{"status":"verification_failed",...}}

* ``update`` merges ``fields`` into the top level of the prompt record;
* ``attempt_start`` appends an attempt; its ``key`` is the attempt's 1-based
  position in the prompt's whole history (across invocations);
* ``attempt_finish`` merges ``fields`` into the attempt with that ``key`` only.

Appending an operation costs the size of the operation, whatever the length of
the history; this is what keeps state writes linear in the run (see
:mod:`prompt_runner.state.store`). The same :func:`apply_op` folds operations for
the in-memory store, so both stores agree on semantics.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from prompt_runner.errors import StateError
from prompt_runner.state.jsonl import decode_line
from prompt_runner.state.lines import read_complete_lines

OP_UPDATE = "update"
OP_START = "attempt_start"
OP_FINISH = "attempt_finish"

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_FIX = (
    "restore it from a backup, or delete the bad line (that part of the prompt's history "
    "is then lost)"
)


def is_safe_name(value: str) -> bool:
    """Whether ``value`` could name a state file (see :func:`check_name`): what the
    store writes is always such a name, so any other file is not the store's."""
    return _SAFE_NAME.fullmatch(value) is not None


def check_name(kind: str, value: str) -> str:
    """Return ``value`` if it is safe as a file name component, else raise ``ValueError``.

    Safe: 1-128 characters of ``[A-Za-z0-9._-]``, not starting with ``.`` or ``-``.
    Used for prompt ids and run ids, which name files under the store root.
    """
    if not _SAFE_NAME.fullmatch(value):
        raise ValueError(f"{kind} {value!r} cannot name a state file; use [A-Za-z0-9._-]")
    return value


def new_prompt() -> dict[str, Any]:
    """An empty prompt record: ``{"attempts": []}``."""
    return {"attempts": []}


def apply_op(prompt: dict[str, Any], op: dict[str, Any]) -> None:
    """Apply one operation record to ``prompt`` in place.

    Raises:
        ValueError: unknown op, or a ``key`` that does not match the history
            (start: not the next position; finish: no such attempt).
    """
    kind = op.get("op")
    attempts: list[dict[str, Any]] = prompt.setdefault("attempts", [])
    if kind == OP_UPDATE:
        prompt.update(op["fields"])
        prompt["attempts"] = attempts
    elif kind == OP_START:
        if op.get("key") != len(attempts) + 1:
            raise ValueError(f"attempt key {op.get('key')!r}, expected {len(attempts) + 1}")
        attempts.append(dict(op["attempt"]))
    elif kind == OP_FINISH:
        key = op.get("key")
        if not isinstance(key, int) or not 1 <= key <= len(attempts):
            raise ValueError(f"no attempt with key {key!r}")
        attempts[key - 1].update(op["fields"])
    else:
        raise ValueError(f"unknown op {kind!r}")


def fold_prompt_log(path: Path) -> tuple[dict[str, Any], str | None]:
    """Fold the operation log at ``path`` into a prompt record.

    Returns:
        ``(record, last_at)``: the record (``{"attempts": []}`` for a missing
        file) and the ``at`` of the newest operation (``None`` if none). A torn
        final line is ignored.

    Raises:
        StateError: a complete line is not a valid operation; names the file and
            the line number.
    """
    prompt = new_prompt()
    lines, _torn = read_complete_lines(path)
    return prompt, fold_lines(path, prompt, lines)


def fold_lines(
    path: Path, prompt: dict[str, Any], lines: list[bytes], *, first: int = 1
) -> str | None:
    """:func:`fold_prompt_log`'s fold of the complete ``lines`` (without
    ``\\n``) of ``path`` into ``prompt`` (in place), the first of them line
    ``first`` of the file; returns the ``at`` of the newest operation among
    them (``None`` if none). A bounded watch folds each appended line once so.

    Raises:
        StateError: a line is not a valid operation, as :func:`fold_prompt_log`
            says it.
    """
    last_at: str | None = None
    for number, raw in enumerate(lines, start=first):
        if not raw.strip():
            continue
        try:
            op = decode_line(raw)
            apply_op(prompt, op)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StateError(
                f"corrupt prompt record at line {number} ({exc})", file=path, fix=_FIX
            ) from exc
        at = op.get("at")
        if isinstance(at, str):
            last_at = at
    return last_at
