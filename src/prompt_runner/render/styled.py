"""Styled terminal output: Console lines painted by ``rich`` (a terminal, or ``styled=True``).

``rich`` is imported when a styled :class:`Styler` is made, never at module
import: plain output (pipes, files, CI, tests) never loads it.
"""

from __future__ import annotations

from typing import TextIO

from ..providers.events import Event

_KIND_STYLES = {
    "session_started": "dim",
    "assistant_text": "",
    "thinking": "dim italic",
    "tool_use": "cyan",
    "tool_result": "dim",
    "file_change": "yellow",
    "usage": "dim",
    "result": "green",
    "error": "bold red",
    "raw": "dim",
    "steer": "bold magenta",
}

_DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan", "\\": "dim", "…": "dim italic"}

_SAY_STYLES = (("▶ ", "bold cyan"), ("✓ ", "bold green"), ("✗ ", "bold red"), ("■ ", "bold yellow"))


class Styler:
    """Writes Console lines styled by ``rich`` (created only for a styled Console).

    Event lines use rich's own style rendering (ANSI codes for the terminal's
    colour system, ``NO_COLOR`` honoured), computed once per style: printing
    each line through ``rich.console.Console.print`` costs about 0.1 ms, too
    much for a provider streaming thousands of events. In studio mode each
    prompt header (``▶ ...``) is a rich ``Rule``.
    """

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console as RichConsole  # lazy: rich costs ~30 ms to import

        self.stream = stream
        self.rich: RichConsole = RichConsole(
            file=stream,
            force_terminal=True,
            highlight=False,
            markup=False,
            emoji=False,
            soft_wrap=True,
        )
        self._codes: dict[str, tuple[str, str]] = {}

    def codes(self, style: str) -> tuple[str, str]:
        """``(start, end)`` escape sequences of ``style`` on this terminal."""
        found = self._codes.get(style)
        if found is None:
            from rich.console import COLOR_SYSTEMS  # lazy: see __init__
            from rich.style import Style

            parsed = Style.parse(style)
            if self.rich.no_color:
                parsed = parsed.without_color
            system = COLOR_SYSTEMS.get(self.rich.color_system or "")
            start, _, end = parsed.render("\0", color_system=system).partition("\0")
            found = self._codes[style] = (start, end)
        return found

    def paint(self, text: str, style: str) -> str:
        if not style:
            return text
        start, end = self.codes(style)
        return f"{start}{text}{end}"

    def event(self, prompt_id: str, event: Event, line: str) -> None:
        style = _KIND_STYLES.get(event.kind, "")
        data = event.data
        if event.kind == "result" and not data.get("ok"):
            style = "bold red"
        elif event.kind == "tool_result" and data.get("is_error"):
            style = "red"
        elif event.kind == "error" and data.get("fatal") is False:
            style = "yellow"
        elif event.kind == "session_started" and line.startswith("┌ "):
            style = "bold cyan"  # studio's session header
        first, _, rest = line.partition("\n")
        prefix = self.paint(f"  [{prompt_id}]", "dim")
        out = [f"{prefix} {self.paint(first, style)}\n"]
        if rest:
            for text in rest.split("\n"):
                if event.kind in ("tool_result", "error"):  # every line attributed
                    out.append(f"{prefix} {self.paint(text, style)}\n")
                elif event.kind == "file_change":
                    code = text.lstrip(" ")[:1]
                    out.append(self.paint(text, _DIFF_STYLES.get(code, "")) + "\n")
                else:
                    out.append(self.paint(text, style) + "\n")
        self.stream.write("".join(out))

    def say(self, text: str, studio: bool) -> None:
        if studio and text.startswith("▶ ") and len(text) < self.rich.width - 8:
            from rich.rule import Rule  # lazy: see __init__
            from rich.text import Text

            self.rich.print(Rule(Text(text, style="bold cyan"), style="cyan", align="left"))
            return
        style = next((s for prefix, s in _SAY_STYLES if text.startswith(prefix)), "")
        if not style and "warning:" in text[:40]:
            style = "yellow"
        self.stream.write(self.paint(text, style) + "\n")
