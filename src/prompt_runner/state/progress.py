"""``progress.log``: the append-only prompt status log that resume reads (catalog 0.3).

One line per status change::

    ID:STATUS:ISO8601[:SUFFIX]
    01:completed:2025-01-02T03:04:05Z:3f786850e387550fdab836ed7e6dc881de23001b
    02:completed:2025-01-02T03:09:12Z:app=3f78...001b,docs=89e6...1f0c
    03:failed:2025-01-02T03:11:40Z
    04:completed:2025-01-02T03:12:02Z:no_changes

* ``ID`` -- the prompt id; it may not contain ``:`` (nor whitespace), which keeps
  the line unambiguous.
* ``STATUS`` -- a prompt status word (``[a-z0-9_]+``).
* ``ISO8601`` -- UTC, ``YYYY-MM-DDTHH:MM:SS[.fff]Z``; a ``+HH:MM`` offset is also
  read. Its colons are why the line is not simply split on ``:``.
* ``SUFFIX`` -- a 40-hex commit sha (one repo), ``repo=sha,repo=sha`` (several),
  or one of ``no_changes``, ``no_commit``, ``noop``, ``no_session``.

The last line per id wins. The file is a record of truth: a line that does not
parse raises :class:`~prompt_runner.errors.StateError` naming the file, line and
fix. The one exception is a torn final line without ``\\n`` (a writer killed
mid-append): readers ignore it, and it is moved aside to
``progress.log.torn.<stamp>`` by the next append (or by ``read_progress(...,
repair=True)``, for a caller holding the run lock).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from prompt_runner.errors import StateError
from prompt_runner.state._clock import iso_format, iso_now
from prompt_runner.state.lines import LineAppender, read_complete_lines, repair_torn_tail

SUFFIX_WORDS = frozenset({"no_changes", "no_commit", "noop", "no_session"})
"""The non-sha suffixes a progress line may carry."""

_ID = r"[^:\s]+"
_STATUS = r"[a-z0-9_]+"
_TIME = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})"
_SUFFIX = r"[^\s:]+"
_LINE = re.compile(rf"({_ID}):({_STATUS}):({_TIME})(?::({_SUFFIX}))?")
_SHA = r"[0-9a-f]{40}|[0-9a-f]{64}"
_SUFFIX_OK = re.compile(rf"(?:{_SHA})|[^\s:=,]+=(?:{_SHA})(?:,[^\s:=,]+=(?:{_SHA}))*")
_FIX = (
    "restore the line from a backup, or delete it (that prompt then counts as not completed "
    "and --remaining runs it again)"
)


@dataclass(frozen=True)
class ProgressRecord:
    """One parsed ``progress.log`` line.

    Attributes:
        prompt_id: the prompt id (no ``:``).
        status: the status word.
        at: the ISO 8601 UTC timestamp exactly as written.
        suffix: the sha / ``repo=sha,...`` / word suffix, or ``None``.
    """

    prompt_id: str
    status: str
    at: str
    suffix: str | None = None

    def render(self) -> str:
        """The line for this record, with its trailing newline."""
        tail = f":{self.suffix}" if self.suffix else ""
        return f"{self.prompt_id}:{self.status}:{self.at}{tail}\n"


def parse_progress_line(line: str) -> ProgressRecord | None:
    """Parse one line (without its newline); ``None`` if it is not ``ID:STATUS:ISO[:SUFFIX]``."""
    match = _LINE.fullmatch(line.strip())
    if match is None:
        return None
    prompt_id, status, at, suffix = match.groups()
    return ProgressRecord(prompt_id, status, at, suffix)


def make_progress_record(
    prompt_id: str,
    status: str,
    suffix: str | None = None,
    *,
    at: datetime | str | None = None,
) -> ProgressRecord:
    """Validate the parts of a progress line and return its record.

    Args:
        prompt_id: the prompt id; no ``:`` and no whitespace.
        status: a status word, ``[a-z0-9_]+``.
        suffix: ``None``, a 40- (or 64-) hex sha, ``repo=sha,...`` or one of
            :data:`SUFFIX_WORDS`.
        at: when; a ``datetime`` (naive = UTC), an ISO 8601 string, or ``None`` = now.

    Raises:
        ValueError: a part would make the line unparseable or ambiguous.
    """
    stamp = iso_now() if at is None else at if isinstance(at, str) else iso_format(at)
    if suffix is not None and suffix not in SUFFIX_WORDS and not _SUFFIX_OK.fullmatch(suffix):
        raise ValueError(f"progress suffix {suffix!r} is not a sha, repo=sha list or known word")
    record = ProgressRecord(prompt_id, status, stamp, suffix)
    if parse_progress_line(record.render()) != record:
        raise ValueError(f"progress line would not parse back: {record.render()!r}")
    return record


def append_progress(
    path: Path,
    prompt_id: str,
    status: str,
    suffix: str | None = None,
    *,
    at: datetime | str | None = None,
) -> ProgressRecord:
    """Append one status line to the ``progress.log`` at ``path`` and fsync it.

    A torn final line left by a killed writer is moved aside first (see module
    doc). Arguments as in :func:`make_progress_record`. Returns the record written.

    Raises:
        ValueError: invalid parts (nothing is written).
        OSError: the append failed.
    """
    record = make_progress_record(prompt_id, status, suffix, at=at)
    with LineAppender(path) as appender:
        appender.append_line(record.render().encode("utf-8"))
    return record


def read_progress(path: Path, *, repair: bool = False) -> dict[str, ProgressRecord]:
    """Return the latest record per prompt id from ``path``, in first-seen id order.

    A missing file yields ``{}``; blank lines are ignored; a torn final line is
    ignored, or moved aside when ``repair`` is true.

    Args:
        repair: move a torn final line aside; only for a caller holding the run
            lock, since a live writer might be mid-append.

    Raises:
        StateError: a complete line does not parse; names the file, the line
            number and the fix.
    """
    if repair:
        repair_torn_tail(path)
    lines, _torn = read_complete_lines(path)
    return parse_progress_lines(path, lines)


def parse_progress_lines(
    path: Path, lines: list[bytes], *, first: int = 1
) -> dict[str, ProgressRecord]:
    """:func:`read_progress`'s parse of the complete ``lines`` (without ``\\n``)
    of ``path``, the first of them line ``first`` of the file: the latest record
    per id among them (a bounded watch checks each appended line once so).

    Raises:
        StateError: a line does not parse, as :func:`read_progress` says it.
    """
    latest: dict[str, ProgressRecord] = {}
    for number, raw in enumerate(lines, start=first):
        text = raw.decode("utf-8", errors="replace")
        if not text.strip():
            continue
        record = parse_progress_line(text)
        if record is None:
            raise StateError(
                f"line {number} is not ID:STATUS:ISO8601[:SUFFIX] ({text[:80]!r})",
                file=path,
                fix=_FIX,
            )
        latest[record.prompt_id] = record
    return latest
