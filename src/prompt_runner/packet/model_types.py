"""The value types the authoring models share: the choices a key accepts (as
``Literal`` types), values coerced as the reference writes them, and
:class:`Model`, the base of every model (unknown keys refused, frozen)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict

from ..errors import shown_value
from ..option_table import LogMetaMode  # log_meta's words, declared once
from ..providers.failure import ReportedClass

FailurePolicy = Literal["stop", "continue_independent"]

SimulatedErrorKind = ReportedClass  # the failure classes a provider reports, declared once
SIMULATED_ERROR_KINDS: tuple[str, ...] = get_args(SimulatedErrorKind)

PROVIDER_OPTION_KEYS = (
    "adapter_opts",
    "sdk_opts",
    "claude_opts",
    "codex_opts",
    "codex_thread_opts",
    "gemini_opts",
    "amp_opts",
    "cursor_opts",
    "antigravity_opts",
)
INERT_PROMPT_KEYS = ("references", "required_reading", "context_files")

_UNBOUNDED = {"unbounded", "infinity", "infinite"}


def _log_meta(value: Any) -> Any:
    """``log_meta``: ``none|full`` as the reference writes it; ``true``/``false`` still load."""
    if isinstance(value, bool):
        return "full" if value else "none"
    return value


LogMeta = Annotated[LogMetaMode, BeforeValidator(_log_meta)]


TIMEOUT_WORDS = "a whole number of milliseconds (e.g. 600000) or 'unbounded'"


def _timeout(value: Any) -> Any:
    """``timeout``: whole ms, or ``unbounded|infinity|infinite`` (-> the ``unbounded`` marker).

    Raises:
        ValueError: a bool, another string, a fraction, anything else.
    """
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and value.strip().lower() in _UNBOUNDED:
        return "unbounded"
    shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
    raise ValueError(f"must be {TIMEOUT_WORDS}, not {shown}")


Timeout = Annotated[int | Literal["unbounded"] | None, BeforeValidator(_timeout)]


def _no_bool(value: Any) -> Any:
    """A count that is not a bool (pydantic's lax mode reads ``true`` as 1); a
    numeric string still loads, as the reference normalises ``"5"`` in ``recovery``.

    Raises:
        ValueError: ``value`` is a bool.
    """
    if isinstance(value, bool):
        raise ValueError(f"{shown_value(value)} is not a whole number")
    return value


Count = Annotated[int, BeforeValidator(_no_bool)]
"""A ``recovery`` number: a whole number (or its string), never a bool."""


def _no_bool_number(value: Any) -> Any:
    """A fraction that is not a bool (pydantic's lax mode reads ``true`` as 1.0);
    a numeric string still loads, as inside ``recovery`` everywhere.

    Raises:
        ValueError: ``value`` is a bool.
    """
    if isinstance(value, bool):
        raise ValueError(f"{shown_value(value)} is not a number")
    return value


Fraction = Annotated[float, BeforeValidator(_no_bool_number)]
"""A ``recovery`` fraction (``pace_above``): a number (or its string), never a bool."""


def _str_id(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return f"{value:02d}"
    return value


def _str_or_int(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    return value


PromptId = Annotated[str, BeforeValidator(_str_id)]
Phase = Annotated[str | None, BeforeValidator(_str_or_int)]


class Model(BaseModel):
    """Every authoring model: unknown keys are refused, values are frozen.

    Built lazily (``defer_build``): a model's own validator is built the first
    time it is used, so the models a run validates only inside another's
    schema (a repo, a simulated step, a profile, a failover target) never build
    one. The models every run validates or instantiates -- the manifest, the
    front matter, the configs with defaults -- say ``defer_build=False``
    (:data:`EAGER`) and are built at import, as before.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, defer_build=True)


EAGER = ConfigDict(defer_build=False)
"""The ``model_config`` of a :class:`Model` every run validates or instantiates:
built at import (deferring it would only move the cost into the first prompt's
start)."""
