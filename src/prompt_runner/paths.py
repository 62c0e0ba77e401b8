"""Light path helpers for the CLI hot paths (no pydantic, no YAML).

:func:`packet_root` and the others return ``pathlib`` paths; their text forms
(:func:`packet_dir`, :func:`pure_text`, :func:`expanded_text`,
:func:`resolved_text`, :func:`stat_kind`) compute the
same paths as ``os.path`` text without importing ``pathlib`` (with
``urllib.parse`` and ``ipaddress``, ~5 ms of ``watch --once``'s start-up),
and ``tests/test_paths_text.py`` holds each to its ``pathlib`` twin. This
module imports ``pathlib`` and the state layout only in the functions that
return them.
"""

from __future__ import annotations

import errno
import os

from .errors import UserError
from .state.layout_text import STATE_DIR

TYPE_CHECKING = False  # pathlib costs ~5 ms of watch --once's start-up (its text path)
if TYPE_CHECKING:
    from pathlib import Path

    from .state.layout import StateLayout

__all__ = [
    "MANIFEST_NAME",
    "STATE_DIR",
    "expanded_text",
    "layout_of",
    "manifest_fault",
    "packet_dir",
    "packet_root",
    "pure_text",
    "resolved_text",
    "stat_kind",
    "state_root",
]

MANIFEST_NAME = "prompt_runner_packet.md"


def packet_root(path: str | Path, *, faulty_manifest: bool = False) -> Path:
    """The packet directory for ``path`` (the dir or its manifest file).

    Args:
        path: the packet directory, or its manifest.
        faulty_manifest: accept a directory whose manifest exists but is not a
            regular file (a named pipe, a directory, a link to ``/dev/zero``, a
            link to nothing): ``status`` shows the recorded state of such a
            packet, and the loader names the fault. Default: refuse it, naming
            the manifest (:func:`manifest_fault`).

    Raises:
        UserError: ``path`` is not a packet directory, or its manifest is not a
            regular file (unless ``faulty_manifest``).
    """
    from pathlib import Path  # lazy: the text forms (watch --once) load no pathlib

    candidate = Path(path).expanduser()
    if candidate.name == MANIFEST_NAME and _names_the_manifest(os.fspath(candidate)):
        candidate = candidate.parent
    if not candidate.is_dir():
        raise UserError("is not a directory", file=candidate, fix="pass the packet directory")
    manifest = candidate / MANIFEST_NAME
    if not manifest.is_file():
        fault = manifest_fault(os.fspath(manifest))
        if fault is None:
            raise _not_a_packet(candidate)
        if not faulty_manifest:
            raise fault
    return candidate.resolve()


def manifest_fault(manifest: str) -> UserError | None:
    """The error naming the packet manifest ``manifest`` when it exists (a
    symlink to nothing counts) but is not a regular file or a link to one --
    the sentence every packet file gets
    (:func:`~prompt_runner.file_kinds.not_regular_error`: ``is not a
    regular file (a named pipe); replace it with a regular file`` -- removing
    a manifest is no fix); ``None`` when nothing is there (then the directory
    is no packet).
    Told from ``stat``: a named pipe is never opened."""
    # lazy: only a packet whose manifest is not a regular file gets here
    from .file_kinds import not_regular_error

    return not_regular_error(manifest, not_file_fix="replace it with a regular file")


def _names_the_manifest(candidate: str) -> bool:
    """Whether ``candidate``, a path whose last part is :data:`MANIFEST_NAME`,
    is the manifest of the directory above it: a regular file, or something
    else there (a named pipe, a link to nothing) -- a directory so named only
    when it holds no manifest itself (then it is that packet's faulty one)."""
    kind = stat_kind(candidate)
    if kind == "dir":
        return not os.path.lexists(os.path.join(candidate, MANIFEST_NAME))
    return kind == "file" or os.path.lexists(candidate)


def _not_a_packet(candidate: str | Path) -> UserError:
    return UserError(
        f"is not a packet (no {MANIFEST_NAME})",
        file=candidate,
        fix="pass a packet directory, or create one with `prompt-runner packet new`",
    )


def state_root(path: str | Path) -> Path:
    """``<packet>/.prompt_runner`` for the packet at ``path`` (not created).

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    return layout_of(path).root


def layout_of(path: str | Path) -> StateLayout:
    """The :class:`~prompt_runner.state.layout.StateLayout` of the packet at ``path``.

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    from .state.layout import StateLayout  # lazy: it builds pathlib paths

    return StateLayout.of_packet(packet_root(path))


# --------------------------------------------------------------------------- as text

_POSIX = os.name == "posix"
_NOT_THERE = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)  # what pathlib ignores


def pure_text(path: str) -> str:
    """``str(PurePosixPath(path))``: repeated and trailing ``/`` and ``.``
    components dropped, ``..`` kept, a leading ``//`` kept (POSIX gives it a
    meaning of its own), ``"."`` for nothing."""
    if path[:1] == "/":
        rel = path.lstrip("/")
        root = "//" if len(path) - len(rel) == 2 else "/"
    else:
        root, rel = "", path
    parts = [part for part in rel.split("/") if part and part != "."]
    return root + "/".join(parts) if (root or parts) else "."


def expanded_text(pure: str) -> str:
    """``str(Path(pure).expanduser())`` of a :func:`pure_text` path.

    Raises:
        RuntimeError: as ``pathlib`` does, when the home directory of ``~`` or
            ``~user`` cannot be determined.
    """
    if pure[:1] != "~":
        return pure
    first, _, rest = pure.partition("/")
    home = os.path.expanduser(first)
    if home[:1] == "~":
        raise RuntimeError("Could not determine home directory.")
    return pure_text(os.path.join(home, rest) if rest else home)


def stat_kind(path: str) -> str | None:
    """``"dir"``, ``"file"`` or ``"other"`` for what ``path`` names (symlinks
    followed), ``None`` where it names nothing -- ``Path.is_dir``,
    ``is_file`` and ``exists`` in one ``stat``: ``ENOENT``, ``ENOTDIR``,
    ``EBADF``, ``ELOOP`` and an unencodable path read as nothing, and any
    other ``OSError`` (``EACCES``) is raised, as ``pathlib`` raises it."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        if exc.errno in _NOT_THERE:
            return None
        raise
    except ValueError:
        return None
    kind = mode & 0o170000
    return "dir" if kind == 0o040000 else "file" if kind == 0o100000 else "other"


def resolved_text(path: str) -> str:
    """``str(Path(path).resolve())`` of a :func:`pure_text` path:
    ``os.path.realpath``, and the ``RuntimeError`` ``pathlib`` raises for a
    symlink loop."""
    resolved = os.path.realpath(path)
    try:
        os.stat(resolved)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RuntimeError(f"Symlink loop from {exc.filename!r}") from None
    return resolved


def packet_dir(path: str | os.PathLike[str], *, faulty_manifest: bool = False) -> str:
    """``str(packet_root(path))``, computed without ``pathlib``: the packet
    directory of ``path`` (the directory or its manifest file), absolute with
    symlinks resolved.

    Raises:
        UserError: ``path`` is not a packet directory, or its manifest is not
            a regular file (the same sentences as :func:`packet_root`'s).
    """
    text = os.fspath(path)
    if not _POSIX:  # pragma: no cover - Windows: pathlib's own rules
        return str(packet_root(text, faulty_manifest=faulty_manifest))
    candidate = expanded_text(pure_text(text))
    if os.path.basename(candidate) == MANIFEST_NAME and _names_the_manifest(candidate):
        candidate = os.path.dirname(candidate) or "."
    if stat_kind(candidate) != "dir":
        raise UserError("is not a directory", file=candidate, fix="pass the packet directory")
    manifest = os.path.join(candidate, MANIFEST_NAME)
    if stat_kind(manifest) != "file":
        fault = manifest_fault(manifest)
        if fault is None:
            raise _not_a_packet(candidate)
        if not faulty_manifest:
            raise fault
    return resolved_text(candidate)


def repo_path_error(manifest: object, name: str, path_text: str, exc: Exception) -> UserError:
    """The bad-input error of a repo ``path`` that cannot be made absolute: a
    ``~user`` whose home is unknown, a symlink loop (``pathlib`` and the text
    forms above raise ``RuntimeError`` for both, ``OSError`` for the rest).

    Args:
        manifest: the manifest file (a path, shown as the error's file).
        name: the repo's name; ``path_text`` its ``path`` as written.
        exc: what resolving it raised.
    """
    return UserError(
        f"{path_text!r} cannot be resolved ({exc})",
        file=manifest,  # type: ignore[arg-type]
        key=f"repos.{name}.path",
        fix="give the repo's work tree directory (absolute, or relative to the packet)",
    )
