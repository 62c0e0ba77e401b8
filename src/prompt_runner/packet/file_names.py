"""What a name in a packet's prompt directory is: a prompt file, a checklist, or
neither. No imports at all: the light text readers (``status``, ``watch``:
:mod:`prompt_runner.packet.prompt_ids_text`) and the loader's listing
(:mod:`prompt_runner.packet.files`) judge every name by these same rules.
"""

from __future__ import annotations

PROMPT_SUFFIX = ".prompt.md"
CHECKLIST_SUFFIX = ".prompt.checklist.md"


def is_prompt_file_name(name: str) -> bool:
    """True for a prompt file's name: ``*.prompt.md``, not a checklist
    (``*.prompt.checklist.md``), not hidden (``.*``: an editor's lock file
    ``.#01_a.prompt.md`` or macOS's ``._01_a.prompt.md`` is no prompt)."""
    return name.endswith(PROMPT_SUFFIX) and not name.endswith(CHECKLIST_SUFFIX) and name[:1] != "."


def is_checklist_file_name(name: str) -> bool:
    """True for a checklist's name: ``*.prompt.checklist.md``, not hidden (``.*``)."""
    return name.endswith(CHECKLIST_SUFFIX) and name[:1] != "."
