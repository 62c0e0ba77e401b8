"""A packet as parsed file by file, before any cross-reference check: the layer
lint and doctor read, since it keeps each prompt file's error instead of
stopping at the first (:func:`read_packet_source`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UserError
from .files import (
    MANIFEST_NAME,
    PROMPT_SUFFIX,
    display_path,
    find_packet_root,
    ignored_markdown,
    is_prompt_file_name,
    packet_prompt_dir,
    prompt_order,
)
from .frontmatter import read_text, split_front_matter
from .models import Manifest, PromptFrontMatter
from .validation import validate_model


@dataclass(frozen=True)
class PromptSource:
    """A prompt file as parsed, or the error that stopped it."""

    file: Path
    order: int | None
    raw: dict[str, Any] | None
    front: PromptFrontMatter | None
    body: str
    error: UserError | None


@dataclass(frozen=True)
class PacketSource:
    """The packet as parsed file by file, before cross-reference checks."""

    root: Path
    manifest_file: Path
    manifest_raw: dict[str, Any]
    manifest: Manifest
    body: str
    prompts: tuple[PromptSource, ...]
    ignored: tuple[Path, ...] = ()
    prompt_dir: Path | None = None

    @property
    def prompts_dir(self) -> Path:
        """Where the prompt files are (the manifest's ``prompt_dir``, default ``prompts/``)."""
        return self.prompt_dir if self.prompt_dir is not None else self.root / "prompts"


def read_packet_source(path: Path | str) -> PacketSource:
    """Parse the manifest and every prompt file of a packet.

    Raises:
        UserError: the directory is not a packet or its manifest is invalid.
            Prompt-file errors are kept in :attr:`PromptSource.error`.
    """
    root = find_packet_root(path)
    manifest_file = root / MANIFEST_NAME
    where = display_path(manifest_file)
    raw, body = split_front_matter(read_text(manifest_file, display=where), file=where)
    manifest = validate_model(Manifest, raw, file=where)
    prompts: list[PromptSource] = []
    prompt_dir = packet_prompt_dir(root, manifest)
    files = sorted(prompt_dir.glob(f"*{PROMPT_SUFFIX}")) if prompt_dir.is_dir() else []
    files = [f for f in files if is_prompt_file_name(f.name)]
    for file in files:
        prompts.append(_read_prompt(root, file))
    prompts.sort(key=lambda p: (p.order is None, p.order or 0, p.file.name))
    return PacketSource(
        root,
        manifest_file,
        raw,
        manifest,
        body,
        tuple(prompts),
        ignored_markdown(prompt_dir),
        prompt_dir,
    )


def _read_prompt(root: Path, file: Path) -> PromptSource:
    where = display_path(file)
    order = prompt_order(file)
    try:
        if file.is_dir():
            raise UserError(
                "is a directory, not a prompt file", file=where, fix="rename or remove it"
            )
        raw, body = split_front_matter(read_text(file, display=where), file=where)
        front = validate_model(PromptFrontMatter, raw, file=where)
    except UserError as exc:
        return PromptSource(file, order, None, None, "", exc)
    return PromptSource(file, order, raw, front, body, None)
