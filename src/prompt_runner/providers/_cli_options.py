"""Plan-time option checks, argv and environment helpers for the CLI adapters.

Secrets travel only in the child's environment: :func:`child_env` layers the
request's variables over the runner's, :func:`redact_argv` masks any
secret-looking value that still reached an argv, and
:func:`check_common_options` refuses option keys that look like secrets.

Every provider option key is either honoured or refused at plan time, never
accepted and ignored: :data:`COMMON_OPTIONS` are honoured by every CLI
adapter, :data:`COMMON_REFUSED` are the reference system's normalized options
(``nshkrdotcom/prompt_runner_sdk`` 0.13, ``guides/providers.md``) that cannot
apply to a provider this runner drives as a CLI, each with the sentence why.
An adapter adds its own ``options`` (key -> how it is honoured) and
``refused`` (key -> why); ``docs/provider-options.md`` is generated from them
(:mod:`prompt_runner.planning.provider_options`, which also knows the maps).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..errors import ProviderMissingError, UserError
from .base import SessionRequest

PERMISSION_MODES = ("default", "auto", "bypass", "plan")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)

COMMON_OPTIONS: dict[str, str] = {
    "env": "added to the agent's environment (never to its argv)",
    "cli_path": "the executable started instead of the CLI's usual name (a relative path is "
    "from the packet directory, a bare name is looked up on the agent's PATH); `run` checks "
    "it first, exit 3 naming it if it is missing or not executable",
    "extra_args": "appended to the argv as given (a list of strings)",
    "args": "the reference's name for `extra_args`: appended to the argv",
    "max_cost_usd": "the runner's cost budget of the prompt: no further session starts "
    "once it is spent",
    "allow_unknown_model": "`true` is what this runner always does: the model name goes to "
    "the CLI unchecked, as it keeps no model list; `false` is refused, there is no list to "
    "check a model against",
}
_OLLAMA = (
    "it routes the reference's session manager to a local Ollama server; this runner starts "
    "the provider's CLI itself, so use that CLI's own local-model setting (Codex: "
    "`codex_opts.oss_provider: ollama`)"
)
COMMON_REFUSED: dict[str, str] = {
    "debug": "it turns on the reference's session-manager debug log, which this runner does "
    "not have; each session's whole stream is already kept under `.prompt_runner/` (a CLI's "
    "own debug flag can go in `extra_args`)",
    "completion_only": "this CLI has no mode without tools and writes to map it to",
    "output_schema": "this CLI has no structured-output flag",
    "transport_headless_timeout_ms": "it bounds the reference's session-manager transport; "
    "here the agent CLI is the runner's own child, whose whole process group is reaped when "
    "it exits or a time bound passes (bound a session with `timeout`)",
    "provider_backend": "it picks a backend inside the reference's session manager; this "
    "runner always starts the provider's own CLI",
    "ollama": _OLLAMA,
    "ollama_model": _OLLAMA,
    "ollama_base_url": _OLLAMA,
    "ollama_http": _OLLAMA,
    "ollama_timeout_ms": _OLLAMA,
}


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


def require_program(
    program: str,
    *,
    cwd: Path,
    env: Mapping[str, str],
    provider: str,
    install: str,
    key: str | None = None,
    given: str | None = None,
) -> str:
    """Resolve ``program`` (a launch's ``argv[0]``) as starting it does, or raise.

    A name with a ``/`` is a path (a relative one from ``cwd``, where the
    process starts); a bare name is looked up on ``env["PATH"]`` (the agent's
    environment, as ``subprocess`` looks it up).

    Args:
        program: what the launch starts (see :func:`cli_binary`).
        cwd: the session's working directory.
        env: the agent process's full environment.
        provider: the provider name, for the message.
        install: how to install the CLI (one command), for the message.
        key: the option that set ``program`` (``claude_opts.cli_path (FILE)``),
            ``None`` when it is the CLI's usual name.
        given: the option's value as written, when it differs from ``program``.

    Returns:
        The path that would be started.

    Raises:
        ProviderMissingError: (exit 3) it is not there, is a directory, or is
            not executable; the message names the path and ``key``.
    """
    if os.sep not in program:
        found = shutil.which(program, path=os.pathsep.join(os.get_exec_path(env)))
        if found is not None:
            return found
        if key is None:
            raise ProviderMissingError(
                f"provider {provider!r} needs the `{program}` CLI, which is not on PATH; "
                f"install it with `{install}` or put it on PATH"
            )
        raise ProviderMissingError(
            f"provider {provider!r}: {key} is `{program}`, which is not on the agent's PATH; "
            "give its path, or put it on PATH"
        )
    path = Path(cwd) / program
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    if not path.exists():
        problem, fix = "does not exist", "fix the path (relative is from the packet directory)"
    elif path.is_dir():
        problem, fix = "is a directory", "name the executable in it"
    else:
        problem, fix = "is not executable", f"run `chmod +x {path}` or fix the path"
    shown = f"`{given}` ({path})" if given and given != str(path) else f"`{path}`"
    setter = f"provider {provider!r}: {key} names" if key else f"provider {provider!r} starts"
    raise ProviderMissingError(f"{setter} {shown}, which {problem}; {fix}")


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
    refused: Mapping[str, str] = {},
    permission_modes: Iterable[str] = PERMISSION_MODES,
    efforts: Iterable[str] | None = None,
    unsupported: Mapping[str, str] = {},
) -> None:
    """Plan-time checks shared by every CLI adapter.

    Args:
        request: a representative request.
        provider: provider name for messages and keys.
        known_options: the ``provider_options`` keys this adapter honours
            (besides :data:`COMMON_OPTIONS`).
        refused: option keys it refuses -> the sentence saying why (over
            :data:`COMMON_REFUSED`; a key in ``known_options`` is honoured).
        permission_modes: the ``permission_mode`` values it can map.
        efforts: accepted ``reasoning_effort`` values (``None`` = not supported).
        unsupported: request fields this CLI cannot honour -> the fix to suggest,
            keyed by field name (``system_prompt``, ``max_turns``...).

    Raises:
        UserError: naming the key and the fix: a refused or unknown option
            (with a did-you-mean), a secret-looking option key, a bad value.
    """
    _check_mode_and_effort(request, provider, tuple(permission_modes), efforts)
    _check_unsupported(request, provider, unsupported)
    _check_option_keys(request, provider, set(known_options) | set(COMMON_OPTIONS), refused)
    _check_option_values(request, provider)


def _check_mode_and_effort(
    request: SessionRequest,
    provider: str,
    modes: tuple[str, ...],
    efforts: Iterable[str] | None,
) -> None:
    if request.permission_mode not in modes:
        raise UserError(
            f"permission_mode {request.permission_mode!r} is not supported by provider {provider}",
            key="permission_mode",
            fix=f"use one of {', '.join(modes)}",
        )
    if request.reasoning_effort is None:
        return
    if efforts is None:
        raise UserError(
            f"provider {provider} has no reasoning effort setting",
            key="reasoning_effort",
            fix="remove reasoning_effort, or use a provider that takes one",
        )
    allowed = tuple(efforts)
    if request.reasoning_effort not in allowed:
        raise UserError(
            f"reasoning_effort {request.reasoning_effort!r} is not supported by {provider}",
            key="reasoning_effort",
            fix=f"use one of {', '.join(allowed)}",
        )


def _check_unsupported(
    request: SessionRequest, provider: str, unsupported: Mapping[str, str]
) -> None:
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


def _check_option_keys(
    request: SessionRequest, provider: str, known: set[str], refused: Mapping[str, str]
) -> None:
    """Every option key is honoured (and not secret-looking) or refused with why."""
    # max_cost_usd: the runner's per-prompt cost budget, valid for every provider
    # (validated with the plan; a CLI with its own budget flag also gets it).
    refusals = {**COMMON_REFUSED, **refused}
    for key in request.provider_options:
        if key in known:
            if SECRET_NAME.search(key) and key != "env":
                raise UserError(
                    f"{key!r} looks like a secret and would end up in argv",
                    key=f"{provider}_opts.{key}",
                    fix="pass secrets as environment variables instead",
                )
            continue
        if key in refusals:
            raise UserError(
                f"provider {provider} cannot honour {key}: {refusals[key]}",
                key=f"{provider}_opts.{key}",
                fix=f"remove {key}",
            )
        close = difflib.get_close_matches(key, sorted(known), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise UserError(
            f"unknown option {key!r} for provider {provider}",
            key=f"{provider}_opts.{key}",
            fix=f"{hint}use one of {', '.join(sorted(known))}",
        )


def _check_option_values(request: SessionRequest, provider: str) -> None:
    """The values of the options every CLI adapter honours."""
    for name in ("extra_args", "args"):
        extra = request.provider_options.get(name)
        if extra is not None and not (
            isinstance(extra, (list, tuple)) and all(isinstance(a, str) for a in extra)
        ):
            raise UserError(
                f"{name} must be a list of strings",
                key=f"{provider}_opts.{name}",
                fix='write it as a YAML list, e.g. ["--verbose"]',
            )
    allow = request.provider_options.get("allow_unknown_model")
    if allow is not None and allow is not True:
        raise UserError(
            "allow_unknown_model can only be true: this runner keeps no model list, every "
            "model name goes to the CLI unchecked"
            if allow is False
            else "allow_unknown_model must be true or false",
            key=f"{provider}_opts.allow_unknown_model",
            fix="remove allow_unknown_model (or set it to true)",
        )
    env = request.provider_options.get("env")
    if env is not None and not isinstance(env, Mapping):
        raise UserError(
            "env must be a mapping of variable names to values",
            key=f"{provider}_opts.env",
            fix="write it as a YAML mapping",
        )


def extra_args(request: SessionRequest) -> list[str]:
    """``provider_options["extra_args"]`` then ``["args"]`` (the reference's name), as
    one list of argv strings (validated at plan time)."""
    opts = request.provider_options
    return [str(a) for name in ("extra_args", "args") for a in opts.get(name) or ()]


def option_paths(request: SessionRequest, key: str) -> list[str]:
    """``provider_options[key]`` (a path or a list of paths) as absolute paths.

    A relative path resolves against the packet directory (``request.repos["packet"]``,
    else the session's cwd), as the reference resolves its option paths.
    """
    raw = request.provider_options.get(key)
    items = [raw] if isinstance(raw, str) else list(raw or ())
    base = Path(request.repos.get("packet") or request.cwd)
    return [str((base / os.path.expanduser(str(item))).resolve()) for item in items]


def check_paths(request: SessionRequest, *, provider: str, key: str) -> None:
    """Plan-time check of a path option: a string or a list of strings.

    Existence is not checked here, as a packet's repos are not: ``plan`` works
    before they are cloned; the run's preflight and the CLI see them.

    Raises:
        UserError: naming ``<provider>_opts.<key>`` and the fix.
    """
    raw = request.provider_options.get(key)
    if raw is None or isinstance(raw, str):
        return
    if not (isinstance(raw, list) and all(isinstance(p, str) for p in raw)):
        raise UserError(
            f"{key} must be a path or a list of paths",
            key=f"{provider}_opts.{key}",
            fix='write it as a YAML list, e.g. ["./repos/beta"]',
        )


def cli_binary(request: SessionRequest, default: str) -> str:
    """The executable to launch: ``provider_options["cli_path"]`` or ``default``.

    A ``cli_path`` holding a ``/`` is a path: ``~`` expanded, a relative one
    made absolute from the packet directory (``request.repos["packet"]``, else
    the session's cwd) like every path in the maps, so ``plan --json`` shows
    the file a session starts. A bare name is looked up on the agent's PATH.
    """
    raw = request.provider_options.get("cli_path")
    if not raw:
        return default
    text = os.path.expanduser(str(raw))
    if os.sep not in text:
        return text
    return str(Path(request.repos.get("packet") or request.cwd) / text)


def is_root() -> bool:
    """True when the runner runs as uid 0."""
    return hasattr(os, "getuid") and os.getuid() == 0
