"""A packet's files by name: the manifest, prompt files, checklists, and how
messages name a file (relative to the packet, or to the current directory)."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Callable
from pathlib import Path

from ..errors import UserError, shown_base, shown_path
from ..paths import packet_root
from .file_names import CHECKLIST_SUFFIX as CHECKLIST_SUFFIX
from .file_names import PROMPT_SUFFIX as PROMPT_SUFFIX
from .file_names import is_checklist_file_name as is_checklist_file_name
from .file_names import is_prompt_file_name as is_prompt_file_name
from .models import Manifest

MANIFEST_NAME = "prompt_runner_packet.md"
_PREFIX = re.compile(r"^(\d+)")


def find_packet_root(path: Path | str) -> Path:
    """Return the packet directory for ``path`` (the dir or its manifest file).

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    return packet_root(path)


def prompt_order(file: Path) -> int | None:
    """The numeric prefix of a prompt file name, or ``None``."""
    match = _PREFIX.match(file.name)
    return int(match.group(1)) if match else None


def display_path(file: Path) -> str:
    """``file`` as messages name it (:func:`~prompt_runner.errors.shown_path`):
    relative to the current directory when under it, else absolute."""
    return shown_path(file.absolute())


def display_in(directory: Path) -> Callable[[str], str]:
    """``name -> display_path(directory / name)`` for the files of one directory,
    with the directory's part worked out once (a packet's 5,000 prompt files
    each paid for ``os.path.relpath``).

    ``directory`` is absolute; ``name`` a plain file name (no ``/``, not
    ``.`` or ``..``), as a directory listing gives it.
    """
    base = os.fspath(directory)
    try:
        shown = os.path.relpath(base, shown_base())  # as shown_path: a started runner's starter
    except (OSError, ValueError):  # no current directory: every name absolute
        shown = os.pardir
    if shown == os.pardir or shown.startswith(os.pardir + os.sep):
        head = base.rstrip(os.sep) + os.sep  # not under the current directory
    elif shown == os.curdir:
        head = ""
    else:
        head = shown + os.sep
    return lambda name: head + name


def relative_file(file: Path, root: Path | None = None) -> str:
    """``file`` relative to the packet directory ``root``, ``/``-separated.

    Without ``root`` the packet directory is found above ``file`` (the first
    parent holding :data:`MANIFEST_NAME`); a file outside any packet is named
    as given.
    """
    if root is None:
        root = next((p for p in file.parents if (p / MANIFEST_NAME).is_file()), None)
        if root is None:
            return str(file)
    text, base = str(file), str(root)
    if base != "/" and text.startswith(base + "/") and os.sep == "/":
        return text[len(base) + 1 :]  # what relative_to gives a file below root, cheaply
    try:
        return file.relative_to(root).as_posix()
    except ValueError:
        return str(file)


def packet_prompt_dir(root: Path, manifest: Manifest) -> Path:
    """The prompt directory of the packet at ``root``: ``prompt_dir`` or ``prompts``."""
    return root / (manifest.prompt_dir or "prompts")


def _looks_like_prompt(name: str) -> bool:
    lower = name.lower()
    if name.endswith((PROMPT_SUFFIX, CHECKLIST_SUFFIX)) or name.startswith("."):
        return False
    return lower.endswith((".md", ".markdown")) or ".prompt" in lower or bool(_PREFIX.match(name))


def ignored_markdown(prompt_dir: Path) -> tuple[Path, ...]:
    """Files in ``prompt_dir`` that look meant as prompts but are not loaded, sorted.

    Prompt files must end exactly in ``.prompt.md``; this lists other markdown
    files and near misses (``.prompt.MD``, ``.prompt``, ``.prompt.markdown``,
    ``NN_x.txt``) so a typo is reported instead of silently skipped. A prompt
    file or checklist that is a broken symlink is not reported here (see
    :func:`link_errors`).

    Raises:
        UserError: ``prompt_dir`` is a directory that cannot be listed.
    """
    return tuple(prompt_dir / name for name in ignored_names(entries_of(prompt_dir)))


Listing = tuple[tuple[str, str], ...]
"""A directory's entries as ``(name, kind)``, sorted by name (see :func:`listing`)."""


def listing(directory: Path) -> Listing:
    """Every entry of ``directory`` as ``(name, kind)``, sorted by name; ``kind`` is
    ``d`` (a directory), ``f`` (a file) or ``o`` (anything else: a symlink that
    dangles or loops, a named pipe), symlinks followed; ``()`` when it is not a
    directory (missing, a file, a symlink loop).

    An entry whose name is not a prompt file's or a checklist's is never an
    error, whatever it is (a looping symlink ``notes.txt`` is kind ``o``, like a
    dangling one).

    Raises:
        UserError: ``directory`` is a directory that cannot be listed (no read
            permission): its prompts cannot be known, so it is not read as empty;
            or a prompt file or checklist in it is a symlink that cannot be
            followed (:func:`link_errors`; the first, by name).
    """
    entries = entries_of(directory)
    for error in link_errors(directory, entries):
        raise error
    return entries


def entries_of(directory: Path) -> Listing:
    """:func:`listing` without its check of the prompt files' and checklists'
    symlinks (:func:`link_errors`).

    Raises:
        UserError: ``directory`` is a directory that cannot be listed.
    """
    try:
        with os.scandir(directory) as entries:
            found = [(e.name, _kind(e)) for e in entries]
    except OSError as exc:
        if not os.path.isdir(directory):
            return ()
        raise UserError(
            f"the prompt directory cannot be listed ({exc.strerror or exc})",
            file=shown_path(directory),
            key="prompt_dir",
            fix="give the user running prompt-runner read and search permission on it",
        ) from exc
    return tuple(sorted(found))


def _kind(entry: os.DirEntry[str]) -> str:
    """``d``, ``f`` or ``o`` of one entry, its symlink followed: ``o`` when the
    link cannot be followed (dangling, looping, a directory of it unsearchable)."""
    try:
        if entry.is_dir():
            return "d"
        return "f" if entry.is_file() else "o"
    except OSError:  # ELOOP, EACCES: is_dir() catches only FileNotFoundError itself
        return "o"


def link_errors(directory: Path, entries: Listing) -> list[UserError]:
    """One error per entry of ``directory`` (``entries``, its :func:`entries_of`)
    that is a prompt file (``*.prompt.md``) or a checklist
    (``*.prompt.checklist.md``) and a symlink that cannot be followed, in name
    order (:func:`link_error`). Only kind ``o`` entries are looked at (a stat
    each), so a directory of regular files costs nothing more."""
    found = (link_error(directory, name) for name, kind in entries if kind == "o")
    return [error for error in found if error is not None]


def link_error(directory: Path, name: str) -> UserError | None:
    """The error of the entry ``name`` of ``directory`` when it is a prompt file or
    a checklist and a symlink that cannot be followed, else ``None``.

    A prompt file's link that loops, leads to nothing, or cannot be followed (a
    directory on its way unsearchable) is an error: the packet's prompts cannot
    be known. A checklist's link is one only when it loops or cannot be
    followed: one to a file that does not exist yet is ``checklist sync``'s to
    write through (a checklist kept elsewhere in the packet). Any other name is
    never an error (``None``), a hidden one (``.#01_a.prompt.md``) neither.

    Returns:
        A :class:`~prompt_runner.errors.UserError` naming the link (as messages
        name files, :func:`display_in`), its target and the fix; or ``None``.
    """
    prompt = is_prompt_file_name(name)
    if not prompt and not is_checklist_file_name(name):
        return None  # hidden ones too: an editor's lock file, a dangling link by design
    path = os.path.join(directory, name)
    try:
        os.stat(path)
        return None
    except (FileNotFoundError, NotADirectoryError):
        if not prompt:
            return None  # a checklist sync writes through (or refuses, out of the packet)
        problem = "which does not exist"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            problem = "which loops (it never reaches a file)"
        else:
            problem = f"which cannot be followed ({exc.strerror or exc})"
    try:
        target = os.readlink(path)
    except OSError:
        return None  # not a symlink (or gone since): reading the file says what it is
    return UserError(
        f"is a symbolic link to {target}, {problem}",
        file=display_in(directory)(name),
        fix="fix the link or remove it",
    )


def prompt_names(entries: Listing) -> list[tuple[str, bool]]:
    """``(name, is a directory)`` of each prompt file's entry
    (:func:`is_prompt_file_name`: ``*.prompt.md``, checklists and hidden files
    left out), in name order: what every command loads, lints and numbers by."""
    return [(name, kind == "d") for name, kind in entries if is_prompt_file_name(name)]


def hidden_prompt_names(entries: Listing) -> list[str]:
    """The hidden files of a listing that look like a prompt someone hid, on
    purpose or not (``.05_x.prompt.md``: a prompt file's name after its dot),
    which are not loaded: what ``packet lint`` warns about. Editors' and
    systems' droppings (``.#01_a.prompt.md``, ``._01_a.prompt.md``: no letter or
    digit after the dot) and anything not a file are left out."""
    return [
        name
        for name, kind in entries
        if kind == "f" and name[:1] == "." and name[1:2].isalnum() and is_prompt_file_name(name[1:])
    ]


def ignored_names(entries: Listing) -> list[str]:
    """The files of a listing :func:`ignored_markdown` reports."""
    return [name for name, kind in entries if kind == "f" and _looks_like_prompt(name)]
