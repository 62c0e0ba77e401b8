"""Home-scoped profiles and templates (SPEC 2.5).

The store lives in ``$PROMPT_RUNNER_CONFIG_HOME`` when set, else
``$XDG_CONFIG_HOME/prompt_runner/``, else ``~/.config/prompt_runner/``::

    config.md               default_profile: the profile of a packet naming none
    profiles/NAME.md        profile: YAML front matter (plan keys) + notes
    templates/NAME.prompt.md prompt templates

The two built-in profiles (``simulated-default`` and ``codex-default``) and the
built-in templates (``default``, ``from-adr``) are also available without
``init``, so a packet that names them runs on a fresh machine; a file in the
store with the same name wins.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..providers.registry import provider_names
from .builtins import (
    BUILTIN_PROFILES,
    BUILTIN_TEMPLATES,
    CONFIG_TEXT,
    DEFAULT_PROFILE,
    NEW_PROFILE_BASE,
)
from .frontmatter import read_text, split_front_matter
from .models import HomeConfig, Profile, RecoveryConfig
from .profile_names import check_profile_name
from .validation import validate_model
from .yamlio import (
    dump,
    load_mapping,
    quoted,
    round_trip,
    round_trip_like,
    split_for_edit,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class PlanJudge(Protocol):
        """The plan's checks an authoring writer asks before it writes (given by
        ``planning.authored``: this layer is below planning)."""

        def options(self, data: Mapping[str, Any], *, provider: str | None, file: str) -> None:
            """Refuse plan keys the provider refuses."""

        def recovery(self, block: Mapping[str, Any], where: str) -> None:
            """Refuse a ``recovery`` block whose failover the plan refuses."""

        def template(self, name: str, where: str) -> None:
            """Refuse a profile ``prompt_template`` naming no template."""


def config_home() -> Path:
    """The profile/template store directory (not created)."""
    explicit = os.environ.get("PROMPT_RUNNER_CONFIG_HOME")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "prompt_runner"


def profile_path(name: str) -> Path:
    return config_home() / "profiles" / f"{name}.md"


def load_profile(name: str) -> Profile:
    """Load profile ``name`` from the store, else the built-in of that name.

    A store profile's ``recovery`` block is checked here against the model the
    plan validates it with, so its error names the profile's file.

    Raises:
        UserError: unknown profile, or a malformed profile file (naming it).
    """
    check_profile_name(name)
    path = profile_path(name)
    if path.exists():  # read_text refuses what is not a regular file, naming it
        raw, _ = split_front_matter(read_text(path), file=str(path))
        profile = validate_model(Profile, raw, file=str(path))
        if profile.recovery:
            validate_model(RecoveryConfig, profile.recovery, file=str(path), prefix="recovery")
        return profile
    builtin = BUILTIN_PROFILES.get(name)
    if builtin is None:
        known = ", ".join(name for name, _ in list_profiles())
        raise UserError(
            f"unknown profile {name!r}",
            key="profile",
            fix=f"use one of {known}, or create it with `prompt-runner profile new {name}`",
        )
    raw, _ = split_front_matter(builtin, file=f"<built-in profile {name}>")
    return validate_model(Profile, raw, file=f"<built-in profile {name}>")


def list_profiles() -> list[tuple[str, str]]:
    """Every known profile as ``(name, source)``, sorted; source is ``home`` or ``built-in``."""
    found: dict[str, str] = dict.fromkeys(BUILTIN_PROFILES, "built-in")
    directory = config_home() / "profiles"
    if directory.is_dir():
        for path in directory.glob("*.md"):
            if path.is_file():  # file_read's rule: a regular file (a symlink followed)
                found[path.stem] = "home"
    return sorted(found.items())


def default_profile_name() -> str | None:
    """``config.md``'s ``default_profile``, or ``None`` (no ``config.md``, or it names none).

    Raises:
        UserError: ``config.md`` is malformed (bad YAML, unknown key, not a string).
    """
    path = config_home() / "config.md"
    if not path.exists():
        return None
    raw, _ = split_front_matter(read_text(path), file=str(path))
    name = validate_model(HomeConfig, raw, file=str(path)).default_profile
    return name.strip() or None if name is not None else None


def configured_profile(
    named: str | None, *, explicit: str | None = None
) -> tuple[str | None, Profile | None, str | None]:
    """``(name, profile, note)``: the profile a packet runs with.

    ``explicit`` (``--profile``) wins, then ``named`` (the manifest's
    ``profile``), then ``config.md``'s ``default_profile`` (as in the
    reference system); none at all gives ``(None, None, None)``. A profile the
    manifest names that exists nowhere on this machine is left out, as the
    reference system does (a packet travels, its author's profiles do not):
    the result is ``(None, None, note)``, ``note`` saying so, for the run to warn.

    Raises:
        UserError: an explicit or configured profile that does not exist, or
            any malformed profile file.
    """
    if explicit:
        try:
            check_profile_name(explicit)
        except UserError as exc:
            raise UserError(exc.reason, key="--profile", fix=exc.fix) from None
        return explicit, load_profile(explicit), None
    if named:
        if not profile_path(named).exists() and named not in BUILTIN_PROFILES:
            note = (
                f"profile {named!r} (the manifest's `profile`) does not exist here, so the "
                "packet runs on its own settings; create it with `prompt-runner profile new "
                f"{named}` or drop `profile:`"
            )
            return None, None, note
        return named, load_profile(named), None
    fallback = default_profile_name()
    if fallback is None:
        return None, None, None
    try:
        return fallback, load_profile(fallback), None
    except UserError as exc:
        raise UserError(
            exc.reason,
            file=config_home() / "config.md",
            key="default_profile",
            fix=exc.fix,
        ) from None


def init_home(default_profile: str | None = None) -> list[Path]:
    """Create the store with the built-in profiles and templates; never overwrite.

    Args:
        default_profile: the profile ``config.md`` names (default
            :data:`~prompt_runner.packet.builtins.DEFAULT_PROFILE`). When it
            is neither a built-in nor an existing file, it is created with
            ``codex-default``'s settings, as the reference system's ``init
            --default-profile`` does.

    When ``default_profile`` is given and ``config.md`` exists naming another
    profile, its ``default_profile`` is set to it (the rest of the file kept), as
    README's ``init --default-profile NAME`` "names it"; nothing else is overwritten.

    Returns:
        The files created, and ``config.md`` when it was rewritten to name
        ``default_profile`` (an empty list when nothing changed).

    Raises:
        UserError: an invalid profile name, or an existing ``config.md`` that is
            malformed (naming it; nothing is written then, no new profile either).
    """
    chosen = default_profile or DEFAULT_PROFILE
    check_profile_name(chosen)
    home = config_home()
    created: list[Path] = []
    wanted: dict[Path, str] = {home / "config.md": CONFIG_TEXT.format(profile=chosen)}
    for name, text in BUILTIN_PROFILES.items():
        wanted[home / "profiles" / f"{name}.md"] = text
    if chosen not in BUILTIN_PROFILES:
        base = BUILTIN_PROFILES[NEW_PROFILE_BASE]
        text = base.replace(f'name: "{NEW_PROFILE_BASE}"', f'name: "{chosen}"', 1)
        text = text.replace(f"# {NEW_PROFILE_BASE}\n", f"# {chosen}\n", 1)
        wanted[home / "profiles" / f"{chosen}.md"] = text
    for name, text in BUILTIN_TEMPLATES.items():
        wanted[home / "templates" / f"{name}.prompt.md"] = text
    config = home / "config.md"
    # everything checked before anything is written: a malformed config.md
    # refuses the command with no new profile left behind
    renamed = None
    if default_profile is not None and config.exists():
        renamed = _named_default(config, chosen)
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            continue
        created.append(path)
    if renamed is not None:
        from ..state.atomic import write_text_atomic  # lazy: only init on an existing store

        write_text_atomic(config, renamed)
        created.append(config)
    return created


def _named_default(path: Path, name: str) -> str | None:
    """The existing ``config.md`` at ``path`` with ``default_profile: NAME`` set
    (the rest kept), or ``None`` when it already names ``name``. Writes nothing.

    Raises:
        UserError: the file is malformed.
    """
    text = read_text(path)
    raw, _ = split_front_matter(text, file=str(path))
    if validate_model(HomeConfig, raw, file=str(path)).default_profile == name:
        return None
    doc = split_for_edit(text, file=str(path))
    front = doc.yaml_text if doc is not None else ""
    yaml = round_trip_like(front)
    data = load_mapping(yaml, front, str(path))
    data["default_profile"] = quoted(name)
    if doc is None:  # no front matter yet: the file's text is the body
        return f"---\n{dump(yaml, data)}---\n{text}"
    return doc.with_front(dump(yaml, data))  # its BOM, fences, body and line end kept


RECOVERY_SHORTHANDS: dict[str, tuple[str, ...]] = {
    "resume_attempts": ("resume_attempts",),
    "retry_attempts": ("retry", "max_attempts"),
    "retry_base_delay_ms": ("retry", "base_delay_ms"),
    "retry_max_delay_ms": ("retry", "max_delay_ms"),
    "retry_jitter": ("retry", "jitter"),
    "auto_repair": ("repair", "enabled"),
    "repair_attempts": ("repair", "max_attempts"),
}
"""The ``packet new`` / ``profile new`` shorthands (arguments and flags of those
names; delays in ms) -> the key of the ``recovery`` block each sets."""


def recovery_settings(given: Mapping[str, Any]) -> dict[str, Any]:
    """The ``recovery`` block the shorthands in ``given`` set (only those not ``None``).

    Args:
        given: argument name -> value; it holds every name of
            :data:`RECOVERY_SHORTHANDS` (``KeyError`` otherwise), other names are
            ignored. ``new_packet`` and ``new_profile`` pass their arguments.
    """
    out: dict[str, Any] = {}
    for name, (key, *inner) in RECOVERY_SHORTHANDS.items():
        value = given[name]
        if value is None:
            continue
        if inner:
            out.setdefault(key, {})[inner[0]] = value
        else:
            out[key] = value
    return out


def check_provider_name(provider: str | None, where: str) -> None:
    """Refuse an unknown ``--provider`` (``UserError`` naming ``where``)."""
    if provider is not None and provider not in provider_names():
        raise UserError(
            f"unknown provider {provider!r}",
            file=where,
            key="--provider",
            fix=f"use one of {', '.join(provider_names())}",
        )


_TEXT_FLAGS = {
    "profile": "--profile",
    "provider": "--provider",
    "model": "--model",
    "reasoning_effort": "--reasoning",
    "permission_mode": "--permission",
    "prompt_template": "--prompt-template",
}
"""The text settings ``packet new`` and ``profile new`` take, and their flags."""


def refuse_blank(settings: Mapping[str, Any], where: str) -> None:
    """Refuse a text setting given as empty or blank text (``--model ""``, often a
    shell variable that was never set): written as it is, it would quietly stand
    for the default, which the user did not ask for.

    Args:
        settings: setting name (a key of :data:`_TEXT_FLAGS`) -> value or ``None``.
        where: the file that would be written (named by the error).

    Raises:
        UserError: the first blank one, named by its flag.
    """
    for key, flag in _TEXT_FLAGS.items():
        value = settings.get(key)
        if isinstance(value, str) and not value.strip():
            raise UserError(
                "is blank",
                file=where,
                key=flag,
                fix=f"give {flag} a value, or leave it out for the default",
            )


def check_recovery(
    block: Mapping[str, Any],
    given: Mapping[str, Any],
    *,
    where: str,
    judge: PlanJudge | None = None,
) -> None:
    """Refuse a ``recovery`` block an authoring command is about to write that the
    plan would refuse later, checked with the model the plan validates it with
    (:class:`~prompt_runner.packet.models.RecoveryConfig`).

    Args:
        block: the whole ``recovery`` block to be written.
        given: the shorthand arguments, as for :func:`recovery_settings`; a bad
            shorthand is named by its flag (``--retry-attempts``).
        where: the file the block would be written to: every refusal names it.
        judge: the plan's own checks (``planning.authored.PLAN_CHECKS``, which the
            library and the CLI pass); ``None`` checks only what this layer can.

    Raises:
        UserError: a shorthand value out of range or of the wrong type (naming
            ``where``, its flag, the key it sets and the bound), or an invalid
            ``block`` (naming ``where`` and the key, ``recovery.retry...``): one
            the model refuses, a ``retry.class_attempts`` key naming no failure
            class, or a ``failover`` entry the plan refuses (not a mapping, an
            unknown provider or key, a value of the wrong type such as
            ``model: 5``).
    """
    for name, (key, *inner) in RECOVERY_SHORTHANDS.items():
        value = given[name]
        if value is None:
            continue
        one = {key: {inner[0]: value}} if inner else {key: value}
        try:
            validate_model(RecoveryConfig, one, file=where, prefix="recovery")
        except UserError as exc:
            flag = "--" + name.replace("_", "-")
            reason = f"{exc.reason} (it sets {exc.key})" if exc.key else exc.reason
            raise UserError(reason, file=where, key=flag, fix=exc.fix) from None
    if not block:
        return
    if judge is not None:
        judge.recovery(block, where)  # as the plan builds it: failover, class names
    else:
        validate_model(RecoveryConfig, dict(block), file=where, prefix="recovery")


def new_profile(
    name: str,
    *,
    provider: str | None = None,
    model: str | None = None,
    reasoning_effort: str | None = None,
    permission_mode: str | None = None,
    prompt_template: str | None = None,
    allowed_tools: Sequence[str] | None = None,
    cli_confirmation: str | None = None,
    recovery: Mapping[str, Any] | None = None,
    resume_attempts: int | None = None,
    retry_attempts: int | None = None,
    retry_base_delay_ms: int | None = None,
    retry_max_delay_ms: int | None = None,
    retry_jitter: bool | None = None,
    auto_repair: bool | None = None,
    repair_attempts: int | None = None,
    force: bool = False,
    judge: PlanJudge | None = None,
) -> Path:
    """Write ``profiles/NAME.md`` with the keys given (and only those).

    Args:
        name: the profile name (the file's stem).
        provider, model, reasoning_effort, permission_mode, cli_confirmation:
            plan keys.
        prompt_template: the template ``prompt new`` uses for packets of this
            profile that name none.
        allowed_tools: tool names (``["Read", "Bash"]``).
        recovery: a ``recovery`` block.
        resume_attempts, retry_attempts, retry_base_delay_ms, retry_max_delay_ms
            (ms), retry_jitter, auto_repair, repair_attempts: the ``profile
            new`` shorthands (see :func:`recovery_settings`), set over ``recovery``;
            each is checked as the plan would (a bad one named by its flag).
        force: overwrite an existing profile.
        judge: the plan's own checks (``planning.authored.PLAN_CHECKS``: the
            library's ``prompt_runner.new_profile`` and ``profile new`` pass
            them); ``None`` leaves out the checks below that only the plan can make
            (the provider's options, the failover entries, the template).

    Returns:
        The profile file.

    Raises:
        UserError: bad name, invalid values, an unknown provider, a value the
            provider would refuse at plan time (``reasoning_effort`` outside the
            provider's efforts, or, with no provider or ``simulated``, outside
            every provider's; ``permission_mode`` it cannot map; ``model`` for
            amp...: see
            :func:`~prompt_runner.planning.provider_options.check_authored_options`), or the
            profile exists (without ``force``); each but the name's names the
            file it would write (``profiles/NAME.md`` in the store) and the key
            (a shorthand by its flag and the ``recovery`` key it sets).
            ``prompt_template`` must name a home or built-in template (or an
            existing file): a packet-local one belongs in that packet's manifest.
    """
    check_profile_name(name)
    where = str(profile_path(name))
    block = _over(recovery or {}, recovery_settings(locals()))  # the shorthand arguments
    fields: dict[str, Any] = {
        "name": name,
        "provider": provider,
        "model": model,
        "reasoning_effort": reasoning_effort,
        "permission_mode": permission_mode,
        "allowed_tools": list(allowed_tools) if allowed_tools is not None else None,
        "cli_confirmation": cli_confirmation,
        "prompt_template": prompt_template,
        "recovery": block or None,
    }
    refuse_blank(fields, where)
    data = {k: v for k, v in fields.items() if v is not None}
    check_recovery(block, locals(), where=where, judge=judge)
    validate_model(Profile, data, file=where)
    check_provider_name(provider, where)
    if judge is not None:
        judge.options(data, provider=provider, file=where)
        if prompt_template is not None:
            judge.template(prompt_template, where)
    return _write_profile(name, data, force=force)


def _over(block: Mapping[str, Any], shorthands: Mapping[str, Any]) -> dict[str, Any]:
    """``block`` with ``shorthands`` set over it (a nested block is merged key by key)."""
    out = dict(block)
    for key, value in shorthands.items():
        given = out.get(key)
        out[key] = {**given, **value} if isinstance(given, dict) else value
    return out


def _write_profile(name: str, data: Mapping[str, Any], *, force: bool) -> Path:
    """Write ``profiles/NAME.md`` holding ``data`` as its front matter.

    Raises:
        UserError: the profile exists and ``force`` is false.
    """
    path = profile_path(name)
    if path.exists() and not force:
        raise UserError("profile already exists", file=path, fix="edit it, or pass --force")
    text = f"---\n{dump(round_trip(), quoted(dict(data)))}---\n# {name}\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def list_templates(packet_root: Path | None = None) -> list[tuple[str, str]]:
    """Every template as ``(name, source)``: ``packet`` > ``home`` > ``built-in``."""
    found: dict[str, str] = dict.fromkeys(BUILTIN_TEMPLATES, "built-in")
    for source, directory in (
        ("home", config_home() / "templates"),
        ("packet", packet_root / "templates" if packet_root else None),
    ):
        if directory is not None and directory.is_dir():
            for path in directory.glob("*.prompt.md"):
                if not path.is_file():  # file_read's rule: only a regular file is one
                    continue
                found[path.name[: -len(".prompt.md")]] = source
    return sorted(found.items())
