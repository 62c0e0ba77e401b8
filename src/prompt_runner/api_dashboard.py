"""The library's dashboard: the ASGI app over a set of runs, and the server that serves it.

:func:`dashboard_app` builds the app (Starlette; pass it to any ASGI server),
:func:`serve_dashboard` binds the address and serves it with uvicorn until
interrupted (what ``prompt-runner dashboard`` does). Both need the
``dashboard`` extra (``pip install 'prompt-runner[dashboard]'``), imported
only when called: nothing on the CLI's other paths loads it.

Security (``docs/dashboard.md``): loopback (``127.0.0.1``) by default; any
other address needs a token, generated when none is given, that every
request carries; state-changing requests need the page's CSRF token and a
matching ``Origin``; the ``Host`` header is checked.
"""

from __future__ import annotations

import getpass
import os
import re
import secrets
import socket
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from .api_calls import public
from .errors import InfrastructureError, UserError

PathLike = str | os.PathLike[str]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
_TOKEN = re.compile(r"[A-Za-z0-9._~-]{8,256}")


class DashboardAddress(NamedTuple):
    """Where a dashboard listens.

    Attributes:
        url: the address to open (with ``?token=`` when a token is needed).
        host, port: what the server is bound to (``port`` is the real one when 0 was asked).
        token: the access token, or ``None`` (loopback without one).
        token_generated: the token was made here (print it: nobody else knows it).
    """

    url: str
    host: str
    port: int
    token: str | None
    token_generated: bool

    def to_dict(self) -> dict[str, Any]:
        """``{"url", "host", "port", "token", "token_generated"}``."""
        return self._asdict()


def _token(host: str, token: str | None) -> tuple[str | None, bool]:
    """The token the server requires (``None``: none), and whether it was generated.

    Raises:
        UserError: a given token is too short or has characters a cookie cannot carry.
    """
    if token is not None:
        if not _TOKEN.fullmatch(token):
            raise UserError(
                "must be 8 to 256 letters, digits or . _ ~ -",
                key="--token",
                fix="leave it out and one is generated",
            )
        return token, False
    from .dashboard.security import is_loopback  # lazy: the dashboard package, as below

    if is_loopback(host):
        return None, False
    return secrets.token_urlsafe(24), True


def _author() -> str:
    try:
        return f"{getpass.getuser()} (dashboard)"
    except Exception:  # no user name in this environment
        return "dashboard"


def _require_extra() -> None:
    try:
        import sse_starlette  # noqa: F401  # lazy: the dashboard extra
        import starlette  # noqa: F401  # lazy: the dashboard extra
        import uvicorn  # noqa: F401  # lazy: the dashboard extra
    except ImportError as exc:
        raise InfrastructureError(
            f"the dashboard needs the `dashboard` extra ({exc.name} is not installed); "
            "install it with `pip install 'prompt-runner[dashboard]'`"
        ) from exc


def _sources(
    packets: Sequence[PathLike], workspaces: Sequence[PathLike], fleets: Sequence[PathLike]
) -> list[Any]:
    from .dashboard.sources import sources  # lazy: the dashboard package, only for this command

    for name, value in (("packets", packets), ("workspaces", workspaces), ("fleets", fleets)):
        if isinstance(value, str | os.PathLike):
            raise UserError(
                "must be a list of paths",
                key=f"dashboard({name}=...)",
                fix="pass a list, e.g. ['path/to/packet']",
            )
    given = [os.fspath(p) for p in packets]
    if not given and not workspaces and not fleets:
        given = ["."]
    return sources(given, [os.fspath(w) for w in workspaces], [os.fspath(f) for f in fleets])


@public
def dashboard_app(
    packets: Sequence[PathLike] = (),
    *,
    workspaces: Sequence[PathLike] = (),
    fleets: Sequence[PathLike] = (),
    host: str = DEFAULT_HOST,
    token: str | None = None,
    author: str | None = None,
) -> Any:
    """The dashboard as an ASGI application over the given runs.

    Args:
        packets: packet directories (none, and no workspace or fleet: the current
            directory).
        workspaces: workspaces (a manifest path or a registered id) whose runs
            are shown too: the packet in the workspace's clone, the state under
            its runtime root.
        fleets: fleet manifests (``engine: local``): every member's run is shown,
            the members grouped under their fleet on the overview.
        host: the address it will be served on (decides the allowed ``Host``
            names, and whether a token is needed).
        token: the access token; ``None``: none on loopback, else one is
            generated (use :func:`serve_dashboard` to learn it).
        author: who actions are from when the page names nobody (default
            ``"<user> (dashboard)"``).

    Returns:
        A Starlette application (an ASGI callable); its lifespan runs the file watcher.

    Raises:
        UserError: a path is not a packet, a workspace or fleet cannot be found
            or is invalid, a fleet runs on Temporal, one run is given twice, a bad token.
        InfrastructureError: the ``dashboard`` extra is not installed.
    """
    _require_extra()
    sources = _sources(packets, workspaces, fleets)
    needed, _ = _token(host, token)
    return _make_app(sources, host, needed, author, cookie="pr_dashboard")


def _make_app(
    sources: list[Any], host: str, token: str | None, author: str | None, *, cookie: str
) -> Any:
    from .dashboard.app import DashboardApp  # lazy: Starlette, only for this command
    from .dashboard.security import Guard, allowed_hosts  # lazy: as above

    app = DashboardApp(sources, csrf=secrets.token_urlsafe(24), author=author or _author())
    return Guard(
        app.starlette(), hosts=allowed_hosts(host), token=token, csrf=app.csrf, cookie=cookie
    )


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (port 0: any free one).

    Raises:
        UserError: ``host`` is not an address or a name of this machine.
        InfrastructureError: the address cannot be bound (in use, not permitted).
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise UserError(
            f"cannot use host {host!r} ({exc.strerror})",
            key="--host",
            fix="give an address of this machine, e.g. 127.0.0.1 or 0.0.0.0",
        ) from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise InfrastructureError(
            f"cannot listen on {host}:{port} ({exc.strerror}); "
            "pass another --port (0: any free one)"
        ) from exc
    return sock


@public
def serve_dashboard(
    packets: Sequence[PathLike] = (),
    *,
    workspaces: Sequence[PathLike] = (),
    fleets: Sequence[PathLike] = (),
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    open_browser: bool = False,
    author: str | None = None,
    on_ready: Callable[[DashboardAddress], None] | None = None,
) -> DashboardAddress:
    """Serve the dashboard until interrupted (SIGINT / SIGTERM), then return its address.

    Args:
        packets, workspaces, fleets, host, token, author: as :func:`dashboard_app`.
        port: the TCP port (0: any free one; the real one is in the address).
        open_browser: open the address in the default web browser once listening.
        on_ready: called with the address once the socket listens (before any
            request is served): print it, or hand it to a test.

    Raises:
        UserError: as :func:`dashboard_app`; a host that is no address.
        InfrastructureError: the extra is missing; the address cannot be bound.
    """
    if not 0 <= port <= 65535:
        raise UserError("must be a port number (0 to 65535)", key="--port")
    _require_extra()
    sources = _sources(packets, workspaces, fleets)
    needed, generated = _token(host, token)
    sock = _listen(host, port)
    try:
        real_port = sock.getsockname()[1]
        app = _make_app(sources, host, needed, author, cookie=f"pr_dashboard_{real_port}")
        shown = host if ":" not in host else f"[{host}]"
        if shown in ("0.0.0.0", "[::]"):
            shown = "127.0.0.1" if shown == "0.0.0.0" else "[::1]"
        url = f"http://{shown}:{real_port}/" + (f"?token={needed}" if needed else "")
        address = DashboardAddress(url, host, real_port, needed, generated)
        if on_ready is not None:
            on_ready(address)
        if open_browser:
            import webbrowser  # lazy: only --open

            webbrowser.open(url)
        import uvicorn  # lazy: the dashboard extra

        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=2,
        )
        uvicorn.Server(config).run(sockets=[sock])
        return address
    finally:
        sock.close()
