"""Tools a workspace needs on PATH: git, the agents' CLIs, ``.tool-versions`` pins, containment.

``.tool-versions`` is asdf's format (https://asdf-vm.com/manage/configuration.html):
one ``TOOL VERSION [FALLBACK...]`` per line, ``#`` starts a comment. A pin is
met when the tool's executable is on PATH and ``EXE --version`` prints the
pinned version; ``system``, ``ref:...`` and ``path:...`` pins ask only for the
executable. No login shell and no version manager runs: what the run will
find on its PATH is what is checked.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import proc

TOOL_VERSIONS = ".tool-versions"
PROBE_TIMEOUT_MS = 10_000

EXECUTABLES: dict[str, tuple[str, ...]] = {
    "nodejs": ("node",),
    "golang": ("go",),
    "rust": ("rustc",),
    "erlang": ("erl",),
    "python": ("python", "python3"),
    "java": ("java",),
}
"""asdf plugin names whose executable is named otherwise (else the plugin's own name)."""

NO_VERSION_FLAG = frozenset({"erlang"})
"""Tools whose executable has no ``--version``: only found on PATH."""


@dataclass(frozen=True)
class Pin:
    """One ``.tool-versions`` line: ``tool``, its ``version``, the ``file`` and ``line``."""

    tool: str
    version: str
    file: Path
    line: int


def read_pins(directory: Path) -> list[Pin]:
    """The pins of ``<directory>/.tool-versions`` (none when there is no such file)."""
    path = directory / TOOL_VERSIONS
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    pins = []
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if len(words) >= 2:
            pins.append(Pin(words[0], words[1], path, number))
    return pins


def check_pin(pin: Pin, path: str | None = None) -> str | None:
    """``None`` when ``pin`` is met on ``path`` (default ``$PATH``), else why not."""
    names = EXECUTABLES.get(pin.tool, (pin.tool,))
    exe = next((found for n in names if (found := shutil.which(n, path=path))), None)
    where = f"{pin.file}:{pin.line}"
    if exe is None:
        return f"{where} pins {pin.tool} {pin.version}, and no {' or '.join(names)} is on PATH"
    if pin.version == "system" or pin.version.startswith(("ref:", "path:")):
        return None
    if pin.tool in NO_VERSION_FLAG:
        return None
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    res = proc.run([exe, "--version"], cwd=pin.file.parent, env=env, timeout_ms=PROBE_TIMEOUT_MS)
    said = (res.stdout + res.stderr).strip()
    if pin.version in said:
        return None
    first = said.splitlines()[0] if said else f"exit {res.returncode}"
    return f"{where} pins {pin.tool} {pin.version}, but {exe} --version says {first!r}"


def containment_available(kind: str) -> tuple[bool, str]:
    """``(available, what)`` for ``process_group``, ``systemd_user`` or ``auto``.

    ``systemd_user`` needs ``systemd-run`` on PATH and a user manager that
    answers ``systemctl --user show-environment``; ``auto`` is ``systemd_user``
    when that holds, else ``process_group`` (available wherever ``setsid`` is).
    """
    group = hasattr(os, "setsid")
    if kind == "process_group":
        return group, "a new session and process group" if group else "no setsid on this system"
    systemd, why = _systemd_user()
    if kind == "systemd_user":
        return systemd, why
    if systemd:
        return True, "auto: systemd_user (" + why + ")"
    return group, f"auto: process_group ({why})"


def _systemd_user() -> tuple[bool, str]:
    run = shutil.which("systemd-run")
    ctl = shutil.which("systemctl")
    if run is None or ctl is None:
        return False, "systemd-run/systemctl are not on PATH"
    res = proc.run([ctl, "--user", "show-environment"], cwd="/", timeout_ms=PROBE_TIMEOUT_MS)
    if not res.ok:
        return False, "no user manager answers `systemctl --user`"
    return True, "a transient systemd-run --user unit"
