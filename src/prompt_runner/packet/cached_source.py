"""A packet's :class:`~prompt_runner.packet.source.PacketSource` kept in the
parsed-packet cache (:mod:`prompt_runner.packet.cache`), section ``source``.

What is kept is what parsing the files gave: the manifest's and every prompt's
front matter (as JSON values) and body, in run order. A kept source is used
while the digest of today's files is the one it was kept under; it is then
validated into models and checked by :func:`~prompt_runner.packet.loader.load_packet`
exactly as a freshly parsed one -- repos resolved, contract paths checked
against the work trees, ids and dependencies -- so only the reading of YAML
is saved, never a check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from . import cache
from .file_read import read_regular
from .files import (
    MANIFEST_NAME,
    display_in,
    display_path,
    listing,
    packet_prompt_dir,
    prompt_names,
    prompt_order,
)
from .frontmatter import decode_text, split_front_matter
from .models import Manifest, PromptFrontMatter
from .source import PacketSource, PromptSource, source_of
from .validation import validate_model

SECTION = "source"


def cached_source(root: Path) -> PacketSource | None:
    """The kept source of the packet at ``root`` (absolute, resolved) when today's
    files are the ones it was parsed from; ``None`` otherwise (or when the
    cache is off or its entry unusable)."""
    section = cache.read_section(root, SECTION)
    if section is None or not isinstance(section.data, dict):
        return None
    try:
        return _rebuilt(root, section)
    except (KeyError, TypeError, ValueError, UserError):
        return None  # an entry of another shape, or files that no longer parse the same


def _rebuilt(root: Path, section: cache.Section) -> PacketSource | None:
    data: dict[str, Any] = section.data
    prompt_dir_name = data["prompt_dir"]
    if not isinstance(prompt_dir_name, str):
        return None
    try:
        manifest_bytes = read_regular(root / MANIFEST_NAME)
    except UserError:
        return None
    prompt_dir = root / prompt_dir_name
    entries = listing(prompt_dir)
    names = prompt_names(entries)
    if any(is_dir for _, is_dir in names):
        return None  # an error to report: the parse says it
    files = cache.read_prompt_bytes(prompt_dir, [name for name, _ in names])
    if files is None:
        return None
    digest = cache.inputs_digest(root, prompt_dir_name, manifest_bytes, entries, files)
    if digest != section.digest:
        return None
    manifest_raw = data["manifest_raw"]
    manifest = validate_model(Manifest, manifest_raw, file=display_path(root / MANIFEST_NAME))
    if root / (manifest.prompt_dir or "prompts") != prompt_dir:
        return None
    shown = display_in(prompt_dir)
    prompts = []
    for name, raw, body in data["prompts"]:
        file = prompt_dir / name
        front = validate_model(PromptFrontMatter, raw, file=shown(name))
        prompts.append(PromptSource(file, prompt_order(file), raw, front, body, None))
    return source_of(root, manifest_raw, manifest, data["body"], prompts, prompt_dir, entries)


def keep_parsed(
    root: Path,
    prompt_dir: Path,
    data: dict[str, bytes],
    parsed: dict[str, tuple[dict[str, Any], str]],
) -> None:
    """Keep the source of the packet at ``root`` from prompt files parsed elsewhere
    (``packet lint``, before its whole-packet check loads the packet): ``data``
    each file's bytes and ``parsed`` its front matter and body, by name. The
    manifest is read here; nothing is kept unless it names ``prompt_dir``."""
    manifest_file = root / MANIFEST_NAME
    where = display_path(manifest_file)
    try:
        manifest_bytes = read_regular(manifest_file)
        raw, body = split_front_matter(decode_text(manifest_bytes, display=where), file=where)
        manifest = validate_model(Manifest, raw, file=where)
    except (OSError, UserError):
        return
    if packet_prompt_dir(root, manifest) != prompt_dir:
        return
    prompts = [
        PromptSource(prompt_dir / name, prompt_order(prompt_dir / name), front, None, text, None)
        for name, (front, text) in parsed.items()
    ]
    source = source_of(root, raw, manifest, body, prompts, prompt_dir, listing(prompt_dir))
    keep_source(source, cache.Reads(manifest_bytes, dict(data)))


def keep_source(source: PacketSource, reads: cache.Reads) -> None:
    """Keep ``source`` (every prompt of it parsed, ``reads`` the bytes it was
    parsed from) in the cache; silently nothing when it cannot be kept."""
    if reads.manifest is None or any(p.error is not None for p in source.prompts):
        return
    names = {name for name, _ in prompt_names(source.listing)}
    if names != set(reads.prompts) or len(names) != len(source.prompts):
        return  # not what was listed: a file came or went during the read
    root = source.root
    prompt_dir_name = source.prompts_dir.relative_to(root).as_posix()
    digest = cache.inputs_digest(
        root, prompt_dir_name, reads.manifest, source.listing, reads.prompts
    )
    data = {
        "prompt_dir": prompt_dir_name,
        "manifest_raw": source.manifest_raw,
        "body": source.body,
        "prompts": [[p.file.name, p.raw, p.body] for p in source.prompts],
    }
    cache.write_section(root, SECTION, cache.Section(digest, data))
