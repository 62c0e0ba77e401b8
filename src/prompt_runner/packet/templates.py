"""Prompt templates: resolve a template by name or path, fill and merge it (SPEC 2.5).

A template is markdown with optional YAML front matter. Its front matter holds
defaults for the new prompt (the reference system's own templates hold only a
``verify:`` skeleton); ``prompt new`` merges the generated ``id``, ``phase``,
``name``, ``targets`` and ``commit`` into it, and the template's name as
``template`` unless the template sets one (:func:`merge_generated`).

A template is named or given as a file: an argument that is absolute,
contains ``/`` or ends in ``.md`` is a path (relative to the current
directory); otherwise the *name* is looked up in the packet's ``templates/``,
then the home store, then the built-ins. Placeholders, in the front matter
and the body: ``{{id}} {{phase}} {{name}} {{commit}} {{targets_csv}}
{{targets_bullets}} {{targets_yaml}}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from .builtins import BUILTIN_TEMPLATES
from .files import PROMPT_SUFFIX
from .frontmatter import read_text, split_front_matter
from .profiles import config_home, list_templates
from .yamlio import Document, dump, load_mapping, quoted, round_trip, split_for_edit

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
GENERATED_KEYS = ("id", "phase", "name", "template", "targets", "commit")
"""The keys ``prompt new`` writes, in the order they open a new prompt's front matter."""


@dataclass(frozen=True)
class Template:
    """A resolved template.

    Attributes:
        name: the template's name (a path's file name without ``.prompt.md``/``.md``).
        text: the template file's text.
        source: ``packet``, ``home``, ``built-in`` or ``file`` (given as a path).
        path: the file it was read from (``None`` for a built-in).
    """

    name: str
    text: str
    source: str
    path: Path | None = None

    @property
    def where(self) -> str:
        """How errors name it: its file, or ``built-in template NAME``."""
        return str(self.path) if self.path is not None else f"built-in template {self.name}"


def is_template_path(value: str) -> bool:
    """True when ``--template`` names a file rather than a template: absolute, ``/`` or ``.md``."""
    return value.startswith(("/", "~")) or "/" in value or value.endswith(".md")


def resolve_template(
    name_or_path: str, packet_root: Path | None, *, cwd: Path | None = None
) -> Template:
    """The template ``name_or_path``: a file path, or a name (packet > home > built-in).

    Args:
        name_or_path: a template name, or a path (see :func:`is_template_path`).
        packet_root: the packet whose ``templates/`` is searched first (``None``: skip).
        cwd: the directory a relative path is taken from (default: the process's).

    Raises:
        UserError: no template of that name, or no readable regular file at
            that path or of that name (a directory or a named pipe included).
    """
    if is_template_path(name_or_path):
        path = Path(name_or_path).expanduser()
        if not path.is_absolute():
            path = (cwd or Path.cwd()) / path
        if path.is_dir():
            inside = sorted(str(p) for p in path.glob(f"*{PROMPT_SUFFIX}"))[:3]
            raise UserError(
                f"{name_or_path!r} is a directory, not a template file",
                key="--template",
                fix=(
                    f"give one of its templates ({', '.join(inside)})"
                    if inside
                    else f"give the path of a {PROMPT_SUFFIX} file"
                )
                + ", or a name from `template list`",
            )
        if not path.exists():  # read_text refuses what is not a regular file
            raise UserError(
                f"template file {name_or_path!r} does not exist",
                key="--template",
                fix="give the path of a .prompt.md file, or a name from `template list`",
            )
        stem = path.name
        for suffix in (PROMPT_SUFFIX, ".md"):
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        return Template(stem, read_text(path, display=str(path)), "file", path)
    text, source, found = template_text(name_or_path, packet_root)
    return Template(name_or_path, text, source, found)


def template_text(name: str, packet_root: Path | None) -> tuple[str, str, Path | None]:
    """``(text, source, file)`` of template ``name``: packet > home > built-in
    (``file`` is ``None`` for a built-in).

    Raises:
        UserError: no template of that name, or the first file of that name is
            not a regular file (a named pipe, a directory: file_read's rule).
    """
    if not _NAME.match(name):
        raise UserError(f"invalid template name {name!r}", fix="use a name from `template list`")
    candidates: list[tuple[Path, str]] = []
    if packet_root is not None:
        candidates.append((packet_root / "templates" / f"{name}{PROMPT_SUFFIX}", "packet"))
    candidates.append((config_home() / "templates" / f"{name}{PROMPT_SUFFIX}", "home"))
    for path, source in candidates:
        if path.exists():  # read_text refuses what is not a regular file, naming it
            return read_text(path, display=str(path)), source, path
    builtin = BUILTIN_TEMPLATES.get(name)
    if builtin is not None:
        return builtin, "built-in", None
    known = ", ".join(n for n, _ in list_templates(packet_root))
    raise UserError(
        f"unknown prompt template {name!r}",
        key="template",
        fix=f"use one of: {known}, or add templates/{name}{PROMPT_SUFFIX}",
    )


def render_template(text: str, values: dict[str, str], targets: Sequence[str]) -> str:
    """Fill the placeholders of a template.

    In the front matter, scalar values are escaped for a double-quoted YAML
    string (templates quote them: ``name: "{{name}}"``); the body gets them
    verbatim. ``{{targets_yaml}}`` is an indented YAML list (``  []`` when
    empty), ``{{targets_bullets}}`` a markdown list, ``{{targets_csv}}``
    comma-separated names. Unknown placeholders are left as written.
    """
    bullets = "\n".join(f"- `{t}`" for t in targets) or "- (the packet's default repo)"
    block = {
        "targets_yaml": "\n".join(f"  - {json.dumps(t)}" for t in targets) or "  []",
        "targets_bullets": bullets,
        "targets_csv": ", ".join(targets),
    }

    def fill(part: str, escape: bool) -> str:
        def one(match: re.Match[str]) -> str:
            key = match.group(1)
            if key in block:
                return block[key]
            if key not in values:
                return match.group(0)
            return json.dumps(values[key])[1:-1] if escape else values[key]

        return re.sub(r"\{\{\s*([a-z_]+)\s*\}\}", one, part)

    lines = text.splitlines(keepends=True)
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            head = "".join(lines[: end + 1])
            return fill(head, True) + fill("".join(lines[end + 1 :]), False)
    return fill(text, False)


def merge_generated(
    rendered: str, generated: dict[str, Any], template_name: str, where: str
) -> str:
    """Merge ``generated`` prompt keys into the front matter of a filled template.

    The generated values win over the template's (as in the reference
    system); ``template`` is added with ``template_name`` unless the template
    sets it. Keys keep the template's order and comments; generated keys the
    template lacks are inserted in :data:`GENERATED_KEYS` order, before its
    other keys. A template without front matter gets one.

    Args:
        rendered: the template text with its placeholders filled.
        generated: ``id`` (str), ``phase`` (int or str), ``name``, ``commit``
            (str) and ``targets`` (list of str).
        template_name: the template's name.
        where: how errors name the template (its file: :attr:`Template.where`).

    Returns:
        The prompt file's text.

    Raises:
        UserError: the template's front matter is refused as a prompt's would
            be (never closed, invalid YAML at a line, a key given twice, not a
            mapping), in the prompt loader's words.
    """
    doc = _split(rendered, where)
    front = doc.yaml_text if doc is not None else ""
    yaml = round_trip()
    data = load_mapping(yaml, front, where)
    values = dict(generated)
    if "template" not in data:
        values["template"] = template_name
    position = 0
    for key in GENERATED_KEYS:
        if key not in values:
            if key in data:
                position = list(data).index(key) + 1
            continue
        if key in data:
            data[key] = quoted(values[key])
            position = list(data).index(key) + 1
        else:
            data.insert(position, key, quoted(values[key]))
            position += 1
    if doc is None:  # no front matter: the template's text is the body
        return f"---\n{dump(yaml, data)}---\n{rendered}"
    return doc.with_front(dump(yaml, data))  # the template's own BOM and line end


def _split(text: str, where: str) -> Document | None:
    """The filled template split for the edit (:func:`~.yamlio.split_for_edit`:
    its BOM, fences and line end kept); ``None``: it has no front matter.

    The front matter is first parsed as a prompt file's is
    (:func:`~prompt_runner.packet.frontmatter.split_front_matter`), so a
    template's mistakes read as a prompt's do, with the key and the lines (of
    the filled template: a multi-line placeholder such as ``{{targets_yaml}}``
    shifts the lines after it).

    Raises:
        UserError: see :func:`merge_generated`.
    """
    found = split_for_edit(text, file=where)
    if found is not None:
        split_front_matter(text, file=where)
    return found


def check_profile_template(name: str, where: str) -> None:
    """Refuse a profile ``prompt_template`` that names no home or built-in template
    (a packet's own template is the manifest's ``prompt_template``: a profile
    serves every packet, so its template has to exist outside any one of them).

    Raises:
        UserError: naming ``where`` and ``--prompt-template``.
    """
    if is_template_path(name):
        if not Path(name).expanduser().is_file():
            raise UserError(
                f"template file {name!r} does not exist",
                file=where,
                key="--prompt-template",
                fix="give the path of an existing .prompt.md file, or a name from `template list`",
            )
        return
    try:
        template_text(name, None)
    except UserError as exc:
        home = config_home() / "templates" / f"{name}.prompt.md"
        known = ", ".join(n for n, _ in list_templates(None))
        raise UserError(
            exc.reason if exc.reason.startswith("invalid") else f"names no template ({name!r})",
            file=where,
            key="--prompt-template",
            fix=f"use one of {known}, or create {home} first (a template of one packet "
            "only is set by its manifest's prompt_template)",
        ) from None
