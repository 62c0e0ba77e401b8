"""Scaffolding: ``packet new``, ``packet add-repo``, ``prompt new`` (SPEC 2.5, 9).

New files are written whole and validated against the models before they
touch the disk, so a scaffold always loads. ``packet new`` is here;
``add_repo`` (:mod:`~prompt_runner.packet.repos`) edits an existing manifest
in ruamel.yaml's round-trip mode, and ``new_prompt``
(:mod:`~prompt_runner.packet.prompt_new`) renders a template; both are
importable from here too.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap

from ..errors import UserError
from ..file_kinds import refused_directory
from .builtins import DEFAULT_PROFILE
from .files import MANIFEST_NAME
from .models import Profile
from .profiles import (
    check_provider_name,
    check_recovery,
    configured_profile,
    load_profile,
    recovery_settings,
    refuse_blank,
)
from .prompt_new import DEFAULT_TEMPLATE, new_prompt
from .repos import add_repo, repo_key
from .templates import resolve_template
from .writing import (
    NAME,
    check_repo_name,
    parse_repo_flag,
    repo_path_text,
    validated_manifest_text,
    write_new,
)
from .yamlio import dump, quoted, round_trip

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .profiles import PlanJudge

NAME_MAX_BYTES = 255
"""The longest packet name, in bytes of UTF-8: the name is a directory's, and 255
is the limit of a file name on Linux, macOS and Windows file systems."""

__all__ = ["DEFAULT_TEMPLATE", "add_repo", "new_packet", "new_prompt", "parse_repo_flag"]


def new_packet(
    name: str,
    *,
    root: Path | str = ".",
    profile: str | None = None,
    provider: str | None = None,
    model: str | None = None,
    reasoning_effort: str | None = None,
    permission_mode: str | None = None,
    repos: Sequence[tuple[str, str]] = (),
    default_repo: str | None = None,
    prompt_template: str | None = None,
    resume_attempts: int | None = None,
    retry_attempts: int | None = None,
    retry_base_delay_ms: int | None = None,
    retry_max_delay_ms: int | None = None,
    retry_jitter: bool | None = None,
    repair_attempts: int | None = None,
    auto_repair: bool | None = None,
    cli_confirmation: str | None = None,
    cwd: Path | None = None,
    judge: PlanJudge | None = None,
) -> Path:
    """Create ``ROOT/NAME/`` with a manifest and an empty ``prompts/``.

    Args:
        name: packet name and directory name.
        root: the parent directory (created if missing).
        profile: profile name (default: ``config.md``'s ``default_profile``,
            else :data:`~prompt_runner.packet.builtins.DEFAULT_PROFILE`,
            ``simulated-default``); must exist.
        provider, model, reasoning_effort, permission_mode, cli_confirmation:
            manifest overrides.
        repos: ``(name, path)`` pairs; see :func:`add_repo` for ``cwd``.
        default_repo: which repo gets ``default: true`` (the only repo if one).
        prompt_template: the manifest's ``prompt_template``; must exist.
        resume_attempts ... auto_repair: the ``recovery`` shorthands (delays in
            ms; see :func:`~prompt_runner.packet.profiles.recovery_settings`),
            checked as the plan checks them (a bad one is named by its flag).
        cwd: directory relative repo paths were given from (``None`` = store as given).
        judge: the plan's own checks (``planning.authored.PLAN_CHECKS``: the
            library's ``prompt_runner.new_packet`` and ``packet new`` pass them);
            ``None`` leaves out the provider's options and the failover entries.

    Returns:
        The packet directory.

    Raises:
        UserError: bad names or values, an unknown profile, provider or
            template, a value the plan would refuse for the packet's provider
            (``--provider``, else the profile's) once the profile's settings are
            merged under the flags (``reasoning_effort`` outside its efforts, a
            ``permission_mode`` it cannot map, a key it cannot honour: see
            :func:`~prompt_runner.planning.provider_options.check_authored_options`;
            one the profile sets is said to come from it), or an existing packet
            at that place. Each names the manifest it would write; nothing is
            written then.
    """
    packet_dir = _new_packet_dir(name, root)
    refuse_blank(locals(), str(packet_dir / MANIFEST_NAME))
    recovery = recovery_settings(locals())  # the shorthand arguments
    check_recovery(recovery, locals(), where=str(packet_dir / MANIFEST_NAME), judge=judge)
    profile = profile or configured_profile(None)[0] or DEFAULT_PROFILE
    chosen = load_profile(profile)
    if prompt_template is not None:
        resolve_template(prompt_template, None, cwd=cwd)
    settings = {
        "name": name,
        "profile": profile,
        "provider": provider,
        "model": model,
        "reasoning_effort": reasoning_effort,
        "permission_mode": permission_mode,
        "cli_confirmation": cli_confirmation,
        "prompt_template": prompt_template,
    }
    data = CommentedMap((k, quoted(v)) for k, v in settings.items() if v is not None)
    if recovery:
        data["recovery"] = quoted(recovery)
    repo_map = _repos_block(repos, default_repo, packet_dir, cwd)
    if repos:
        data["repos"] = repo_map
    where = str(packet_dir / MANIFEST_NAME)
    body = f"# {name}\n\nWhat this packet changes, in which repos, and why.\n"
    text = validated_manifest_text(dump(round_trip(), data), body, where)
    _check_provider_options(settings, profile, chosen, where=where, judge=judge)
    return _write_packet(packet_dir, text)


def _check_provider_options(
    flags: dict[str, Any],
    profile: str,
    chosen: Profile,
    *,
    where: str,
    judge: PlanJudge | None,
) -> None:
    """Refuse what the plan would refuse for the new packet's prompts: the
    profile's plan keys with ``flags`` (the manifest's keys, ``None`` = not
    given) over them, judged for ``flags["provider"]`` or the profile's provider.

    Raises:
        UserError: naming ``where`` (the manifest): an unknown ``--provider``, or
            what :func:`~prompt_runner.planning.provider_options.check_authored_options`
            refuses; a refused value the profile sets (not a flag) is said to come
            from profile ``profile``, with the flag that overrides it when one does.
    """
    provider = flags["provider"]
    check_provider_name(provider, where)
    if judge is None:
        return
    given = {k: v for k, v in flags.items() if v is not None}
    inherited = chosen.model_dump(exclude_none=True)
    try:
        judge.options({**inherited, **given}, provider=provider or chosen.provider, file=where)
    except UserError as exc:
        if exc.key is None or exc.key in given or exc.key not in inherited:
            raise
        flag = _OVERRIDING_FLAG.get(exc.key)
        if flag and exc.fix and exc.fix.startswith("use one of "):
            fix = f"give {flag} to set it ({exc.fix}), or name another --profile"
        else:
            fix = f"name a --profile that does not set {exc.key}, or another --provider"
        raise UserError(
            f"{exc.reason} (profile {profile!r} sets {exc.key}: {inherited[exc.key]!r})",
            file=where,
            key=exc.key,
            fix=fix,
        ) from None


_OVERRIDING_FLAG = {
    "model": "--model",
    "reasoning_effort": "--reasoning",
    "permission_mode": "--permission",
    "cli_confirmation": "--cli-confirmation",
}
"""A profile key -> the ``packet new`` flag that sets it over the profile."""


def _write_packet(packet_dir: Path, text: str) -> Path:
    """Write ``packet_dir``'s manifest (``text``, validated) and its empty
    ``prompts/``; returns the packet directory, resolved.

    Raises:
        UserError: the manifest already exists.
    """
    try:
        (packet_dir / "prompts").mkdir(parents=True, exist_ok=True)
        write_new(packet_dir / MANIFEST_NAME, text)
    except OSError as exc:
        refused = _refused_place(packet_dir, exc)
        if refused is None:
            raise  # a true storage fault (disk full, I/O error): exit 3
        raise refused from None
    return packet_dir.resolve()


def _refused_place(packet_dir: Path, exc: OSError) -> UserError | None:
    """The argument's fault behind ``exc`` (raised making ``packet_dir``): a
    ``--root`` that is a file or under one, that cannot be written (permission,
    a read-only file system), or where the file system makes no directory
    (``/proc``); or a file of the packet's name in it. ``None`` otherwise."""
    import errno

    root = packet_dir.parent
    code = exc.errno
    if code in (errno.ENOTDIR, errno.EEXIST):
        blocker = next(
            (
                p
                for p in (packet_dir / "prompts", packet_dir, *root.parents[::-1], root)
                if p.exists() and not p.is_dir()
            ),
            None,
        )
        if blocker is None:
            return None
        if blocker in (packet_dir, packet_dir / "prompts"):
            return UserError(
                "is a file, not a directory, so the packet cannot be made there",
                file=blocker,
                fix="pick another packet name, or move that file away",
            )
        what = "it is a file" if blocker == root else f"{blocker} is a file"
        return UserError(
            f"is not a directory ({what}), so no packet directory can be made in it",
            file=root,
            key="--root",
            fix="give --root a directory (or a path that can be created), or move that file away",
        )
    why = refused_directory(code)
    if why is not None:
        return UserError(
            f"{why[0]}, so no packet directory can be made in it",
            file=root,
            key="--root",
            fix=f"give --root {why[1]}",
        )
    return None


def _new_packet_dir(name: str, root: Path | str) -> Path:
    """``ROOT/NAME``, when ``name`` is valid and no packet is there yet.

    Raises:
        UserError: a bad name (``.`` and ``..`` name directories, not packets; longer
            than :data:`NAME_MAX_BYTES`), or a packet already at that place.
    """
    if name in (".", ".."):
        raise UserError(
            f"{name!r} is not a packet name: it means a directory that already exists",
            fix="give the new packet's own name (its directory is created under --root)",
        )
    if len(name.encode("utf-8", "surrogateescape")) > NAME_MAX_BYTES:
        raise UserError(
            f"invalid packet name: {len(name.encode('utf-8', 'surrogateescape'))} bytes long, "
            f"over the {NAME_MAX_BYTES}-byte limit of a file name",
            fix=f"use a name of at most {NAME_MAX_BYTES} characters",
        )
    if not NAME.match(name):
        rule = "use letters, digits, '_', '.', '-' only"
        if not name:
            rule = "give the packet a name, e.g. 'my-packet'"
        elif name[0] in "._-" and NAME.match("a" + name[1:]):
            # the characters are all allowed: it is the first one that is not
            rule = f"a packet name starts with a letter or digit, not {name[:1]!r}"
            rule += f" (e.g. {name.lstrip('._-') or 'my-packet'!r})"
        raise UserError(f"invalid packet name {name!r}", fix=rule)
    packet_dir = Path(root).expanduser() / name
    if (packet_dir / MANIFEST_NAME).exists():
        raise UserError(
            "already holds a packet", file=packet_dir, fix="pick another name or --root"
        )
    return packet_dir


def _repos_block(
    repos: Sequence[tuple[str, str]],
    default_repo: str | None,
    packet_dir: Path,
    cwd: Path | None,
) -> Any:
    """The manifest's ``repos`` mapping (the only repo is the default).

    Raises:
        UserError: a repo named twice, a bad repo name, or a default repo
            that is not among them.
    """
    names = [n for n, _ in repos]
    if len(set(names)) != len(names):
        raise UserError("a repo name is given twice", key="--repo", fix="name each repo once")
    if default_repo is not None and default_repo not in names:
        raise UserError(
            f"default repo {default_repo!r} is not among the repos",
            key="--default-repo",
            fix=f"use one of: {', '.join(names) or '(declare one with --repo NAME=PATH)'}",
        )
    if default_repo is None and len(names) == 1:
        default_repo = names[0]
    repo_map = CommentedMap()
    for repo_name, repo_path in repos:
        check_repo_name(repo_name)
        spec = CommentedMap()
        spec["path"] = quoted(repo_path_text(repo_path, packet_dir, cwd))
        if repo_name == default_repo:
            spec["default"] = True
        repo_map[repo_key(repo_name)] = spec
    return repo_map
