"""What the page can ask of a run: each action is one call of the control client.

The dashboard never writes state itself. ``steer`` and ``view`` write one
control request (:func:`prompt_runner.control.client.steer`,
:func:`~prompt_runner.control.client.queue_view`) that the runner decides at
its next event boundary: the page shows it ``pending`` until the outcome
receipt arrives (``control/outcomes/<request>``), then ``applied`` or
``refused`` with the receipt's reason. ``amend`` and ``relax`` are decided at
once by the same code as ``control amend|relax``
(:func:`~prompt_runner.control.client.amend`, ``relax``), so their answer is
final: ``applied`` with the contract's diff, or ``refused`` with the reason
(also in the control log). A relax needs ``confirm: true``; without it the
client refuses it, and the refusal is logged like any other.

Each action's answer is an :class:`Answer` dict: ``{"action", "state":
"pending"|"applied"|"refused", "request", "reason", "detail"}``.

``stop`` and ``stop_after_prompt`` are requests too
(:func:`~prompt_runner.control.client.stop_request`, ``stop`` with
``after_prompt``), refused at once (and logged) when no run is live;
``wake`` is :func:`~prompt_runner.control.client.wake`, as ``control wake``
sends it: refused at once (and logged) when no run is live, else a request
the runner applies while it waits for a usage window and refuses otherwise.
A build whose runner does not know a command refuses it with the reason. A
later action is one entry of :data:`ACTIONS`, and the control request kind it
writes one entry of :data:`COMMANDS` (each a kind the control plane knows:
``control.requests.COMMANDS``; the tests hold the page to both).

Before any of them, :func:`check` holds the body to the action's parameters
(:data:`PARAMS`): a key the action does not take, or a value of the wrong JSON
type (``{"after_prompt": "yes"}``, ``{"author": {}}``), is refused -- the app
answers 400 and sends nothing -- never read as another value or dropped.

Every call passes the source's state root to the client (``state_dir=``),
so the client writes exactly where the page reads, whatever this process's
environment says -- and a workspace's state outside its packet is found the
same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..control import client
from ..control.requests import VIEW_SETTINGS
from ..errors import PromptRunnerError, UserError
from .sources import RunSource

Answer = dict[str, Any]
Action = Callable[[RunSource, Mapping[str, Any], str | None], Answer]


def _answer(action: str, state: str, **rest: Any) -> Answer:
    return {
        "action": action,
        "state": state,
        "request": None,
        "reason": None,
        "detail": None,
    } | rest


def _text(params: Mapping[str, Any], key: str) -> str:
    """``params[key]`` ("" when absent or null).

    Raises:
        UserError: it is given and is not a string (``{"text": 5}``).
    """
    value = params.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UserError(
            f"{key} must be a string, not {type(value).__name__} {value!r}"[:120],
            key=key,
            fix=f'send it as a JSON string, e.g. {{"{key}": "..."}}',
        )
    return value


def steer(source: RunSource, params: Mapping[str, Any], author: str | None) -> Answer:
    """Queue a steer (``params["text"]``) for the run's live or unfinished session."""
    name = client.steer(
        source.packet, _text(params, "text"), author=author, state_dir=source.layout.root
    )
    return _answer("steer", "pending", request=name)


def view(source: RunSource, params: Mapping[str, Any], author: str | None) -> Answer:
    """Queue a view change (``log_mode``, ``tool_output``, ``thinking``, ``diff``)."""
    settings = {k: v for k, v in params.items() if v not in (None, "")}
    name, run_id = client.queue_view(
        source.packet, settings, author=author, state_dir=source.layout.root
    )
    detail = None if run_id is not None else "no run is live: the next run applies it"
    return _answer("view", "pending", request=name, detail=detail)


def amend(source: RunSource, params: Mapping[str, Any], author: str | None) -> Answer:
    """Add to a prompt's contract: ``prompt_id``, ``add`` (``{clause: value}``), ``reason``."""
    result = client.amend(
        source.packet,
        _text(params, "prompt_id"),
        add=_mapping(params, "add") or {},
        reason=_text(params, "reason") or None,
        author=author,
        state_dir=source.layout.root,
    )
    return _answer("amend", "applied", detail="\n".join(result["diff"]))


def _names(params: Mapping[str, Any], key: str) -> list[str]:
    """``params[key]``, a list of strings ([] when absent or null).

    Raises:
        UserError: it is given and is not a list of strings -- one string
            (``{"drop": "files_exist"}``) included, as the library refuses it.
    """
    value = params.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        example = value if isinstance(value, str) else "files_exist"
        raise UserError(
            f"{key} must be a list of clause names, not {type(value).__name__} {value!r}"[:120],
            key=key,
            fix=f'send a JSON list, even of one, e.g. {{"{key}": ["{example}"]}}',
        )
    return value


def _mapping(params: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    """``params[key]``, an object (None when absent or null).

    Raises:
        UserError: it is given and is not an object.
    """
    value = params.get(key)
    if value is None or isinstance(value, dict):
        return value
    raise UserError(
        f"{key} must be an object, not {type(value).__name__} {value!r}"[:120],
        key=key,
        fix=f'send a JSON object, e.g. {{"{key}": {{"files_exist": ["a.txt"]}}}}',
    )


def relax(source: RunSource, params: Mapping[str, Any], author: str | None) -> Answer:
    """Weaken a prompt's contract: ``prompt_id``, ``drop`` (a list of clause
    names) and/or ``remove`` (an object), ``reason``, and ``confirm`` -- only
    ``true`` (the JSON value) confirms. A ``drop`` that is one string, or a
    list holding anything but strings, is refused naming the type, as the
    library's ``control_relax`` does."""
    result = client.relax(
        source.packet,
        _text(params, "prompt_id"),
        drop=_names(params, "drop"),
        remove=_mapping(params, "remove"),
        reason=_text(params, "reason") or None,
        confirm=params.get("confirm", False) is True,
        author=author,
        state_dir=source.layout.root,
    )
    return _answer("relax", "applied", detail="\n".join(result["diff"]))


def wake(source: RunSource, params: Mapping[str, Any], author: str | None) -> Answer:
    """End the live run's usage-limit (or pacing) wait now (no params)."""
    name, wait = client.wake(source.packet, author=author, state_dir=source.layout.root)
    until = (wait or {}).get("waiting_until")
    detail = f"the run waited until {until}" if isinstance(until, str) else None
    return _answer("wake", "pending", request=name, detail=detail)


def stop(source: RunSource, params: Mapping[str, Any], author: str | None) -> Answer:
    """Queue a ``stop``: at the next event boundary, or -- ``after_prompt: true`` --
    once the current prompt has ended (``control stop [--after-prompt]``)."""
    after_prompt = params.get("after_prompt", False) is True
    name = client.stop_request(
        source.packet, after_prompt=after_prompt, author=author, state_dir=source.layout.root
    )
    return _answer("stop", "pending", request=name)


def stop_after_prompt(source: RunSource, params: Mapping[str, Any], author: str | None) -> Answer:
    """The page's second stop button: ``stop`` with ``after_prompt: true`` (no params)."""
    return stop(source, {"after_prompt": True}, author)


ACTIONS: dict[str, Action] = {
    "steer": steer,
    "view": view,
    "amend": amend,
    "relax": relax,
    "stop": stop,
    "stop_after_prompt": stop_after_prompt,
    "wake": wake,
}
"""Action name (the URL's last part) -> the call that performs it."""

COMMANDS: dict[str, str] = {
    "steer": "steer",
    "view": "set_view",
    "amend": "amend",
    "relax": "relax",
    "stop": "stop",
    "stop_after_prompt": "stop",
    "wake": "wake",
}
"""Action name -> the control command it is logged as (its request kind, or the
amendment the client writes at once)."""


TEXT, BOOL, NAMES, OBJECT = "text", "bool", "names", "object"
"""The JSON types an action's parameter takes: a string (null is the same as
leaving it out), ``true``/``false`` only, a list of strings (null: none), an
object (null: none)."""

PARAMS: dict[str, dict[str, str]] = {
    "steer": {"text": TEXT},
    "view": dict.fromkeys(VIEW_SETTINGS, TEXT),
    "amend": {"prompt_id": TEXT, "add": OBJECT, "reason": TEXT},
    "relax": {
        "prompt_id": TEXT,
        "drop": NAMES,
        "remove": OBJECT,
        "reason": TEXT,
        "confirm": BOOL,
    },
    "stop": {"after_prompt": BOOL},
    "stop_after_prompt": {},
    "wake": {},
}
"""Action name -> each parameter its body may carry and its type; every action
also takes ``author`` (a string). Anything else is refused by :func:`check`."""

_BOOL_FIX = {
    "after_prompt": 'send {"after_prompt": true} to stop once the current prompt has ended, '
    "or false (or leave it out) to stop now",
    "confirm": 'send {"confirm": true} to confirm the relax',
}


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_one(key: str, kind: str, value: Any) -> None:
    if kind == BOOL:
        if not isinstance(value, bool):
            raise UserError(
                f"{key} must be true or false (a JSON boolean), not "
                + ("null" if value is None else f"{type(value).__name__} {_shown(value)}"),
                key=key,
                fix=_BOOL_FIX.get(key, f'send {{"{key}": true}} or {{"{key}": false}}'),
            )
    elif kind == TEXT:
        if value is not None and not isinstance(value, str):
            raise UserError(
                f"{key} must be a string, not {type(value).__name__} {_shown(value)}",
                key=key,
                fix=f'send it as a JSON string, e.g. {{"{key}": "..."}}',
            )
    elif kind == NAMES:
        _names({key: value}, key)
    else:
        _mapping({key: value}, key)


def check(action: str, body: Mapping[str, Any]) -> None:
    """Refuse a body with a parameter ``action`` does not take or of the wrong type.

    Nothing is sent for a refused body: a wrong type is never read as another
    value (``{"after_prompt": "yes"}`` is not a stop now) and an unknown key is
    never dropped.

    Raises:
        UserError: one sentence naming the parameter and the fix.
        KeyError: no such action.
    """
    taken = PARAMS[action]
    for key, value in body.items():
        kind = TEXT if key == "author" else taken.get(key)
        if kind is None:
            names = ", ".join(taken)
            raise UserError(
                f"the {action} action takes no parameter `{key}`"[:120],
                key=key,
                fix=f"its parameters are {names} and author" if taken else "it takes only author",
            )
        _check_one(key, kind, value)


def refusal(action: str, body: Mapping[str, Any]) -> Answer | None:
    """:func:`check`'s refusal as an answer (None: the body is fine)."""
    try:
        check(action, body)
    except UserError as exc:
        return _answer(action, "refused", reason=str(exc), error=str(exc))
    return None


def perform(
    source: RunSource, action: str, params: Mapping[str, Any], author: str | None
) -> Answer:
    """Run ``action`` for ``source``; a refusal is an answer, never an exception.

    Raises:
        KeyError: no such action (the caller answers 404).
    """
    call = ACTIONS[action]
    try:
        answer = call(source, params, author)
    except PromptRunnerError as exc:  # bad input, or the request could not be written
        return _answer(action, "refused", reason=str(exc))
    answer["action"] = action
    return answer


def receipt_answer(receipt: Mapping[str, Any]) -> Answer:
    """The final answer an outcome receipt gives (``applied`` or ``refused`` + reason)."""
    applied = receipt.get("outcome") == "applied"
    return _answer(
        str(receipt.get("command") or "request"),
        "applied" if applied else "refused",
        request=receipt.get("request"),
        reason=None if applied else (receipt.get("reason") or receipt.get("outcome")),
        detail={k: receipt.get(k) for k in ("at", "author", "prompt_id", "attempt")},
    )
