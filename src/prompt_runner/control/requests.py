"""Control request vocabulary and its validation, shared by the CLI and the API.

A request is a JSON object written to ``control/requests/``::

    {"schema_version": 1, "id": "...", "command": "set_view",
     "params": {"tool_output": "full"}, "run_id": "...", "author": "ada",
     "requested_at": "2026-08-10T12:00:00.000000Z"}

Commands and their ``params``:

* ``set_view`` -- any of ``log_mode`` (compact|verbose|studio), ``tool_output``
  (none|summary|preview|full), ``thinking`` (show|hide), ``diff`` (none|stat|full).
* ``steer`` -- ``text``: the message the agent gets next (not blank).
* ``amend`` -- ``prompt_id``, ``reason``, ``add``: ``{clause: value}`` to add,
  optional ``persist`` (bool).
* ``relax`` -- ``prompt_id``, ``reason``, ``confirm: true``, and ``drop``
  (clause names) and/or ``remove`` (``{clause: value}`` to weaken), optional
  ``persist``.
* ``stop`` -- optional ``after_prompt`` (bool): end the run at the next event
  boundary (the session is interrupted, the prompt recorded ``interrupted``),
  or once the current prompt has ended (``control/stopping.py``).
* ``wake`` -- no params: end a usage-limit wait at once (``control/waking.py``).

Client side, :func:`build_request` refuses bad input with a
:class:`~prompt_runner.errors.UserError` before anything is written. Consumer
side, :func:`validate_request` turns whatever arrived into ``(ok, reason)``
and never raises. Standard library only: this is on the CLI hot path.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping
from datetime import UTC, datetime

from prompt_runner.errors import UserError

TYPE_CHECKING = False  # typing costs import time on the CLI hot path
if TYPE_CHECKING:
    from typing import Any

SCHEMA_VERSION = 1

COMMANDS: tuple[str, ...] = ("set_view", "steer", "amend", "relax", "stop", "wake")

VIEW_SETTINGS: dict[str, tuple[str, ...]] = {
    "log_mode": ("compact", "verbose", "studio"),
    "tool_output": ("none", "summary", "preview", "full"),
    "thinking": ("show", "hide"),
    "diff": ("none", "stat", "full"),
}


def validate_view(params: Mapping[str, Any]) -> dict[str, str]:
    """Validate ``set_view`` params and return them as a plain dict.

    Raises:
        UserError: no setting is named, a key is not a view setting, or a
            value is not one the setting takes (the message names both).
    """
    if not params:
        raise UserError(
            "name at least one setting", fix="e.g. --tool-output full or --log-mode verbose"
        )
    view: dict[str, str] = {}
    for key, value in params.items():
        allowed = VIEW_SETTINGS.get(key)
        if allowed is None:
            raise UserError(
                f"unknown view setting `{key}`", key=key, fix=f"use {_either(VIEW_SETTINGS)}"
            )
        if not isinstance(value, str) or value not in allowed:
            shown = value if isinstance(value, str) else repr(value)
            raise UserError(
                f"invalid value `{shown}`", key=key, fix=f"{key} takes {_either(allowed)}"
            )
        view[key] = value
    return view


def validate_steer(params: Mapping[str, Any]) -> dict[str, str]:
    """Validate ``steer`` params (``text``, not blank).

    Raises:
        UserError: the text is missing, blank or not a string, or an unknown key
            is given.
    """
    _no_unknown_keys("steer", params, ("text",))
    text = params.get("text")
    if text is not None and not isinstance(text, str):
        raise UserError(
            f"a steer's text must be a string, not {type(text).__name__} {text!r}"[:120],
            key="text",
            fix='send the message for the agent as a string, e.g. "use the shared helper"',
        )
    if not isinstance(text, str) or not text.strip():
        raise UserError(
            "a steer needs something to say", key="text", fix="give the message for the agent"
        )
    return {"text": text}


def validate_stop(params: Mapping[str, Any]) -> dict[str, bool]:
    """Validate ``stop`` params (``after_prompt``: optional bool).

    Raises:
        UserError: an unknown key, or ``after_prompt`` is not true or false.
    """
    _no_unknown_keys("stop", params, ("after_prompt",))
    after_prompt = params.get("after_prompt", False)
    if not isinstance(after_prompt, bool):
        raise UserError("must be true or false", key="after_prompt")
    return {"after_prompt": after_prompt}


def validate_amendment(
    command: str, params: Mapping[str, Any], *, known_clauses: Collection[str] | None
) -> dict[str, Any]:
    """Validate ``amend`` / ``relax`` params.

    Checks, in order: a prompt is named; something is named to add (amend) or
    to drop/remove (relax); every clause is one the verifier evaluates (when
    ``known_clauses`` is given); ``reason`` is present; relax has ``confirm``.

    Args:
        command: ``"amend"`` or ``"relax"``.
        params: see the module docstring.
        known_clauses: clause names the verifier evaluates; ``None`` skips
            that check (the caller could not load them).

    Returns:
        The params with ``prompt_id`` normalised (``3`` -> ``03``).

    Raises:
        UserError: one sentence naming the missing or wrong part.
    """
    fields = ("prompt_id", "reason", "persist", "add", "drop", "remove", "confirm")
    _no_unknown_keys(command, params, fields)
    raw_id = params.get("prompt_id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise UserError(f"name the prompt to {command}", key="prompt_id", fix="e.g. 01")
    out: dict[str, Any] = {"prompt_id": normalize_prompt_id(raw_id)}
    clauses: list[str] = []
    if command == "amend":
        add = _clause_map(params, "add")
        if not add:
            raise UserError("name what to add", key="add", fix="e.g. --add-file lib/foo.py")
        out["add"] = add
        clauses.extend(add)
    else:
        drop = params.get("drop", [])
        if not isinstance(drop, list) or not all(isinstance(c, str) and c for c in drop):
            raise UserError("must be a list of clause names", key="drop")
        remove = _clause_map(params, "remove")
        if not drop and not remove:
            raise UserError("name what to relax", key="drop", fix="e.g. --drop files_exist")
        if drop:
            out["drop"] = list(drop)
        if remove:
            out["remove"] = remove
        clauses.extend(drop)
        clauses.extend(remove)
    if known_clauses is not None:
        for clause in clauses:
            if clause not in known_clauses:
                raise UserError(
                    f"unknown clause `{clause}`",
                    fix=f"the verifier evaluates {_either(sorted(known_clauses))}",
                )
    reason = params.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise UserError("--reason is mandatory", fix="say why the contract changes")
    out["reason"] = reason
    if command == "relax":
        if params.get("confirm") is not True:
            raise UserError(
                "relax needs --confirm", fix="removing a requirement is the risky direction"
            )
        out["confirm"] = True
    persist = params.get("persist", False)
    if not isinstance(persist, bool):
        raise UserError("must be true or false", key="persist")
    if persist:
        out["persist"] = True
    return out


def validate_params(
    command: str, params: Mapping[str, Any], *, known_clauses: Collection[str] | None = None
) -> dict[str, Any]:
    """Validate ``params`` for ``command`` and return the normalised params.

    Raises:
        UserError: the command is unknown or its params are wrong.
    """
    if command == "set_view":
        return dict(validate_view(params))
    if command == "steer":
        return dict(validate_steer(params))
    if command in ("amend", "relax"):
        return validate_amendment(command, params, known_clauses=known_clauses)
    if command == "stop":
        return dict(validate_stop(params))
    if command == "wake":
        _no_unknown_keys("wake", params, ())
        return {}
    raise UserError(f"unknown control command `{command}`", fix=f"use {_either(COMMANDS)}")


def build_request(
    command: str,
    params: Mapping[str, Any],
    *,
    run_id: str | None,
    author: str | None,
    known_clauses: Collection[str] | None = None,
) -> dict[str, Any]:
    """Validate and build one request, ready for ``ControlStore.write_request``.

    Args:
        command: one of :data:`COMMANDS`.
        params: the command's params (see the module docstring).
        run_id: the run the request targets; ``None`` means whichever is current.
        author: who asks (free text), or ``None``.
        known_clauses: clause names for ``amend``/``relax`` validation.

    Returns:
        ``{schema_version, id, command, params, run_id, author, requested_at}``;
        ``requested_at`` is ISO 8601 UTC with microseconds and a ``Z``.

    Raises:
        UserError: the command or its params are invalid; nothing is written.
    """
    clean = validate_params(command, params, known_clauses=known_clauses)
    now = datetime.now(UTC)
    return {
        "schema_version": SCHEMA_VERSION,
        "id": f"{now:%Y%m%dT%H%M%S%fZ}-{os.urandom(4).hex()}",
        "command": command,
        "params": clean,
        "run_id": run_id,
        "author": author,
        "requested_at": now.isoformat(timespec="microseconds").replace("+00:00", "Z"),
    }


def validate_request(
    payload: object,
    *,
    current_run_id: str | None,
    known_clauses: Collection[str] | None = None,
) -> tuple[bool, str]:
    """Judge a request as the consumer received it; never raises.

    Args:
        payload: the parsed request (anything: it came from a file).
        current_run_id: the run consuming requests; a request naming another
            run is refused. A request without ``run_id`` targets any run.
        known_clauses: as for :func:`validate_amendment`.

    Returns:
        ``(True, "")``, or ``(False, reason)`` where reason is ``unparseable``,
        ``no command``, ``unknown command``, ``targets run <id>, ...``, or the
        params error sentence.
    """
    if not isinstance(payload, dict):
        return False, "unparseable"
    command = payload.get("command")
    if command is None or (isinstance(command, str) and not command.strip()):
        return False, "no command"
    if not isinstance(command, str) or command not in COMMANDS:
        return False, "unknown command"
    run_id = payload.get("run_id")
    if run_id is not None and run_id != current_run_id:
        current = f"the current run is {current_run_id}" if current_run_id else "no run is current"
        return False, f"targets run {run_id}, but {current}"
    params = payload.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return False, "params must be a JSON object"
    try:
        validate_params(command, params, known_clauses=known_clauses)
    except UserError as exc:
        return False, str(exc)
    return True, ""


def normalize_prompt_id(raw: str) -> str:
    """Trim a prompt id and left-pad a numeric one to two digits (``3`` -> ``03``)."""
    text = raw.strip()
    return text.zfill(2) if text.isdigit() else text


def _no_unknown_keys(command: str, params: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in params:
        if key not in allowed:
            raise UserError(
                f"unknown {command} parameter `{key}`", key=key, fix=f"use {_either(allowed)}"
            )


def _clause_map(params: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = params.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(k, str) and k for k in value):
        raise UserError("must map clause names to values", key=key)
    return dict(value)


def _either(options: Collection[str]) -> str:
    items = list(options)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
