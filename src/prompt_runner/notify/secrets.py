"""Secrets in notifier URLs: ``{env:NAME}`` read at send time, and what is shown instead.

A URL is kept as written (``json://host/hook?token={env:HOOK_TOKEN}``) and
expanded only in the worker that sends it (:func:`expand`), so the secret
lives in memory for one delivery and is never written down. Whatever is
written or said about a target (``notifications.jsonl``, a warning) goes
through :func:`redact`, and every error text through :meth:`Scrub.clean`,
which takes out the expanded values and the parts :func:`redact` masked.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import quote, quote_plus, unquote

from .config import ENV_REF

MASK = "****"

GENERIC_SCHEMES = frozenset({"json", "jsons", "xml", "xmls", "form", "forms"})
"""Plain webhooks: host and path are shown (token-like parts masked). Every
other Apprise service keeps its tokens in the host and path
(``slack://TokenA/TokenB/TokenC``), so only its scheme is shown."""

_SECRET_QUERY = re.compile(r"token|key|secret|pass|auth|sig|hook|access|cred|session", re.I)
_TOKEN_LIKE = re.compile(r"(?=.*\d)[A-Za-z0-9_\-]{16,}")
_URL = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]*)://(?P<rest>.*)", re.S)


class MissingSecret(Exception):
    """A ``{env:NAME}`` names a variable that is not set (or empty)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"environment variable {name} is not set")
        self.name = name


@dataclass
class Scrub:
    """Values that must never be written: expanded secrets and masked URL parts.
    Thread-safe (the worker adds while the run's thread may clean)."""

    values: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, value: str) -> None:
        if len(value) >= 3:  # a 1-2 character "secret" would mangle every message
            with self._lock:
                self.values.update({value, quote(value, safe=""), quote_plus(value)})

    def clean(self, text: str) -> str:
        """``text`` with every known secret value replaced by ``****``."""
        with self._lock:
            known = sorted(self.values, key=len, reverse=True)
        for value in known:
            text = text.replace(value, MASK)
        return text


def expand(url: str, env: Mapping[str, str], scrub: Scrub) -> str:
    """``url`` with each ``{env:NAME}`` replaced by ``env[NAME]`` (URL-quoted),
    each value added to ``scrub``.

    Raises:
        MissingSecret: a named variable is unset or empty.
    """

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        secret = env.get(name, "")
        if not secret:
            raise MissingSecret(name)
        scrub.add(secret)
        return quote(secret, safe="")

    return ENV_REF.sub(value, url)


def redact(url: str, scrub: Scrub | None = None) -> str:
    """How ``url`` (as written, not expanded) is shown: ``{env:NAME}`` kept (it
    holds no secret), a password, secret-looking query values and token-like
    path parts masked; for a service other than a plain webhook only the
    scheme. The masked parts are added to ``scrub``."""
    match = _URL.match(url.strip())
    if match is None:
        return MASK
    scheme, rest = match.group("scheme"), match.group("rest")
    if scheme.lower() not in GENERIC_SCHEMES:
        if scrub is not None:
            for part in re.split(r"[/?&=:@]", ENV_REF.sub("", rest)):
                if len(part) >= 6:
                    scrub.add(unquote(part))
        return f"{scheme}://{MASK}"
    path, _, query = rest.partition("?")
    netloc, slash, path = path.partition("/")
    netloc = _mask_password(netloc, scrub)
    parts = [_mask_token(part, scrub) for part in path.split("/")] if slash else []
    shown = f"{scheme}://{netloc}" + ("/" + "/".join(parts) if slash else "")
    if query:
        shown += "?" + "&".join(_mask_query(item, scrub) for item in query.split("&"))
    return shown


def _mask_password(netloc: str, scrub: Scrub | None) -> str:
    userinfo, at, host = netloc.rpartition("@")
    if not at:
        return netloc
    user, colon, password = userinfo.partition(":")
    if colon and password and not ENV_REF.fullmatch(password):
        if scrub is not None:
            scrub.add(unquote(password))
        return f"{user}:{MASK}@{host}"
    return netloc


def _mask_token(part: str, scrub: Scrub | None) -> str:
    if ENV_REF.search(part) or not _TOKEN_LIKE.fullmatch(part):
        return part
    if scrub is not None:
        scrub.add(unquote(part))
    return MASK


def _mask_query(item: str, scrub: Scrub | None) -> str:
    name, eq, value = item.partition("=")
    if not eq or not value or ENV_REF.fullmatch(value):
        return item
    if _SECRET_QUERY.search(name) or _TOKEN_LIKE.fullmatch(value):
        if scrub is not None:
            scrub.add(unquote(value))
        return f"{name}={MASK}"
    return item
