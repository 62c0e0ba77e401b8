"""Prompt templates: resolve a template by name and fill its placeholders (SPEC 2.5).

A template *file* is looked up in the packet's ``templates/``, then the home
store, then the built-ins. Placeholders: ``{{id}} {{phase}} {{name}}
{{commit}} {{targets_csv}} {{targets_bullets}} {{targets_yaml}}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

from ..errors import UserError
from .frontmatter import read_text
from .loader import PROMPT_SUFFIX

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def template_text(name: str, packet_root: Path | None) -> tuple[str, str]:
    """``(text, source)`` of template ``name``: packet > home > built-in.

    Raises:
        UserError: no template of that name.
    """
    from .profiles import BUILTIN_TEMPLATES, config_home, list_templates

    if not _NAME.match(name):
        raise UserError(f"invalid template name {name!r}", fix="use a name from `template list`")
    candidates: list[tuple[Path, str]] = []
    if packet_root is not None:
        candidates.append((packet_root / "templates" / f"{name}{PROMPT_SUFFIX}", "packet"))
    candidates.append((config_home() / "templates" / f"{name}{PROMPT_SUFFIX}", "home"))
    for path, source in candidates:
        if path.is_file():
            return read_text(path, display=str(path)), source
    builtin = BUILTIN_TEMPLATES.get(name)
    if builtin is not None:
        return builtin, "built-in"
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
