"""Who may talk to the dashboard: the ``Host`` check, the token, CSRF and ``Origin``.

An ASGI middleware in front of every route (pages, data, streams, files):

1. **Host.** The request's ``Host`` must name this server: a loopback name
   (``127.0.0.1``, ``localhost``, ``[::1]``), the address it is bound to, or --
   bound to every address -- this machine's host name or one of its interface
   addresses. Anything else is refused (403): a page on another site that
   rebinds its own name to 127.0.0.1 (DNS rebinding) sends its own name.
2. **Token.** When the server has one (always, off loopback), every request
   carries it: the ``pr_dashboard_<port>`` cookie, an ``Authorization: Bearer``
   header, or ``?token=`` -- which sets the cookie (``HttpOnly``,
   ``SameSite=Strict``) and redirects to the same address without it, so the
   token leaves the address bar and the history. Missing or wrong: 401.
3. **State changes.** A request that is not ``GET``/``HEAD`` must carry an
   ``Origin`` equal to ``http://<its Host>`` and the page's CSRF token in
   ``X-CSRF-Token``; else 403. (A cross-site form cannot set the header, and a
   cross-site script cannot read the page that holds the token.)

Every response gets a strict ``Content-Security-Policy`` (scripts and styles
only from this server, no inline script), ``X-Content-Type-Options: nosniff``,
``Referrer-Policy: no-referrer`` and ``frame-ancestors 'none'``.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SAFE_METHODS = frozenset({"GET", "HEAD"})
CSRF_HEADER = "x-csrf-token"

HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        b"connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def is_loopback(host: str) -> bool:
    """True when ``host`` is a loopback name or address (``127.0.0.0/8``, ``::1``)."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def allowed_hosts(bind: str) -> frozenset[str]:
    """The host names a request's ``Host`` may carry for a server bound to ``bind``.

    Loopback names always; the bound address itself; and for a wildcard bind
    (``0.0.0.0``, ``::``) this machine's host names and interface addresses
    (``psutil.net_if_addrs``).
    """
    names = set(LOOPBACK_NAMES)
    name = bind.strip("[]").lower()
    names.add(name)
    if name in ("0.0.0.0", "::", ""):
        names.update(_machine_names())
    return frozenset(names)


def _machine_names() -> set[str]:
    names: set[str] = set()
    for get in (socket.gethostname, socket.getfqdn):
        with contextlib.suppress(OSError):
            names.add(get().lower())
    try:
        import psutil  # lazy: only a server bound to every address lists them

        for addrs in psutil.net_if_addrs().values():
            for addr in addrs:
                if addr.family in (socket.AF_INET, socket.AF_INET6):
                    names.add(addr.address.split("%")[0].lower())
    except Exception:
        pass
    return names


def host_name(host_header: str) -> str:
    """The name part of a ``Host`` header, lower case, without port or brackets."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}


async def _reply(
    send: Send, status: int, text: str, extra: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    body = text.encode("utf-8")
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *HEADERS,
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """The middleware (see the module docstring).

    Args:
        app: the ASGI app behind it.
        hosts: :func:`allowed_hosts` of the bind address.
        token: the access token (``None``: none needed -- loopback only).
        csrf: the CSRF token the pages carry.
        cookie: the cookie's name.
    """

    def __init__(
        self, app: ASGIApp, *, hosts: frozenset[str], token: str | None, csrf: str, cookie: str
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.token = token
        self.csrf = csrf
        self.cookie = cookie

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "")
        if host_name(host) not in self.hosts:
            await _reply(send, 403, "this dashboard does not answer to that Host name\n")
            return
        if self.token is not None:
            query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
            given = query.get("token")
            if given is not None and scope["method"] in SAFE_METHODS:
                if not hmac.compare_digest(given.encode(), self.token.encode()):
                    await _reply(send, 401, "wrong token: open the address the dashboard printed\n")
                    return
                await self._set_cookie_and_redirect(scope, query, send)
                return
            if not self._has_token(headers):
                await _reply(
                    send, 401, "this dashboard needs its token: open the address it printed\n"
                )
                return
        if scope["method"] not in SAFE_METHODS:
            problem = self._state_change_problem(headers, host)
            if problem is not None:
                await _reply(send, 403, problem + "\n")
                return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)

    def _has_token(self, headers: dict[str, str]) -> bool:
        assert self.token is not None
        want = self.token.encode()
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer ") and hmac.compare_digest(
            auth[7:].strip().encode(), want
        ):
            return True
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:
            return False
        morsel = jar.get(self.cookie)
        return morsel is not None and hmac.compare_digest(morsel.value.encode(), want)

    def _state_change_problem(self, headers: dict[str, str], host: str) -> str | None:
        origin = headers.get("origin")
        if not origin:
            return "a state-changing request needs an Origin header"
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or parts.netloc.lower() != host.strip().lower():
            return f"Origin {origin} is not this dashboard"
        if not hmac.compare_digest(headers.get(CSRF_HEADER, "").encode(), self.csrf.encode()):
            return "a state-changing request needs the page's CSRF token (X-CSRF-Token)"
        return None

    async def _set_cookie_and_redirect(
        self, scope: Scope, query: dict[str, str], send: Send
    ) -> None:
        assert self.token is not None
        rest = {k: v for k, v in query.items() if k != "token"}
        location = scope.get("path", "/") + (f"?{urlencode(rest)}" if rest else "")
        cookie = f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await _reply(
            send,
            303,
            "token accepted\n",
            [(b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode("latin-1"))],
        )
