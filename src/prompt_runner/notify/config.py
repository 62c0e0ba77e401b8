"""The ``notify:`` key: who is told about a run, about what, and how long to try.

``notify`` may be set in a profile, a packet manifest or a workspace manifest::

    notify:
      urls: ["json://hooks.example/prompt-runner?token={env:HOOK_TOKEN}"]   # Apprise URLs
      command: ["notify-send-wrapper", "--urgent"]  # gets the document on stdin
      on: [run_completed, run_failed, blocked]      # default: every event kind
      timeout: 10s                                  # per delivery, and the most a run's exit waits
      retries: 2                                    # more tries after a failed one
      enabled: true                                 # false turns off a less specific level's

Levels merge key by key, the more specific level winning (profile < packet
manifest < workspace manifest): a profile may hold the URLs and a manifest
narrow ``on``. Each level is checked alone first, so an error names the file
that holds the bad key. ``{env:NAME}`` in a URL is a secret read from the
environment when a notification is sent (never here, never written down).

Standard library only (besides the errors and the duration parser): the
config is checked wherever a plan is resolved.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..durations import parse_duration
from ..errors import UserError

EVENT_KINDS: tuple[str, ...] = (
    "run_completed",
    "run_failed",
    "prompt_failed",
    "blocked",
    "usage_wait_started",
    "usage_wait_ended",
    "budget_spent",
    "watch_unhealthy",
)
"""Every event a notifier may be told about (``notify.on`` picks among them)."""

DEFAULT_TIMEOUT_S = 10.0
"""``notify.timeout`` when none is set, in seconds."""

MAX_TIMEOUT_S = 300.0
"""The longest ``notify.timeout`` (5 minutes): a run's exit never waits longer."""

DEFAULT_RETRIES = 2
MAX_RETRIES = 10

KEYS = ("urls", "command", "on", "timeout", "retries", "enabled")

ENV_REF = re.compile(r"\{env:([^{}]*)\}")
"""``{env:NAME}`` in a URL (NAME checked by :func:`_check_url`)."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


@dataclass(frozen=True)
class NotifyConfig:
    """A resolved ``notify:`` block.

    Attributes:
        urls: Apprise URLs as written (``{env:NAME}`` not expanded).
        command: argv of a program that gets the document on stdin (``None``: none).
        on: the event kinds delivered (default: all of :data:`EVENT_KINDS`).
        timeout_s: seconds one delivery attempt may take, and the most a run's
            exit waits for queued deliveries.
        retries: further attempts after a failed one (so ``retries + 1`` in all).
        file: the most specific file that set any of it (for messages).
    """

    urls: tuple[str, ...] = ()
    command: tuple[str, ...] | None = None
    on: frozenset[str] = frozenset(EVENT_KINDS)
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    file: str | None = None

    def wants(self, kind: str) -> bool:
        """Whether events of ``kind`` are delivered."""
        return kind in self.on

    def apprise_missing(self) -> str | None:
        """A warning when ``urls`` are set and the ``apprise`` library (the
        ``notify`` extra) cannot be imported, else ``None``. Looks the module up
        (``importlib.util.find_spec``) without importing it."""
        if not self.urls:
            return None
        import importlib.util  # lazy: only a config with URLs asks

        if importlib.util.find_spec("apprise") is not None:
            return None
        where = f" in {self.file}" if self.file else ""
        return (
            f"notify: urls{where} need the apprise library, which is not installed; "
            "deliveries to them will fail (install it: pip install 'prompt-runner[notify]')"
        )

    def env_names(self) -> list[str]:
        """The environment variables the URLs read (``{env:NAME}``), in order, once each."""
        return list(dict.fromkeys(m.group(1) for url in self.urls for m in ENV_REF.finditer(url)))


def parse_notify(raw: Any, *, file: str, key: str = "notify") -> NotifyConfig | None:
    """Validate one level's ``notify`` mapping into a :class:`NotifyConfig`
    (``None`` when it says ``enabled: false``).

    Args:
        raw: the YAML value of ``notify``.
        file: the file it came from (named by errors).
        key: its key path in that file.

    Raises:
        UserError: not a mapping, an unknown key, a wrong value, or no target
            (neither ``urls`` nor ``command``) while enabled.
    """
    return resolve_notify([(file, raw)], key=key)


def resolve_notify(
    levels: Iterable[tuple[str, Any]], *, key: str = "notify"
) -> NotifyConfig | None:
    """Merge ``(file, raw notify)`` levels, least specific first, key by key.

    A level whose ``raw`` is ``None`` is skipped. Returns ``None`` when no
    level sets ``notify`` or the merged ``enabled`` is false.

    Raises:
        UserError: a level's value is wrong (naming that level's file and the
            key), or the merged config names no target (naming the most
            specific file).
    """
    merged: dict[str, Any] = {}
    file: str | None = None
    for level_file, raw in levels:
        if raw is None:
            continue
        merged.update(check_level(raw, file=level_file, key=key))
        file = level_file
    if file is None or not merged.get("enabled", True):
        return None
    urls = tuple(merged.get("urls", ()))
    command = merged.get("command")
    if not urls and not command:
        raise UserError(
            "names no one to tell",
            file=file,
            key=key,
            fix="add `urls:` (Apprise URLs) or `command:` (an argv list), or `enabled: false`",
        )
    return NotifyConfig(
        urls=urls,
        command=tuple(command) if command else None,
        on=frozenset(merged.get("on", EVENT_KINDS)),
        timeout_s=merged.get("timeout", DEFAULT_TIMEOUT_S),
        retries=merged.get("retries", DEFAULT_RETRIES),
        file=file,
    )


def check_level(raw: Any, *, file: str, key: str = "notify") -> dict[str, Any]:
    """One level's keys alone, checked and normalised (``timeout`` in seconds):
    a level may leave the targets to another (a workspace narrowing ``on``).

    Raises:
        UserError: not a mapping, an unknown key or a wrong value.
    """
    if not isinstance(raw, Mapping):
        raise UserError(
            f"must be a mapping (got {_shown(raw)})",
            file=file,
            key=key,
            fix='write e.g. `notify: {urls: ["json://host/hook"], on: [run_failed]}`',
        )
    out: dict[str, Any] = {}
    for name, value in raw.items():
        where = f"{key}.{name}"
        if name not in KEYS:
            raise UserError(
                f"unknown key {name!r}", file=file, key=where, fix=f"use one of {', '.join(KEYS)}"
            )
        out[name] = _CHECKS[name](value, file, where)
    return out


def _check_urls(value: Any, file: str, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise UserError(
            f"must be a list of Apprise URLs (got {_shown(value)})",
            file=file,
            key=key,
            fix='write e.g. `urls: ["json://127.0.0.1:8080/hook"]`',
        )
    for index, url in enumerate(value):
        _check_url(url, file, f"{key}[{index}]")
    return list(value)


def _check_url(url: Any, file: str, key: str) -> None:
    if not isinstance(url, str) or not _SCHEME.match(url.strip()):
        raise UserError(
            f"{_shown(url)} is not an Apprise URL",
            file=file,
            key=key,
            fix="write SCHEME://..., e.g. json://host/path, ntfy://topic, "
            "mailto://user:{env:MAIL_PASSWORD}@example.com",
        )
    for match in ENV_REF.finditer(url):
        if not _ENV_NAME.fullmatch(match.group(1)):
            raise UserError(
                f"{match.group(0)!r} does not name an environment variable",
                file=file,
                key=key,
                fix="write {env:NAME} with NAME letters, digits and '_' (e.g. {env:SLACK_TOKEN})",
            )
    if "{env:" in ENV_REF.sub("", url):
        raise UserError(
            "has an unclosed {env:",
            file=file,
            key=key,
            fix="write {env:NAME} to read a secret from the environment",
        )


def _check_command(value: Any, file: str, key: str) -> list[str] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(word, str) and word for word in value)
    ):
        raise UserError(
            f"must be a non-empty list of words, the program first (got {_shown(value)})",
            file=file,
            key=key,
            fix='write e.g. `command: ["/usr/local/bin/tell-me", "--urgent"]` (no shell)',
        )
    return list(value)


def _check_on(value: Any, file: str, key: str) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise UserError(
            f"must be a non-empty list of event kinds (got {_shown(value)})",
            file=file,
            key=key,
            fix=f"use some of {', '.join(EVENT_KINDS)}",
        )
    for index, kind in enumerate(value):
        if kind not in EVENT_KINDS:
            raise UserError(
                f"unknown event kind {_shown(kind)}",
                file=file,
                key=f"{key}[{index}]",
                fix=f"use some of {', '.join(EVENT_KINDS)}",
            )
    return list(value)


def _check_timeout(value: Any, file: str, key: str) -> float:
    """A span in seconds: a number of seconds, or a duration as every key that
    takes one reads it (:func:`~prompt_runner.durations.parse_duration`: ``500ms``,
    ``10s``, ``2m``), at most :data:`MAX_TIMEOUT_S`."""
    if isinstance(value, str):
        # its own bound, said in the one sentence below (not the 30 days of any duration)
        seconds = parse_duration(value, key=key, file=file, most=math.inf)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    else:
        seconds = -1.0
    if not 0 < seconds <= MAX_TIMEOUT_S:
        raise UserError(
            f"{_shown(value)} is not a duration between 0 and {MAX_TIMEOUT_S:g} s",
            file=file,
            key=key,
            fix="write seconds or a duration such as 500ms, 10s or 2m",
        )
    return seconds


def _check_retries(value: Any, file: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RETRIES:
        raise UserError(
            f"must be a whole number from 0 to {MAX_RETRIES} (got {_shown(value)})",
            file=file,
            key=key,
            fix="set how many times a failed delivery is tried again, e.g. 2",
        )
    return value


def _check_enabled(value: Any, file: str, key: str) -> bool:
    if not isinstance(value, bool):
        raise UserError(
            f"must be true or false (got {_shown(value)})",
            file=file,
            key=key,
            fix="write true or false",
        )
    return value


_CHECKS = {
    "urls": _check_urls,
    "command": _check_command,
    "on": _check_on,
    "timeout": _check_timeout,
    "retries": _check_retries,
    "enabled": _check_enabled,
}


def _shown(value: Any) -> str:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return repr(value)
