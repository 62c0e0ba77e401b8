"""Cost budget values, as the plan reads them (the runner's ledger is
:mod:`prompt_runner.runner.budget`).

Two opt-in budgets, in US dollars: ``max_cost_usd`` (a provider option, per
prompt invocation) and ``max_run_cost_usd`` (manifest, ``--max-run-cost-usd``,
API option; the whole run). :func:`check_budget` validates either where it is
read; :func:`usd` prints an amount.
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import UserError

PROMPT_KEY = "max_cost_usd"
RUN_KEY = "max_run_cost_usd"
EPSILON = 1e-9  # sums of reported floats: 0.7 + 0.1 must reach 0.8


def usd(amount: float) -> str:
    """``$0.52``: cents, or more digits when cents would hide the amount."""
    text = f"{amount:.2f}"
    if abs(float(text) - amount) > EPSILON:
        text = f"{amount:.6f}".rstrip("0")
    return f"${text}"


def check_budget(
    value: Any, *, key: str, file: str | None = None, from_text: bool = False
) -> float | None:
    """A budget value as a positive finite float (``None`` = no budget).

    Args:
        value: the raw value (``None`` when not set).
        key: the key path or flag to name in the error.
        file: the file the value came from, if any.
        from_text: accept a numeric string (a command-line flag).

    Raises:
        UserError: not a number, not finite, or not greater than 0.
    """
    if value is None:
        return None
    number: Any = value
    if from_text and isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = value
    ok = (
        isinstance(number, int | float)
        and not isinstance(number, bool)
        and math.isfinite(number)
        and number > 0
    )
    if not ok:
        name = key.rsplit(".", 1)[-1].lstrip("-").replace("-", "_")
        shown = repr(value) if not isinstance(value, dict | list) else type(value).__name__
        raise UserError(
            f"{shown} is not a budget (it must be a number of US dollars greater than 0)",
            file=file,
            key=key,
            fix=f"set {name} to the most it may spend, e.g. 0.5, or remove it",
        )
    return float(number)
