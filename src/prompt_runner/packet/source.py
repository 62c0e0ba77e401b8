"""A packet as parsed file by file, before any cross-reference check: the layer
lint and doctor read, since it keeps each prompt file's error instead of
stopping at the first (:func:`read_packet_source`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from .cache import Reads
from .files import (
    MANIFEST_NAME,
    Listing,
    display_in,
    display_path,
    find_packet_root,
    ignored_names,
    listing,
    packet_prompt_dir,
    prompt_names,
    prompt_order,
)
from .frontmatter import decode_text, read_bytes, split_front_matter, split_prompt_front_matter
from .manifest_check import keep_loads
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
    listing: Listing = ()
    """The prompt directory's entries as read (:func:`~prompt_runner.packet.files.listing`)."""

    @property
    def prompts_dir(self) -> Path:
        """Where the prompt files are (the manifest's ``prompt_dir``, default ``prompts/``)."""
        return self.prompt_dir if self.prompt_dir is not None else self.root / "prompts"


def read_packet_source(path: Path | str, *, reads: Reads | None = None) -> PacketSource:
    """Parse the manifest and every prompt file of a packet.

    Args:
        reads: given, it receives the bytes of every file read (the cache's digest).

    Raises:
        UserError: the directory is not a packet or its manifest is invalid.
            Prompt-file errors are kept in :attr:`PromptSource.error`.
    """
    root = find_packet_root(path)
    manifest_file = root / MANIFEST_NAME
    where = display_path(manifest_file)
    data = read_bytes(manifest_file, display=where)
    if reads is not None:
        reads.manifest = data
    raw, body = split_front_matter(decode_text(data, display=where), file=where)
    manifest = validate_model(Manifest, raw, file=where)
    prompts: list[PromptSource] = []
    prompt_dir = packet_prompt_dir(root, manifest)
    keep_loads(root, data)  # status then knows this manifest loads (packet/manifest_check.py)
    shown = display_in(prompt_dir)
    entries = listing(prompt_dir)
    for name, is_dir in prompt_names(entries):
        prompts.append(_read_prompt(prompt_dir / name, shown(name), is_dir=is_dir, reads=reads))
    return source_of(root, raw, manifest, body, prompts, prompt_dir, entries)


def source_of(
    root: Path,
    raw: dict[str, Any],
    manifest: Manifest,
    body: str,
    prompts: list[PromptSource],
    prompt_dir: Path,
    entries: Listing,
) -> PacketSource:
    """The :class:`PacketSource` of parsed parts: the prompts put in run order
    (numeric prefix, then name), the ignored files taken from ``entries``."""
    prompts.sort(key=lambda p: (p.order is None, p.order or 0, p.file.name))
    return PacketSource(
        root,
        root / MANIFEST_NAME,
        raw,
        manifest,
        body,
        tuple(prompts),
        tuple(prompt_dir / name for name in ignored_names(entries)),
        prompt_dir,
        entries,
    )


def directory_prompt_error(where: str) -> UserError:
    """The error for a directory named as a prompt file is (``NN_x.prompt.md/``):
    ``run``, ``plan``, ``list`` and ``packet lint`` say this one sentence."""
    return UserError("is a directory, not a prompt file", file=where, fix="rename or remove it")


def _read_prompt(file: Path, where: str, *, is_dir: bool, reads: Reads | None) -> PromptSource:
    order = prompt_order(file)
    try:
        if is_dir:
            raise directory_prompt_error(where)
        data = read_bytes(file, display=where)
        if reads is not None:
            reads.prompts[file.name] = data
        text = decode_text(data, display=where)
    except UserError as exc:
        return PromptSource(file, order, None, None, "", exc)
    return prompt_source(file, where, text, order=order)


def prompt_source(file: Path, where: str, text: str, *, order: int | None) -> PromptSource:
    """The :class:`PromptSource` of prompt file ``file`` holding ``text`` (a parse
    error is kept in :attr:`PromptSource.error`, as a read keeps it).

    Args:
        where: the file as messages name it.
        order: its numeric prefix (:func:`~prompt_runner.packet.files.prompt_order`).
    """
    try:
        raw, body, _ = split_prompt_front_matter(text, file=where)
        front = validate_model(PromptFrontMatter, raw, file=where)
    except UserError as exc:
        return PromptSource(file, order, None, None, "", exc)
    return PromptSource(file, order, raw, front, body, None)


def with_prompt_text(source: PacketSource, file: Path, text: str) -> PacketSource:
    """``source`` with prompt file ``file`` parsed from ``text`` instead: what the
    loader would read once ``text`` is written there (``control amend --persist``
    checks an edit with :func:`~prompt_runner.packet.loader.packet_of` before
    making it).

    Raises:
        ValueError: ``file`` is not one of ``source``'s prompt files.
    """
    for index, ps in enumerate(source.prompts):
        if ps.file == file:
            where = display_in(source.prompts_dir)(file.name)
            new = prompt_source(file, where, text, order=ps.order)
            prompts = (*source.prompts[:index], new, *source.prompts[index + 1 :])
            return replace(source, prompts=prompts)
    raise ValueError(f"{file} is not a prompt file of the packet")
