"""Home-scoped profiles and templates (SPEC 2.5).

The store lives in ``$PROMPT_RUNNER_CONFIG_HOME`` when set, else
``$XDG_CONFIG_HOME/prompt_runner/``, else ``~/.config/prompt_runner/``::

    config.md               notes and the default profile name
    profiles/NAME.md        profile: YAML front matter (plan keys) + notes
    templates/NAME.prompt.md prompt templates

The two built-in profiles (``simulated-default`` and ``codex-default``) and the
built-in templates (``default``, ``from-adr``) are also available without
``init``, so a packet that names them runs on a fresh machine; a file in the
store with the same name wins.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UserError
from .frontmatter import read_text, split_front_matter
from .models import Profile
from .validation import validate_model

BUILTIN_PROFILES: dict[str, str] = {
    "simulated-default": """---
name: "simulated-default"
description: "Built-in simulated provider: runs packets with no agent CLI."
provider: "simulated"
model: "simulated-demo"
permission_mode: "bypass"
cli_confirmation: "off"
---
# simulated-default

Runs packets through the built-in simulated provider, which executes each
prompt's `simulate:` script. Use it to try a packet, test a contract, or demo
recovery without spending tokens.
""",
    "codex-default": """---
name: "codex-default"
description: "Codex CLI with a low reasoning effort."
provider: "codex"
model: "gpt-5.6-luna"
reasoning_effort: "low"
permission_mode: "bypass"
cli_confirmation: "warn"
---
# codex-default

Drives the Codex CLI (`codex`). Install it with `npm install -g @openai/codex`.
""",
}

BUILTIN_TEMPLATES: dict[str, str] = {
    "default": """---
id: "{{id}}"
phase: {{phase}}
name: "{{name}}"
targets:
{{targets_yaml}}
commit: "{{commit}}"
verify:
  files_exist: []
---
# {{name}}

## Mission

<!-- prompt_runner:placeholder mission -->
Describe the change this prompt must make.

## Targets

{{targets_bullets}}

## Done when

<!-- prompt_runner:placeholder done_when -->
List the checks that prove it, and mirror them in `verify:`.
""",
    "from-adr": """---
id: "{{id}}"
phase: {{phase}}
name: "{{name}}"
template: "from-adr"
targets:
{{targets_yaml}}
commit: "{{commit}}"
verify:
  files_exist: []
---
# {{name}}

## Required Reading

<!-- prompt_runner:placeholder required_reading -->
Name the ADR and the files the agent must read first (the body is all it sees).

## Decision To Implement

<!-- prompt_runner:placeholder decision -->
Quote the decision from the ADR.

## Targets

{{targets_bullets}}

## Done when

<!-- prompt_runner:placeholder done_when -->
List the checks that prove it, and mirror them in `verify:`.
""",
}

CONFIG_TEXT = """---
default_profile: "simulated-default"
---
# Prompt Runner configuration

Profiles live in `profiles/`, prompt templates in `templates/`.
"""


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

    Raises:
        UserError: unknown profile, or a malformed profile file.
    """
    _check_name(name, "profile")
    path = profile_path(name)
    if path.is_file():
        raw, _ = split_front_matter(read_text(path), file=str(path))
        return validate_model(Profile, raw, file=str(path))
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
            found[path.stem] = "home"
    return sorted(found.items())


def init_home() -> list[Path]:
    """Create the store with the built-in profiles and templates; never overwrite.

    Returns:
        The files created (an empty list when everything existed).
    """
    home = config_home()
    created: list[Path] = []
    wanted: dict[Path, str] = {home / "config.md": CONFIG_TEXT}
    for name, text in BUILTIN_PROFILES.items():
        wanted[home / "profiles" / f"{name}.md"] = text
    for name, text in BUILTIN_TEMPLATES.items():
        wanted[home / "templates" / f"{name}.prompt.md"] = text
    for path, text in wanted.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with path.open("x", encoding="utf-8") as handle:
                handle.write(text)
        except FileExistsError:
            continue
        created.append(path)
    return created


def new_profile(
    name: str,
    *,
    provider: str | None = None,
    model: str | None = None,
    reasoning_effort: str | None = None,
    permission_mode: str | None = None,
    force: bool = False,
) -> Path:
    """Write ``profiles/NAME.md``.

    Raises:
        UserError: bad name, invalid values, or the profile exists (without ``force``).
    """
    _check_name(name, "profile")
    fields = {
        "name": name,
        "provider": provider,
        "model": model,
        "reasoning_effort": reasoning_effort,
        "permission_mode": permission_mode,
    }
    data = {k: v for k, v in fields.items() if v is not None}
    validate_model(Profile, data, file=f"profile {name}")
    if provider is not None:
        from ..providers.registry import provider_names

        if provider not in provider_names():
            raise UserError(
                f"unknown provider {provider!r}",
                key="--provider",
                fix=f"use one of {', '.join(provider_names())}",
            )
    path = profile_path(name)
    if path.exists() and not force:
        raise UserError("profile already exists", file=path, fix="edit it, or pass --force")
    import json

    lines = ["---", *(f"{k}: {json.dumps(v)}" for k, v in data.items()), "---", f"# {name}", ""]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines), encoding="utf-8")
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
                found[path.name[: -len(".prompt.md")]] = source
    return sorted(found.items())


def _check_name(name: str, what: str) -> None:
    if not name or "/" in name or name.startswith(".") or "\x00" in name:
        raise UserError(
            f"invalid {what} name {name!r}", fix="use letters, digits, '-' and '_' only"
        )
