"""Delivering one document to one target, once: an Apprise URL or a command.

Each call is one attempt bounded by ``timeout_s`` and returns an
:class:`Attempt` (never raises for what the target does). Retries, the queue
and the record are the notifier's (:mod:`.notifier`).

* an Apprise URL (https://github.com/caronc/apprise/wiki): ``{env:NAME}``
  expanded now, the plugin's connect and read timeouts set to the attempt's
  bound; plain webhooks (``json://``, ``jsons://``) get the document as their
  JSON payload's ``message``, every other service readable text. ``apprise``
  is imported here, on the first delivery only.
* a command: started without a shell in the packet directory with the run's
  environment plus ``PROMPT_RUNNER_NOTIFICATION`` (the event kind), the
  document on stdin; exit 0 is delivered. Its process group is ended at the
  bound (``proc``'s TERM then KILL).
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import proc
from .document import encoded, readable
from .secrets import GENERIC_SCHEMES, MissingSecret, Scrub, expand

_NOTIFY_TYPES = {
    "run_completed": "success",
    "usage_wait_started": "info",
    "usage_wait_ended": "info",
    "blocked": "warning",
    "budget_spent": "warning",
    "watch_unhealthy": "warning",
}

COMMAND_GRACE_S = 0.5
"""Seconds between SIGTERM and SIGKILL for a command past its bound."""


@dataclass(frozen=True)
class Attempt:
    """How one attempt ended: ``ok``, or why not (``error``, scrubbed of secrets)."""

    ok: bool
    error: str | None = None
    timed_out: bool = False


Registrar = Callable[[int], Callable[[], None] | None]
"""Called with a started command's process-group id; returns what forgets it."""


def send_url(
    url: str,
    document: Mapping[str, Any],
    *,
    timeout_s: float,
    env: Mapping[str, str],
    scrub: Scrub,
) -> Attempt:
    """One attempt at Apprise URL ``url`` (as written; expanded here)."""
    try:
        expanded = expand(url, env, scrub)
    except MissingSecret as exc:
        return Attempt(False, f"{exc}; export it in the run's environment")
    apprise = _apprise()
    plugin = apprise.Apprise.instantiate(expanded, suppress_exceptions=True)
    if plugin is None:
        return Attempt(False, "Apprise does not recognise this URL; see its wiki for the form")
    plugin.socket_connect_timeout = timeout_s
    plugin.socket_read_timeout = timeout_s
    scheme = expanded.partition("://")[0].lower()
    body = encoded(document) if scheme in GENERIC_SCHEMES else readable(document)
    kind = apprise.NotifyType(_NOTIFY_TYPES.get(str(document["kind"]), "failure"))
    started = time.monotonic()
    with _AppriseLog() as said:
        try:
            ok = bool(plugin.notify(body=body, title=str(document["summary"]), notify_type=kind))
        except Exception as exc:  # a plugin bug must not reach the worker loop
            return Attempt(False, scrub.clean(f"Apprise raised {exc!r}"))
    if ok:
        return Attempt(True)
    reason = "; ".join(said.messages[-2:]) or "Apprise reported a failure"
    # Apprise says "a connection error" for a read timeout too; the clock tells.
    timed_out = time.monotonic() - started >= timeout_s * 0.95
    if timed_out:
        reason = f"no answer within {timeout_s:g} s ({reason})"
    return Attempt(False, scrub.clean(reason), timed_out=timed_out)


def run_command(
    argv: tuple[str, ...],
    document: Mapping[str, Any],
    *,
    timeout_s: float,
    env: Mapping[str, str],
    cwd: Path,
    scrub: Scrub,
    on_start: Registrar | None = None,
) -> Attempt:
    """One attempt at the command ``argv``: the document on stdin, exit 0 is delivered."""
    result = proc.run(
        argv,
        cwd=cwd,
        env={**env, "PROMPT_RUNNER_NOTIFICATION": str(document["kind"])},
        timeout_ms=max(1, int(timeout_s * 1000)),
        stdin_text=encoded(document) + "\n",
        grace_s=COMMAND_GRACE_S,
        on_start=on_start,
    )
    if result.start_error is not None:
        return Attempt(False, scrub.clean(f"{argv[0]} could not start: {result.start_error}"))
    if result.timeout is not None:
        return Attempt(False, f"{argv[0]} did not finish within {timeout_s:g} s", timed_out=True)
    if result.returncode != 0:
        tail = (result.stderr.strip().splitlines() or [""])[-1][:300]
        said = f": {tail}" if tail else ""
        return Attempt(False, scrub.clean(f"{argv[0]} exited {result.returncode}{said}"))
    return Attempt(True)


def _apprise() -> Any:
    """The ``apprise`` module, imported on the first delivery.

    Apprise loads its plugins on the first URL, and one of them imports the
    deprecated ``imghdr`` (Python 3.11+): that warning is not the run's
    business, and under ``-W error`` it would fail every delivery. One narrow
    filter (added, not swapped in: ``catch_warnings`` is not thread-safe).
    """
    warnings.filterwarnings("ignore", message="'imghdr' is deprecated", category=DeprecationWarning)
    import apprise  # lazy: only a run that sends a notification pays for apprise

    return apprise


class _AppriseLog(logging.Handler):
    """Collects what Apprise logs at WARNING and above on this thread (its
    plugins say why a send failed only there)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []
        self._thread = threading.get_ident()

    def emit(self, record: logging.LogRecord) -> None:
        if record.thread == self._thread:
            self.messages.append(record.getMessage())

    def __enter__(self) -> _AppriseLog:
        logging.getLogger("apprise").addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("apprise").removeHandler(self)
