"""Scaffolding: ``packet new``, ``packet add-repo``, ``prompt new`` (SPEC 2.5, 9).

New files are written whole and validated against the models before they
touch the disk, so a scaffold always loads. Editing an existing manifest
(``add_repo``) goes through ruamel.yaml's round-trip mode: the author's
comments, key order and quoting survive; only the ``repos`` entries change.

Template resolution for ``prompt new`` (SPEC 2.5): the template is
``template`` > the manifest's ``prompt_template`` > the profile's
``prompt_template`` > ``default``; a name is looked up in the packet's
``templates/NAME.prompt.md`` > the home store's > the built-in, and a path
(absolute, with ``/`` or ending in ``.md``) is read as given. The generated
``id/phase/name/targets/commit`` are merged into the template's front matter
(:func:`~prompt_runner.packet.templates.merge_generated`). Body and
front-matter placeholders: ``{{id}} {{phase}} {{name}} {{commit}}
{{targets_csv}} {{targets_bullets}} {{targets_yaml}}``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from .frontmatter import read_text, split_front_matter
from .loader import (
    MANIFEST_NAME,
    PROMPT_SUFFIX,
    find_packet_root,
    read_packet_source,
    relative_file,
)
from .models import Manifest, PromptFrontMatter
from .templates import merge_generated, render_template, resolve_template
from .validation import validate_model

DEFAULT_TEMPLATE = "default"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


# --------------------------------------------------------------------------- YAML i/o


def _yaml() -> Any:
    from .yamlio import round_trip

    return round_trip()


def _q(value: str) -> Any:
    from .yamlio import quoted

    return quoted(value)


def _dump(yaml: Any, data: Any) -> str:
    from .yamlio import dump

    return dump(yaml, data)


def _split_manifest_text(text: str, where: str) -> tuple[str, str]:
    """``(front matter YAML, rest after the closing ---)``, byte-exact."""
    from .yamlio import split_document

    try:
        found = split_document(text)
    except UserError as exc:
        raise UserError(exc.reason, file=where, fix=exc.fix) from None
    if found is None:
        raise UserError("has no YAML front matter", file=where, fix="start it with a '---' line")
    return found


def _validated_manifest_text(front: str, body: str, where: str) -> str:
    text = f"---\n{front}---\n{body}"
    raw, _ = split_front_matter(text, file=where)
    validate_model(Manifest, raw, file=where)
    return text


def _write_new(path: Path, text: str) -> None:
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(text)
    except FileExistsError:
        raise UserError("already exists", file=path, fix="pick another name, or edit it") from None


def _repo_path_text(path: str, packet_dir: Path, cwd: Path | None) -> str:
    """A repo path as the manifest should store it.

    Absolute paths stay absolute. With ``cwd``, a relative ``path`` means
    relative to ``cwd`` (where the user typed it) and is rewritten relative to
    the packet directory, which is what the manifest resolves against.
    """
    if not path.strip():
        raise UserError("repo path is empty", key="repos", fix="give the repo's directory")
    expanded = os.path.expanduser(path)
    if os.path.isabs(expanded) or cwd is None:
        return expanded
    return os.path.relpath(os.path.abspath(cwd / expanded), os.path.abspath(packet_dir))


def parse_repo_flag(text: str) -> tuple[str, str]:
    """``"NAME=PATH"`` -> ``(NAME, PATH)``.

    Raises:
        UserError: no ``=``, or an empty side.
    """
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise UserError(
            f"--repo {text!r} is not NAME=PATH", key="--repo", fix="write e.g. --repo app=../app"
        )
    return name.strip(), path.strip()


def _check_repo_name(name: str) -> None:
    if name == "packet" or not _NAME.match(name):
        raise UserError(
            f"invalid repo name {name!r}",
            key="repos",
            fix="use letters, digits, '_', '.', '-' ('packet' is reserved for the packet dir)",
        )


# --------------------------------------------------------------------------- packet new


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
) -> Path:
    """Create ``ROOT/NAME/`` with a manifest and an empty ``prompts/``.

    Args:
        name: packet name and directory name.
        root: the parent directory (created if missing).
        profile: profile name (default: ``config.md``'s ``default_profile``,
            else :data:`~prompt_runner.packet.profiles.DEFAULT_PROFILE`); must exist.
        provider, model, reasoning_effort, permission_mode, cli_confirmation:
            manifest overrides.
        repos: ``(name, path)`` pairs; see :func:`add_repo` for ``cwd``.
        default_repo: which repo gets ``default: true`` (the only repo if one).
        prompt_template: the manifest's ``prompt_template``; must exist.
        resume_attempts: ``recovery.resume_attempts``.
        retry_attempts: ``recovery.retry.max_attempts``.
        retry_base_delay_ms, retry_max_delay_ms: ``recovery.retry`` backoff (ms).
        retry_jitter: ``recovery.retry.jitter``.
        repair_attempts: ``recovery.repair.max_attempts``.
        auto_repair: ``recovery.repair.enabled``.
        cwd: directory relative repo paths were given from (``None`` = store as given).

    Returns:
        The packet directory.

    Raises:
        UserError: bad names or values, an unknown profile or template, or an
            existing packet at that place.
    """
    from ruamel.yaml.comments import CommentedMap

    from .profiles import DEFAULT_PROFILE, default_profile_name, load_profile, recovery_settings
    from .yamlio import quoted

    if not _NAME.match(name):
        raise UserError(
            f"invalid packet name {name!r}", fix="use letters, digits, '_', '.', '-' only"
        )
    packet_dir = Path(root).expanduser() / name
    if (packet_dir / MANIFEST_NAME).exists():
        raise UserError(
            "already holds a packet", file=packet_dir, fix="pick another name or --root"
        )
    profile = profile or default_profile_name() or DEFAULT_PROFILE
    load_profile(profile)
    if prompt_template is not None:
        resolve_template(prompt_template, None, cwd=cwd)

    data = CommentedMap()
    data["name"] = _q(name)
    data["profile"] = _q(profile)
    for key, value in (
        ("provider", provider),
        ("model", model),
        ("reasoning_effort", reasoning_effort),
        ("permission_mode", permission_mode),
        ("cli_confirmation", cli_confirmation),
        ("prompt_template", prompt_template),
    ):
        if value is not None:
            data[key] = _q(value)
    recovery = recovery_settings(
        resume_attempts=resume_attempts,
        retry_attempts=retry_attempts,
        retry_base_delay_ms=retry_base_delay_ms,
        retry_max_delay_ms=retry_max_delay_ms,
        retry_jitter=retry_jitter,
        auto_repair=auto_repair,
        repair_attempts=repair_attempts,
    )
    if recovery:
        data["recovery"] = quoted(recovery)
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
    if repos:
        repo_map = CommentedMap()
        for repo_name, repo_path in repos:
            _check_repo_name(repo_name)
            spec = CommentedMap()
            spec["path"] = _q(_repo_path_text(repo_path, packet_dir, cwd))
            if repo_name == default_repo:
                spec["default"] = True
            repo_map[repo_name] = spec
        data["repos"] = repo_map

    where = str(packet_dir / MANIFEST_NAME)
    body = f"# {name}\n\nWhat this packet changes, in which repos, and why.\n"
    text = _validated_manifest_text(_dump(_yaml(), data), body, where)
    (packet_dir / "prompts").mkdir(parents=True, exist_ok=True)
    _write_new(packet_dir / MANIFEST_NAME, text)
    return packet_dir.resolve()


# --------------------------------------------------------------------------- add-repo


def add_repo(
    packet: Path | str,
    name: str,
    path: str,
    *,
    default: bool = False,
    cwd: Path | None = None,
) -> Path:
    """Add repo ``name`` at ``path`` to the manifest, keeping comments and key order.

    Args:
        packet: the packet directory.
        name: the logical repo name.
        path: its directory; relative paths are taken relative to ``cwd`` when
            given (and rewritten relative to the packet), else stored as given
            (the manifest resolves them against the packet directory).
        default: mark it ``default: true`` (clearing any other default).
        cwd: see ``path``.

    Returns:
        The manifest file.

    Raises:
        UserError: bad name, a repo of that name exists, or the edited manifest
            would not validate.
    """
    from ruamel.yaml.comments import CommentedMap

    from ..state.atomic import write_text_atomic

    _check_repo_name(name)
    root = find_packet_root(packet)
    manifest = root / MANIFEST_NAME
    where = str(manifest)
    front, body = _split_manifest_text(read_text(manifest, display=where), where)
    yaml = _yaml()
    data = yaml.load(front) if front.strip() else CommentedMap()
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        raise UserError("front matter is not a mapping", file=where, fix="write key: value lines")
    repos = data.get("repos")
    if repos is None:
        repos = CommentedMap()
        data["repos"] = repos
    if not isinstance(repos, dict):
        raise UserError("must be a mapping", file=where, key="repos", fix="write NAME: {path: DIR}")
    if name in repos:
        raise UserError(
            f"repo {name!r} already exists", file=where, key=f"repos.{name}", fix="edit it instead"
        )
    if default:
        for spec in repos.values():
            if isinstance(spec, dict) and spec.get("default"):
                spec["default"] = False
    spec = CommentedMap()
    spec["path"] = _q(_repo_path_text(path, root, cwd))
    if default:
        spec["default"] = True
    repos[name] = spec
    text = _validated_manifest_text(_dump(yaml, data), body, where)
    write_text_atomic(manifest, text)
    return manifest


# --------------------------------------------------------------------------- prompt new


def _profile_template(profile: str | None) -> str | None:
    """The ``prompt_template`` of the packet's profile (or of ``config.md``'s default)."""
    from .profiles import configured_profile

    found = configured_profile(profile)[1]  # a profile missing here has no template
    return found.prompt_template if found is not None else None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:60].rstrip("_") or "prompt"


def new_prompt(
    packet: Path | str,
    prompt_id: str,
    *,
    phase: str | None = None,
    name: str | None = None,
    targets: Sequence[str] | None = None,
    commit: str | None = None,
    template: str | None = None,
    cwd: Path | None = None,
) -> Path:
    """Create ``prompts/<id>_<slug(name)>.prompt.md`` from a template.

    Args:
        packet: the packet directory.
        prompt_id: a number (``3`` becomes ``03``); it is also the filename prefix.
        phase: default ``1``.
        name: default ``Prompt <id>``.
        targets: repo names (default: the packet's default repo, if any).
        commit: the commit message (default: ``chore: <name as a-slug>``, as the
            reference system writes it).
        template: template name or file path (see module doc for the resolution order).
        cwd: the directory a relative template path is taken from (default: the process's).

    Returns:
        The new prompt file.

    Raises:
        UserError: a non-numeric or taken id, an unknown target or template,
            or a template that renders front matter the models reject.
    """
    from ..verifier import parse_contract
    from .loader import resolve_repos

    source = read_packet_source(packet)
    root = source.root
    pid = prompt_id.strip()
    if not pid.isdigit():
        raise UserError(
            f"prompt id {prompt_id!r} is not a number",
            key="id",
            fix="use the prompt's position, e.g. 01: prompts run in filename-prefix order",
        )
    pid = pid.zfill(2)
    for ps in source.prompts:
        taken = ps.front.id if ps.front is not None else None
        if taken == pid or (ps.order is not None and ps.order == int(pid)):
            raise UserError(
                f"prompt {pid} already exists",
                file=relative_file(ps.file, root),
                fix="pick the next free number",
            )
    repos, default_repo = resolve_repos(root, source.manifest)
    chosen = list(targets) if targets is not None else ([default_repo] if default_repo else [])
    for target in chosen:
        if target not in repos:
            known = ", ".join(repos)
            raise UserError(
                f"unknown target repo {target!r}",
                key="--targets",
                fix=f"use one of: {known}, or add it with `packet add-repo`",
            )
    title = name or f"Prompt {pid}"
    values = {
        "id": pid,
        "phase": str(phase) if phase is not None else "1",
        "name": title,
        "commit": commit or f"chore: {_slug(title).replace('_', '-')}",
    }
    chosen_template = (
        template
        or source.manifest.prompt_template
        or _profile_template(source.manifest.profile)
        or DEFAULT_TEMPLATE
    )
    found = resolve_template(chosen_template, root, cwd=cwd)
    where = f"template {found.name} ({found.path or found.source})"
    generated: dict[str, Any] = {
        "id": pid,
        "phase": int(values["phase"]) if values["phase"].isdigit() else values["phase"],
        "name": title,
        "targets": chosen,
        "commit": values["commit"],
    }
    rendered = merge_generated(
        render_template(found.text, values, chosen), generated, found.name, where
    )
    target_file = source.prompts_dir / f"{pid}_{_slug(title)}{PROMPT_SUFFIX}"
    raw, _ = split_front_matter(rendered, file=where)
    front = validate_model(PromptFrontMatter, raw, file=where)
    parse_contract(front.verify, file=where)
    target_file.parent.mkdir(parents=True, exist_ok=True)
    _write_new(target_file, rendered)
    return target_file
