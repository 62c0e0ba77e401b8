"""A command's output: streamed through the assertions, kept as head and tail.

:class:`CommandOutput` is the sink :func:`prompt_runner.proc.run` streams a
verify command's stdout and stderr into, so output of any size is judged
whole in bounded memory:

* ``stdout_contains`` literals are looked for in a rolling window (each chunk
  plus the end of the one before it), so a literal split across two reads is
  still found and nothing else is kept;
* ``stdout_matches`` regexes may span lines, so they need the whole stdout:
  it is kept only when the entry has one, up to :data:`REGEX_TEXT_CAP_BYTES`;
  more is a ``verifier_fault`` naming the cap (never a silent cut);
* for the report, each stream keeps its first and last :data:`WINDOW_CHARS`
  characters: the item's ``output`` shows its first :data:`HEAD_LINES` and
  last :data:`TAIL_LINES` lines, with a marker saying what was left out, and
  ``last output:`` is the real last line.
"""

from __future__ import annotations

import codecs
from collections.abc import Sequence

HEAD_LINES = 40
TAIL_LINES = 120
MAX_CHARS = 16_000
WINDOW_CHARS = 64 * 1024
"""Characters kept from the start and from the end of each stream."""
REGEX_TEXT_CAP_BYTES = 32 * 1024 * 1024
"""The most stdout (32 MiB) kept whole for ``stdout_matches``; more is a verifier fault."""


def cap_output(
    text: str,
    *,
    head_lines: int = HEAD_LINES,
    tail_lines: int = TAIL_LINES,
    max_chars: int = MAX_CHARS,
) -> str:
    """Keep the first ``head_lines`` and last ``tail_lines`` lines of ``text``.

    Dropped lines are replaced by one line ``[truncated: N more lines]``; if the
    result is still longer than ``max_chars`` characters its middle is cut and
    marked ``[truncated: N more characters]``. Text within the limits is
    returned unchanged.
    """
    lines = text.splitlines()
    if len(lines) > head_lines + tail_lines:
        dropped = len(lines) - head_lines - tail_lines
        kept = [*lines[:head_lines], f"[truncated: {dropped} more lines]"]
        kept += lines[len(lines) - tail_lines :] if tail_lines else []
        text = "\n".join(kept)
    return _cut_chars(text, max_chars)


def _cut_chars(text: str, max_chars: int) -> str:
    if len(text) > max_chars:
        half = max_chars // 2
        dropped_chars = len(text) - 2 * half
        text = f"{text[:half]}\n[truncated: {dropped_chars} more characters]\n{text[-half:]}"
    return text


def combined(stdout: str, stderr: str) -> str:
    """stdout, then stderr under a ``[stderr]`` line when both are present."""
    if stdout and stderr:
        return f"{stdout.rstrip()}\n[stderr]\n{stderr.rstrip()}"
    return (stdout or stderr).rstrip()


class _Stream:
    """One pipe: decoded incrementally; its head, tail and size kept."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.bytes = 0
        self.chars = 0
        self.newlines = 0
        self.head = ""
        self.tail = ""

    def feed(self, data: bytes, final: bool = False) -> str:
        self.bytes += len(data)
        text = self._decoder.decode(data, final)
        if text:
            self.chars += len(text)
            self.newlines += text.count("\n")
            if len(self.head) < WINDOW_CHARS:
                self.head += text[: WINDOW_CHARS - len(self.head)]
            self.tail = (self.tail + text)[-WINDOW_CHARS:]
        return text

    @property
    def whole(self) -> bool:
        """Nothing was left out: :attr:`head` is the entire text."""
        return self.chars <= WINDOW_CHARS

    def lines(self) -> int:
        """Lines printed (a last line without a newline counts)."""
        ends_open = bool(self.tail) and not self.tail.endswith("\n")
        return self.newlines + (1 if ends_open else 0)

    def text(self) -> str:
        """The whole text if kept, else head, a marker and tail (line-capped)."""
        if self.whole:
            return self.head
        head = self.head.split("\n")[:HEAD_LINES]
        tail = self.tail.split("\n")[1:]  # the first piece may be a partial line
        if tail and tail[-1] == "":
            tail.pop()
        tail = tail[-TAIL_LINES:]
        dropped = max(0, self.lines() - len(head) - len(tail))
        marker = f"[truncated: {dropped} more lines ({self.bytes} bytes in all)]"
        return "\n".join([*head, marker, *tail])

    def last_line(self) -> str:
        lines = [ln for ln in self.tail.splitlines() if ln.strip()]
        return lines[-1].strip()[:300] if lines else ""


class CommandOutput:
    """The sink of one verify command's output (see the module notes).

    Args:
        contains: the ``stdout_contains`` literals.
        keep_stdout: keep the whole stdout (the entry has ``stdout_matches``).
    """

    def __init__(self, contains: Sequence[str] = (), *, keep_stdout: bool = False) -> None:
        self.stdout = _Stream()
        self.stderr = _Stream()
        self._pending = [s for s in dict.fromkeys(contains) if s]  # "" is in every text
        self._found: set[str] = {s for s in contains if not s}
        self._carry = ""
        self._span = max((len(s) for s in self._pending), default=1) - 1
        self._whole: list[str] | None = [] if keep_stdout else None
        self.over_cap = False

    def __call__(self, stream: str, data: bytes) -> None:
        """Take one chunk of ``stream`` (``"stdout"`` or ``"stderr"``)."""
        if stream == "stderr":
            self.stderr.feed(data)
        else:
            self._stdout_text(self.stdout.feed(data))

    def close(self) -> None:
        """Flush the decoders (a trailing partial UTF-8 sequence)."""
        self._stdout_text(self.stdout.feed(b"", final=True))
        self.stderr.feed(b"", final=True)

    def _stdout_text(self, text: str) -> None:
        if not text:
            return
        if self._pending:
            window = self._carry + text
            found = [s for s in self._pending if s in window]
            if found:
                self._found.update(found)
                self._pending = [s for s in self._pending if s not in self._found]
            self._carry = window[-self._span :] if self._span else ""
        if self._whole is not None:
            if self.stdout.bytes > REGEX_TEXT_CAP_BYTES:
                self._whole, self.over_cap = None, True
            else:
                self._whole.append(text)

    def contains(self, literal: str) -> bool:
        """Whether stdout contained ``literal`` anywhere."""
        return literal in self._found

    def whole_stdout(self) -> str | None:
        """The entire stdout (only when kept and under the cap), else ``None``."""
        return "".join(self._whole) if self._whole is not None else None

    @property
    def truncated(self) -> bool:
        """The report's output left something out (a stream was larger than the window)."""
        return not (self.stdout.whole and self.stderr.whole)

    def report(self) -> str:
        """The item's ``output``: like :func:`cap_output` of the combined text."""
        if not self.truncated:
            return cap_output(combined(self.stdout.head, self.stderr.head))
        views = [s.text().rstrip() for s in (self.stdout, self.stderr) if s.chars]
        return _cut_chars("\n[stderr]\n".join(views), MAX_CHARS)

    def last_line(self) -> str:
        """The last non-empty line printed: stderr's when it printed any, else stdout's."""
        return self.stderr.last_line() or self.stdout.last_line()

    def stdout_head(self, lines: int) -> str:
        """stdout's first ``lines`` lines (stripped), with a marker for the rest."""
        if self.stdout.whole:
            text = self.stdout.head.strip()
            return cap_output(text, head_lines=lines, tail_lines=0) if text else ""
        head = self.stdout.head.strip().split("\n")[:lines]
        return "\n".join([*head, f"[truncated: {self.stdout.lines() - len(head)} more lines]"])

    def size_note(self) -> str:
        """``" (output truncated: N bytes, L lines; ...)"`` when truncated, else ``""``."""
        if not self.truncated:
            return ""
        total = self.stdout.bytes + self.stderr.bytes
        lines = self.stdout.lines() + self.stderr.lines()
        return (
            f" (output truncated: {total} bytes, {lines} lines; the report keeps the first "
            f"{HEAD_LINES} and last {TAIL_LINES} lines of each stream)"
        )
