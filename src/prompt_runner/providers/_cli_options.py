"""Plan-time option checks, argv and environment helpers for the CLI adapters.

Secrets travel only in the child's environment: :func:`child_env` layers the
request's variables over the runner's, :func:`redact_argv` masks any
secret-looking value that still reached an argv, and
:func:`check_common_options` refuses option keys that look like secrets.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence

from ..errors import ProviderMissingError, UserError
from .base import SessionRequest

PERMISSION_MODES = ("default", "auto", "bypass", "plan")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)


def find_cli(name: str, env: Mapping[str, str] | None = None) -> str | None:
    """Resolve CLI ``name`` on ``env["PATH"]`` (default: the runner's PATH)."""
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    return shutil.which(name, path=path)


def require_cli(
    name: str, provider: str, install: str, env: Mapping[str, str] | None = None
) -> str:
    """Return the path of CLI ``name`` or raise :class:`ProviderMissingError` (exit 3).

    Args:
        name: the executable ("claude").
        provider: the provider name, for the message.
        install: how to install it (one command).
    """
    found = find_cli(name, env)
    if found is None:
        raise ProviderMissingError(
            f"provider {provider!r} needs the `{name}` CLI, which is not on PATH; "
            f"install it with `{install}` or put it on PATH"
        )
    return found


def child_env(request: SessionRequest, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The full environment of an agent process.

    The runner's environment, then ``extra`` (adapter defaults), then
    ``provider_options["env"]``, then ``request.env`` (highest). Secrets come in
    here (e.g. ``ANTHROPIC_API_KEY``), never through argv.
    """
    env = dict(os.environ)
    env.update(extra or {})
    opt_env = request.provider_options.get("env")
    if isinstance(opt_env, Mapping):
        env.update({str(k): str(v) for k, v in opt_env.items()})
    env.update(request.env)
    return env


def redact_argv(argv: Sequence[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """``argv`` with every secret-looking env value (name has KEY/TOKEN/...) masked."""
    secrets = [v for k, v in env.items() if SECRET_NAME.search(k) and len(v) >= 6]
    out = []
    for arg in argv:
        for secret in secrets:
            if secret in arg:
                arg = arg.replace(secret, "***")
        out.append(arg)
    return tuple(out)


def check_common_options(
    request: SessionRequest,
    *,
    provider: str,
    known_options: Iterable[str],
    permission_modes: Iterable[str] = PERMISSION_MODES,
    efforts: Iterable[str] | None = None,
    unsupported: Mapping[str, str] = {},
) -> None:
    """Plan-time checks shared by every CLI adapter.

    Args:
        request: a representative request.
        provider: provider name for messages and keys.
        known_options: the ``provider_options`` keys this adapter understands.
        permission_modes: the ``permission_mode`` values it can map.
        efforts: accepted ``reasoning_effort`` values (``None`` = not supported).
        unsupported: request fields this CLI cannot honour -> the fix to suggest,
            keyed by field name (``system_prompt``, ``max_turns``...).

    Raises:
        UserError: naming the key and the fix.
    """
    modes = tuple(permission_modes)
    if request.permission_mode not in modes:
        raise UserError(
            f"permission_mode {request.permission_mode!r} is not supported by provider {provider}",
            key="permission_mode",
            fix=f"use one of {', '.join(modes)}",
        )
    if request.reasoning_effort is not None:
        if efforts is None:
            raise UserError(
                f"provider {provider} has no reasoning effort setting",
                key="reasoning_effort",
                fix="remove reasoning_effort for this prompt or use another provider",
            )
        allowed = tuple(efforts)
        if request.reasoning_effort not in allowed:
            raise UserError(
                f"reasoning_effort {request.reasoning_effort!r} is not supported by {provider}",
                key="reasoning_effort",
                fix=f"use one of {', '.join(allowed)}",
            )
    values = {
        "system_prompt": request.system_prompt,
        "append_system_prompt": request.append_system_prompt,
        "max_turns": request.max_turns,
        "allowed_tools": request.allowed_tools or None,
        "extra_dirs": request.extra_dirs or None,
        "model": request.model,
    }
    for name, fix in unsupported.items():
        if values.get(name) is not None:
            raise UserError(f"provider {provider} cannot honour {name}", key=name, fix=fix)
    # max_cost_usd: the runner's per-prompt cost budget, valid for every provider
    # (validated with the plan; a CLI with its own budget flag also gets it).
    known = set(known_options) | {"env", "cli_path", "extra_args", "max_cost_usd"}
    for key in request.provider_options:
        if key not in known:
            raise UserError(
                f"unknown option {key!r} for provider {provider}",
                key=f"{provider}_opts.{key}",
                fix=f"use one of {', '.join(sorted(known))}",
            )
        if SECRET_NAME.search(key) and key != "env":
            raise UserError(
                f"{key!r} looks like a secret and would end up in argv",
                key=f"{provider}_opts.{key}",
                fix="pass secrets as environment variables instead",
            )
    extra = request.provider_options.get("extra_args")
    if extra is not None and not (
        isinstance(extra, (list, tuple)) and all(isinstance(a, str) for a in extra)
    ):
        raise UserError(
            "extra_args must be a list of strings",
            key=f"{provider}_opts.extra_args",
            fix='write it as a YAML list, e.g. ["--verbose"]',
        )
    env = request.provider_options.get("env")
    if env is not None and not isinstance(env, Mapping):
        raise UserError(
            "env must be a mapping of variable names to values",
            key=f"{provider}_opts.env",
            fix="write it as a YAML mapping",
        )


def extra_args(request: SessionRequest) -> list[str]:
    """``provider_options["extra_args"]`` as a list (validated at plan time)."""
    return [str(a) for a in request.provider_options.get("extra_args") or ()]


def cli_binary(request: SessionRequest, default: str) -> str:
    """The executable to launch: ``provider_options["cli_path"]`` or ``default``."""
    return str(request.provider_options.get("cli_path") or default)


def is_root() -> bool:
    """True when the runner runs as uid 0."""
    return hasattr(os, "getuid") and os.getuid() == 0
