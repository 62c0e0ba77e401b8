"""The ids of a packet's prompts, read as text: no YAML, no pydantic, no ``pathlib``.

``status`` (:func:`prompt_runner.api_status.packet_prompt_ids`) and ``watch``
(:mod:`prompt_runner.watch.facts`) describe the packet as it is now, so they
need the ids of the prompts it still holds -- on their start-up paths, where
the YAML parser, the packet model and even ``pathlib`` cost more than the
command (tests/test_cli_startup.py). This module reads each prompt file's
top-level ``id:`` line and the manifest's ``prompt_dir:`` line as text, which
gives YAML's answer while they are plain words (``[A-Za-z0-9_.-]+``, bare or
quoted), as ``packet new`` and ``prompt new`` write them. Where a line is in
any other form only the YAML parse can tell: the readers here say so
(``None``) and the caller loads the packet (:func:`prompt_ids` does that
itself, lazily).

Each file is read by the one rule for a packet's files
(:func:`~prompt_runner.packet.file_read.read_regular`): a named pipe, a device
(a link to ``/dev/zero``), a socket or a file over the size limit is not read
(``None``: the loader then refuses it, naming it), never waited on nor read
without end. A front matter that gives one top-level key twice is left to the
loader too (it refuses the file, naming the key and both lines).

Paths are ``os.path`` text; the only imports are ``os``, the name rules of
:mod:`~prompt_runner.packet.file_names` and the file rule of
:mod:`~prompt_runner.packet.file_read` (``os``, ``stat`` and the error tree:
no ``pathlib``, no ``re`` either: see :func:`plain_value`).
"""

from __future__ import annotations

import os

from ..errors import UserError
from .file_names import PROMPT_SUFFIX, is_checklist_file_name, is_prompt_file_name
from .file_read import read_regular

TYPE_CHECKING = False  # typing costs import time on the status and watch start-ups
if TYPE_CHECKING:
    from collections.abc import Iterable

MANIFEST_NAME = "prompt_runner_packet.md"  # packet.files.MANIFEST_NAME (not on this path)
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_BARE_NOT_TEXT = frozenset({"null", "true", "false", "yes", "no", "on", "off", "y", "n", "~"})


def plain_value(front: list[str], key: str) -> tuple[bool, str | None]:
    """``(sure, value)`` of a top-level ``key: value`` line among the front
    matter lines ``front``: a quoted or bare word (``[A-Za-z0-9_.-]+``) is read
    exactly as YAML reads it; ``(True, None)`` when no line sets ``key``;
    ``(False, None)`` when a line sets it in any other form (a number, a
    block, a flow mapping, twice) -- then only the YAML parse can tell."""
    found: str | None = None
    for line in front:
        if not line.startswith(key) or not line[len(key) :].lstrip(" \t").startswith(":"):
            continue  # another key (``id_x:``), an indented one, a comment
        word = _word_after_colon(line[len(key) :])
        if word is None or found is not None:
            return False, None
        quoted, value = word
        if not quoted and (value.lower() in _BARE_NOT_TEXT or value[0] in "0123456789+-."):
            return False, None  # YAML reads it as a number, a bool or null
        found = value
    return True, found


def _word_after_colon(rest: str) -> tuple[bool, str] | None:
    """``(quoted, word)`` of the rest of a ``key: value`` line (from its colon)
    when it is ``^:[ \t]*(?:"WORD"|'WORD'|WORD)[ \t]*(?:#.*)?$`` with ``WORD``
    ``[A-Za-z0-9_.-]+``, else ``None``. By hand, not by ``re``: compiling that
    pattern costs a ``watch --once`` more than its whole scan (~0.3 ms)."""
    if not rest.startswith(":"):
        return None
    end = len(rest)
    i = 1
    while i < end and rest[i] in " \t":
        i += 1
    quote = rest[i] if i < end and rest[i] in "\"'" else ""
    start = j = i + len(quote)
    while j < end and rest[j] in _WORD_CHARS:
        j += 1
    if j == start:
        return None
    word = rest[start:j]
    if quote:
        if j >= end or rest[j] != quote:
            return None
        j += 1
    while j < end and rest[j] in " \t":
        j += 1
    if j < end and rest[j] != "#":
        return None
    return bool(quote), word


def front_lines(path: str) -> list[str] | None:
    """The front matter lines of the file ``path`` (between its ``---`` lines),
    or ``None`` when it has none or cannot be read as UTF-8 text -- also when it
    is not a regular file or is too large, which is refused before any read
    (:func:`~prompt_runner.packet.file_read.read_regular`: a named pipe would
    block the read forever, ``/dev/zero`` never end it)."""
    try:
        text = read_regular(path).decode("utf-8")
    except (UserError, UnicodeDecodeError):
        return None
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].rstrip() in ("---", "..."):
            return lines[1:index]
    return None


def prompt_dir_text(root: str | os.PathLike[str]) -> str | None:
    """The prompt directory of the packet at ``root`` (the manifest's
    ``prompt_dir``, default ``prompts``), as text, read without YAML; ``None``
    when the manifest cannot be read so (no front matter, a ``prompt_dir``
    that is not a plain word)."""
    manifest = front_lines(os.path.join(root, MANIFEST_NAME))
    if manifest is None:
        return None
    sure, prompt_dir = plain_value(manifest, "prompt_dir")
    return os.path.join(root, prompt_dir or "prompts") if sure else None


def prompt_file_names(directory: str) -> list[str] | None:
    """The prompt files' names in the prompt directory ``directory`` (checklists
    and hidden files left out:
    :func:`~prompt_runner.packet.file_names.is_prompt_file_name`), sorted; ``[]`` when
    it does not exist, ``None`` when it cannot be listed or a prompt file or
    checklist in it is a symlink that cannot be followed -- a packet that does
    not load, whose loader says which file
    (:func:`prompt_runner.packet.files.link_error`; any other name is never
    looked at). Only symlinks are stat'ed (the directory entry's type tells
    them), so a directory of regular files costs its listing alone."""
    try:
        with os.scandir(directory) as entries:
            found = [(entry.name, entry.is_symlink() and entry.path) for entry in entries]
    except FileNotFoundError:
        return []
    except OSError:
        return None
    names = []
    for name, link in found:
        prompt = is_prompt_file_name(name)
        if link and (prompt or is_checklist_file_name(name)) and not _followed(link, prompt):
            return None
        if prompt:
            names.append(name)
    return sorted(names)


def _followed(link: str, prompt: bool) -> bool:
    """Whether the symlink ``link`` leads to something, as the loader judges a
    prompt file's (``prompt``) or a checklist's: a checklist's may lead to a
    file not made yet (``checklist sync`` writes through it), never loop."""
    try:
        os.stat(link)
    except (FileNotFoundError, NotADirectoryError):
        return not prompt
    except OSError:  # it loops, or a directory on its way cannot be searched
        return False
    return True


def file_prompt_id(path: str) -> tuple[bool, str | None]:
    """``(sure, id)`` of the prompt file ``path``: its top-level ``id:`` as
    :func:`plain_value` reads it; ``(False, None)`` when the file has no
    readable front matter or its ``id:`` is not a plain word."""
    front = front_lines(path)
    if front is None:
        return False, None
    return plain_value(front, "id")


def repeats_a_key(front: list[str]) -> bool:
    """Whether the front matter lines ``front`` may give one top-level key twice
    (``name: a`` and ``name: b``, bare or quoted): YAML would keep the last
    one, the loader refuses the file naming the key and both lines. A line that
    only looks like a key (in a quoted scalar spread over lines) may make it
    ``True`` where YAML sees none; then the loader, which is asked, says so."""
    seen: set[str] = set()
    for line in front:
        if not line or line[0] in " \t#-":
            continue  # nested, a comment, a list item or a marker: no top-level key
        colon = line.find(":")
        end = len(line) - 1
        while colon != -1 and colon < end and line[colon + 1] not in " \t":
            colon = line.find(":", colon + 1)  # ``a:b`` is a word, not a key and a value
        if colon <= 0:
            continue
        key = line[:colon].rstrip(" \t")
        if len(key) > 1 and key[0] == key[-1] and key[0] in "\"'":
            key = key[1:-1]
        if key in seen:
            return True
        seen.add(key)
    return False


def scanned_ids(root: str | os.PathLike[str]) -> list[str] | None:
    """The ids of the packet's prompt files read without YAML (each file's
    top-level ``id:`` line, in the manifest's ``prompt_dir``), in file name
    order, or ``None`` when one of them (or the manifest's ``prompt_dir``) is
    not a plain word, the directory cannot be listed, or the manifest or a
    prompt file cannot be read as text (:func:`front_lines`) or may give a
    top-level key twice (:func:`repeats_a_key`)."""
    manifest = front_lines(os.path.join(root, MANIFEST_NAME))
    if manifest is None or repeats_a_key(manifest):
        return None
    sure, prompt_dir = plain_value(manifest, "prompt_dir")
    if not sure:
        return None
    directory = os.path.join(root, prompt_dir or "prompts")
    names = prompt_file_names(directory)
    if names is None:
        return None
    ids: list[str] = []
    for name in names:
        front = front_lines(os.path.join(directory, name))
        if front is None or repeats_a_key(front):
            return None
        sure, prompt_id = plain_value(front, "id")
        if not sure or prompt_id is None:
            return None
        ids.append(prompt_id)
    return ids


def prompt_ids(root: str | os.PathLike[str]) -> set[str] | None:
    """The ids of the prompts the packet at ``root`` holds now, or ``None`` when
    they cannot be known (the packet does not load): :func:`packet_ids`' ids.
    Never raises for an invalid packet (``None``).
    """
    return packet_ids(root)[0]


def packet_ids(root: str | os.PathLike[str]) -> tuple[set[str] | None, str | None]:
    """``(ids, error)``: the ids of the prompts the packet at ``root`` holds now,
    or ``(None, sentence)`` when they cannot be known because the packet does
    not load -- ``sentence`` the loader's own (``PKT/prompts/02_p.prompt.md: id:
    duplicate prompt id '01' (also in ...); give every prompt a unique id.``).

    Read by :func:`scanned_ids` while every ``id:`` (and ``prompt_dir:``) is a
    plain word and no two prompt files give the same one; otherwise the packet
    is loaded (``load_packet``: YAML, the model and ``pathlib`` are imported
    then, and only then). The text reads only the manifest's ``prompt_dir:``,
    so the rest of it is judged by the loader's steps, whose verdict "it
    loads" is kept for its text (:func:`~.manifest_check.manifest_error`): an
    unknown ``provider:`` or YAML that does not parse is a packet that does
    not load too. Two files giving one id is a packet that does not
    load, whose ids nobody can tell (which file is that prompt?), so no record
    is ever taken for a removed prompt's on a set that lost one; so is a packet
    with no prompt file (no ``prompts/`` directory, or an empty one), as ``run``
    says, where every record would read removed.
    Never raises for an invalid packet.
    """
    scanned = scanned_ids(root)
    if scanned:  # none at all: the loader says why (no prompts/ directory, ...)
        ids = set(scanned)
        if len(ids) == len(scanned):
            # the text read only prompt_dir: of the manifest; whether the rest
            # loads is the loader's to say (a kept verdict: packet/manifest_check.py)
            from .manifest_check import manifest_error

            error = manifest_error(root)
            return (ids, None) if error is None else (None, error)
    # lazy: only a packet whose front matter the scan cannot read (or whose
    # prompt files repeat an id: the loader's sentence says which) pays for YAML
    from pathlib import Path

    from ..errors import PromptRunnerError
    from .loader import load_packet

    try:
        loaded = load_packet(Path(root))
        loaded.require_prompts()  # a packet of no prompt: every record would read removed
        return set(loaded.ids()), None
    except (PromptRunnerError, OSError) as exc:
        return None, str(exc)


def holds_named(root: str | os.PathLike[str], candidates: Iterable[str]) -> str | None:
    """The first of ``candidates`` (prompt ids, best first) that is surely a
    prompt of the packet at ``root`` judged by the files named for it alone, else
    ``None`` (which proves nothing: ask :func:`prompt_ids`).

    A prompt file is named ``<id>_<slug>.prompt.md`` by ``prompt new`` (or
    ``<id>.prompt.md``, ``<id>-<slug>.prompt.md``); a file so named whose
    plain ``id:`` line is the id shows that the packet holds it. Reading those
    few files costs a listing of the prompt directory and a file or two, not
    every prompt's front matter.
    """
    directory = prompt_dir_text(root)
    names = prompt_file_names(directory) if directory is not None else None
    if directory is None or not names:
        return None
    for prompt_id in candidates:
        for name in names:
            rest = name[len(prompt_id) :] if name.startswith(prompt_id) else ""
            if rest != PROMPT_SUFFIX and rest[:1] not in ("_", "-"):
                continue
            if file_prompt_id(os.path.join(directory, name)) == (True, prompt_id):
                return prompt_id
    return None
