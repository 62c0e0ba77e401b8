"""``prompt new``: one more prompt file, from a template (SPEC 2.5, 9).

The template is ``template`` > the manifest's ``prompt_template`` > the
profile's ``prompt_template`` > ``default``; a name is looked up in the
packet's ``templates/NAME.prompt.md`` > the home store's > the built-in, and a
path (absolute, with ``/`` or ending in ``.md``) is read as given. The
generated ``id/phase/name/targets/commit`` are merged into the template's
front matter (:func:`~prompt_runner.packet.templates.merge_generated`). Body
and front-matter placeholders: ``{{id}} {{phase}} {{name}} {{commit}}
{{targets_csv}} {{targets_bullets}} {{targets_yaml}}``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..verifier import parse_contract
from .files import PROMPT_SUFFIX
from .frontmatter import split_front_matter
from .loader import resolve_repos
from .models import PromptFrontMatter
from .profiles import configured_profile, profile_path
from .source import PacketSource, read_packet_source
from .templates import merge_generated, render_template, resolve_template
from .validation import validate_model
from .writing import write_new

DEFAULT_TEMPLATE = "default"


def _profile_template(profile: str | None) -> str | None:
    """The ``prompt_template`` of the packet's profile (or of ``config.md``'s default)."""
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
            a blank ``commit``, ``name``, ``phase`` or ``template`` (``''``
            too; the key is the flag: ``--commit``), or a template
            that renders front matter the models reject.
    """
    for flag, value, default in (
        ("--name", name, "Prompt <id>"),
        ("--phase", phase, "1"),
        ("--template", template, "the packet's, the profile's or the built-in one"),
    ):
        if value is not None and not str(value).strip():  # '' would quietly be the default
            raise UserError(
                "is blank",
                key=flag,
                fix=f"give {flag} a value, or leave it out for the default ({default})",
            )
    if commit is not None and not commit.strip():
        # the flag's value, not the template's: say so (and refuse '' too,
        # which would otherwise silently become the default)
        raise UserError(
            "is blank",
            key="--commit",
            fix="write a commit message, or leave --commit out for the default "
            "(chore: <name as a-slug>)",
        )
    source = read_packet_source(packet)
    pid = _free_id(source, prompt_id)
    chosen = _targets(source, targets)
    title = name or f"Prompt {pid}"
    values = {
        "id": pid,
        "phase": str(phase) if phase is not None else "1",
        "name": title,
        "commit": commit or f"chore: {_slug(title).replace('_', '-')}",
    }
    from_profile = None
    if not template and not source.manifest.prompt_template:
        from_profile = _profile_template(source.manifest.profile)
    chosen_template = (
        template or source.manifest.prompt_template or from_profile or DEFAULT_TEMPLATE
    )
    try:
        found = resolve_template(chosen_template, source.root, cwd=cwd)
    except UserError as exc:
        if from_profile is None:
            raise
        # the name came from the profile: say which file and key hold it
        profile = configured_profile(source.manifest.profile)[0] or "?"
        raise UserError(
            exc.reason,
            file=profile_path(profile),
            key="prompt_template",
            fix=f"{exc.fix}; or give --template, or set the manifest's prompt_template"
            if exc.fix
            else "give --template, or set the manifest's prompt_template",
        ) from None
    where = found.where
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
    prompt_dir = target_file.parent
    if prompt_dir.exists() and not prompt_dir.is_dir():  # bad input, not a broken disk
        raise UserError(
            f"{prompt_dir.name} is a file where the prompt directory should be",
            file=prompt_dir,
            fix="move that file away (the prompts go in a directory of that name)",
        )
    prompt_dir.mkdir(parents=True, exist_ok=True)
    write_new(target_file, rendered)
    return target_file


def _free_id(source: PacketSource, prompt_id: str) -> str:
    """``prompt_id`` as a two-digit id no prompt file has (by id or by prefix).

    Raises:
        UserError: not a number, or taken.
    """
    pid = prompt_id.strip()
    if not (pid.isascii() and pid.isdigit()):  # '٣'.isdigit() too, but no filename prefix
        raise UserError(
            f"prompt id {prompt_id!r} is not a number (digits 0-9 only)",
            key="id",
            fix="use the prompt's position, e.g. 01: prompts run in filename-prefix order",
        )
    pid = pid.zfill(2)
    for ps in source.prompts:
        taken = ps.front.id if ps.front is not None else None
        if taken == pid or (ps.order is not None and ps.order == int(pid)):
            raise UserError(
                f"prompt {pid} already exists",
                file=ps.file,
                fix="pick the next free number",
            )
    return pid


def _targets(source: PacketSource, targets: Sequence[str] | None) -> list[str]:
    """The new prompt's targets (default: the packet's default repo, if any).

    Raises:
        UserError: a target the manifest does not declare.
    """
    repos, default_repo = resolve_repos(source.root, source.manifest)
    chosen = list(targets) if targets is not None else ([default_repo] if default_repo else [])
    for target in chosen:
        if target not in repos:
            known = ", ".join(repos)
            raise UserError(
                f"unknown target repo {target!r}",
                key="--targets",
                fix=f"use one of: {known}, or add it with `packet add-repo`",
            )
    return chosen
