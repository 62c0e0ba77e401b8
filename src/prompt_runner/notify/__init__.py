"""Notifications: telling people (or programs) when a run needs them.

``notify:`` (a profile, a packet manifest or a workspace manifest;
:mod:`.config`) names Apprise URLs and/or a command, the event kinds to send
and a timeout. The runner emits events through a :class:`Notifier`
(:mod:`.notifier`): each becomes a versioned JSON document
(:mod:`.document`), delivered off the run's path by a worker thread with
retries and recorded in ``notifications.jsonl`` (:mod:`.record`). Secrets
stay in the environment (``{env:NAME}``, :mod:`.secrets`).

``apprise`` is imported only when a URL is first sent to (:mod:`.targets`).
"""

from __future__ import annotations

from .config import (
    DEFAULT_TIMEOUT_S,
    EVENT_KINDS,
    NotifyConfig,
    check_level,
    parse_notify,
    resolve_notify,
)
from .document import SCHEMA
from .notifier import Notifier, open_notifier
from .secrets import redact

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "EVENT_KINDS",
    "SCHEMA",
    "Notifier",
    "NotifyConfig",
    "check_level",
    "open_notifier",
    "parse_notify",
    "redact",
    "resolve_notify",
]
