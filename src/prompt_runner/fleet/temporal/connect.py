"""Reaching the Temporal service: ``fleet submit|status|stop``, ``control steer --fleet`` and
``fleet worker`` all connect through :func:`connect`.

:func:`connect_options` turns the ``temporal:`` block (or the worker's flags)
into ``Client.connect``'s arguments -- TLS, mTLS, the API key read from its
environment variable at that moment (never written to state, logs or argv).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from temporalio.client import Client
from temporalio.service import TLSConfig

from ...errors import InfrastructureError, UserError
from ..model import TemporalSettings

_PEM_FILES = ("tls_ca", "tls_cert", "tls_key")

_Refuse = Callable[[str, str, str], UserError]


def connect_options(
    settings: TemporalSettings,
    *,
    base: Path,
    file: Path | None,
    flags: bool = False,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``temporalio.client.Client.connect`` for ``settings``.

    ``target_host`` and ``namespace``; ``tls``: a ``TLSConfig`` holding the PEM
    files' bytes when any of ``tls_ca`` / ``tls_cert`` / ``tls_key`` is given
    (read now, relative to ``base``), else ``settings.tls`` (``None`` means on
    only with an API key); ``api_key``: the value of the variable
    ``settings.api_key_env`` in ``environ`` (default ``os.environ``), or
    ``None``. The result holds the key: pass it to ``Client.connect`` and drop it.

    Args:
        base: the directory relative PEM paths start from (the fleet file's,
            or the worker's working directory for its flags).
        file: the fleet manifest an error names (``None`` for the worker's flags).
        flags: name the worker's flags (``--tls-cert``) in errors instead of
            the manifest's keys (``temporal.tls_cert``).

    Raises:
        UserError: a certificate without its key or the other way round, TLS
            off with PEM files given, a PEM file that cannot be read, or the
            API key's variable unset or empty (each one sentence, exit 2).
    """

    def key(name: str) -> str:
        return "--" + name.replace("_", "-") if flags else f"temporal.{name}"

    def refuse(reason: str, name: str, fix: str) -> UserError:
        return UserError(reason, file=file, key=key(name), fix=fix)

    _check_pair(settings, key, refuse)
    pems = _read_pems(settings, base, flags, refuse)
    tls: bool | TLSConfig | None = settings.tls
    if pems:
        if settings.tls is False:
            raise refuse(
                "is false but PEM files are given",
                "tls",
                f"set {key('tls')} true, or remove {', '.join(key(n) for n in pems)}",
            )
        tls = TLSConfig(
            server_root_ca_cert=pems.get("tls_ca"),
            client_cert=pems.get("tls_cert"),
            client_private_key=pems.get("tls_key"),
        )
    api_key = _api_key(settings, environ, refuse)
    if tls is None:
        tls = api_key is not None
    return {
        "target_host": settings.address,
        "namespace": settings.namespace,
        "tls": tls,
        "api_key": api_key,
    }


def _check_pair(settings: TemporalSettings, key: Callable[[str], str], refuse: _Refuse) -> None:
    """Refuse a client certificate without its key, or the other way round."""
    if (settings.tls_cert is None) != (settings.tls_key is None):
        given, missing = (
            ("tls_cert", "tls_key")
            if settings.tls_key is None
            else (
                "tls_key",
                "tls_cert",
            )
        )
        raise refuse(
            f"is given without {key(missing)} (mTLS needs both)",
            given,
            f"give {key(missing)} as well, or neither",
        )


def _read_pems(
    settings: TemporalSettings, base: Path, flags: bool, refuse: _Refuse
) -> dict[str, bytes]:
    """The bytes of each PEM file given, by its setting's name (relative paths from ``base``)."""
    pems: dict[str, bytes] = {}
    for name in _PEM_FILES:
        given_path = getattr(settings, name)
        if given_path is None:
            continue
        path = base / Path(given_path).expanduser()
        try:
            pems[name] = path.read_bytes()
        except OSError as exc:
            raise refuse(
                f"{given_path!r} cannot be read ({exc.strerror or exc}; {path})",
                name,
                "give the path of a PEM file" + ("" if flags else ", relative to the fleet file"),
            ) from None
    return pems


def _api_key(
    settings: TemporalSettings, environ: Mapping[str, str] | None, refuse: _Refuse
) -> str | None:
    """The API key from ``settings.api_key_env``'s variable, or ``None`` when none is named."""
    if settings.api_key_env is None:
        return None
    name = settings.api_key_env
    api_key = (os.environ if environ is None else environ).get(name) or None
    if api_key is None:
        raise refuse(
            f"names the environment variable {name}, which is not set (or empty)",
            "api_key_env",
            f"export {name} with the Temporal API key in the environment of this command",
        )
    return api_key


def describe_connection(settings: TemporalSettings) -> str:
    """How :func:`connect` reaches the service, for a worker's first line (no secret):
    ``plain``, ``TLS``, ``mTLS``, plus ``API key from $NAME``."""
    if settings.tls_cert is not None:
        how = "mTLS"
    elif settings.tls or settings.tls_ca or (settings.tls is None and settings.api_key_env):
        how = "TLS"
    else:
        how = "plain"
    return how + (f", API key from ${settings.api_key_env}" if settings.api_key_env else "")


async def connect(
    settings: TemporalSettings, *, base: Path, file: Path | None, flags: bool = False
) -> Client:
    """A client of the Temporal service ``settings`` name (see :func:`connect_options`).

    Raises:
        UserError: as :func:`connect_options`.
        InfrastructureError: it cannot be reached (exit 3, naming it).
    """
    options = connect_options(settings, base=base, file=file, flags=flags)
    try:
        return await Client.connect(**options)
    except Exception as exc:  # the SDK raises RuntimeError and friends; one sentence for all
        raise InfrastructureError(
            f"the Temporal service at {settings.address} (namespace {settings.namespace}, "
            f"{describe_connection(settings)}) cannot be reached: {exc}"
        ) from None
