"""``packet lint``: constructs that load and run, but wrongly (SPEC 9).

Lint is static and lenient: it reads every file itself, keeps going past a bad
file, and reports each hazard as a :class:`Finding` whose message says what
the construct silently does, then the fix (:data:`MESSAGES`). Errors mean the
packet says something other than what will happen; warnings are usually wrong
and occasionally deliberate; ``strict`` promotes every warning to an error
(the CI gate).

The rooms: :mod:`.run` (:func:`lint_packet`, the whole pass), :mod:`.manifest`,
:mod:`.prompts` and :mod:`.contract` (one step each), :mod:`.context` (what
the steps share), :mod:`.report` (the result), :mod:`.messages` (every
finding's text).
"""

from __future__ import annotations

from .context import PLACEHOLDER_MARKER
from .contract import CONTENT_CLAUSES, WEAK_EVIDENCE
from .messages import ERROR, ERROR_KINDS, MESSAGES, WARNING, WARNING_KINDS
from .report import Finding, LintReport
from .run import PlanCheck, lint_packet

__all__ = [
    "CONTENT_CLAUSES",
    "ERROR",
    "ERROR_KINDS",
    "MESSAGES",
    "PLACEHOLDER_MARKER",
    "WARNING",
    "WARNING_KINDS",
    "WEAK_EVIDENCE",
    "Finding",
    "LintReport",
    "PlanCheck",
    "lint_packet",
]
