"""``packet migrate-contracts``: legacy shell-string commands become argv entries.

A legacy ``commands`` entry (a bare string, or ``{run: "..."}``) runs through
``sh -c``. When its text is a plain command line -- words, quotes, leading
``NAME=value`` assignments, an optional GNU ``timeout DURATION`` -- the shell
adds nothing, so the same command can run without one::

    - "timeout 60 make test"          ->  - exec: "make"
                                            args: ["test"]
                                            timeout_ms: 60000

Words are split with :func:`shlex.split` (POSIX rules, as ``sh`` splits
them). A text the shell would *interpret* is left alone and listed with the
reason: pipes and redirects, ``&&``/``;``/``&`` chains, ``$`` and backquote
expansion, globs (``* ? [``), ``~``, comments, newlines, shell builtins
(``cd``, ``source`` ...) and ``sh -c``. The rewrite keeps the entry's other
keys (``repo``, ``cwd``, ``env``, ``fault_exit_codes``) and its deadline: the
entry's ``timeout_ms``, else the ``timeout N`` prefix, else the default it
already ran with (:data:`~prompt_runner.verifier.clauses.commands.DEFAULT_TIMEOUT_MS`),
written out. Every converted contract is checked by the verifier's own
parser before it counts as converted.

Only the ``timeout`` forms whose meaning a ``timeout_ms`` says exactly are
lifted (coreutils' rules): a DURATION that is a decimal number of seconds with
an optional unit ``s``/``m``/``h``/``d`` (``10``, ``1.5``, ``10s``, ``5m``),
rounded up to whole ms, after an optional ``--``; ``timeout 0`` sets no limit,
so the entry keeps the default deadline it ran with. A ``timeout`` with an
option (``-k``, ``-s``/``--signal``, ``--preserve-status``, ``--foreground``,
``-v``: a second signal, another signal, another exit status) or a duration
written otherwise (``1e3``, ``inf``, ``10S``) is left, with the reason.

Differences a converted entry has, by design: a program missing from PATH
halts the run as ``verifier_fault`` (the shell said 127, a failure), and an
expired ``timeout N`` is ``verifier_timeout`` (GNU ``timeout`` exited 124).

Without ``write`` nothing changes on disk and the report carries a unified
diff; with it, each changed file is rewritten atomically with its comments,
key order and quoting kept (ruamel.yaml round trip).
"""

from __future__ import annotations

import difflib
import math
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..state.layout import StateLayout
from ..verifier import parse_contract
from ..verifier.command_entry import DEFAULT_TIMEOUT_MS
from .files import MANIFEST_NAME, find_packet_root, relative_file
from .frontmatter import read_text
from .own_edits import write_packet_file
from .source import read_packet_source
from .yamlio import dump, load_mapping, quoted, round_trip_like, split_for_edit

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_GNU_DURATION = re.compile(r"^(\d+\.?\d*|\.\d+)([smhd]?)$")
_UNIT_MS = {"": 1000, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "fish"})
BUILTINS = frozenset(
    {
        "cd", "source", ".", "export", "eval", "set", "unset", "alias", "ulimit", "umask",
        "trap", "shift", "return", "exit", "if", "then", "else", "fi", "for", "while",
        "until", "do", "done", "case", "esac", "function", "!", "{", "}", "[[", "]]",
    }
)  # fmt: skip
"""First words the shell itself interprets (no program of that name would run)."""

_OPERATORS = {
    "|": "a pipe `|` needs a shell",
    "&": "`&`/`&&` runs commands in the background or in sequence",
    ";": "`;` runs commands in sequence",
    "<": "a redirect `<` needs a shell",
    ">": "a redirect `>` needs a shell",
    "(": "`(` starts a subshell",
    ")": "`)` ends a subshell",
    "\n": "a newline separates commands",
}


@dataclass(frozen=True)
class Unconverted:
    """A legacy entry left as it was.

    Attributes:
        file: the file, relative to the packet (``prompts/03_x.prompt.md``).
        key: its key path (``verify.commands[1]``).
        command: the shell text.
        reason: why it needs a shell (and so a person).
    """

    file: str
    key: str
    command: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "key": self.key, "command": self.command, "reason": self.reason}


@dataclass(frozen=True)
class MigrationReport:
    """What ``migrate_contracts`` converted, and what it could not.

    Attributes:
        packet: the packet directory.
        converted: how many entries became argv entries.
        unconverted: the legacy entries left alone, each with its reason.
        changed_files: the files (relative to the packet) whose text changes.
        diff: a unified diff of those changes (empty when none).
        written: the changes were written to disk.
    """

    packet: Path
    converted: int
    unconverted: tuple[Unconverted, ...]
    changed_files: tuple[str, ...]
    diff: str
    written: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "prompt_runner.migrate_contracts/v1",
            "packet": str(self.packet),
            "converted": self.converted,
            "unconverted": [u.to_dict() for u in self.unconverted],
            "changed_files": list(self.changed_files),
            "written": self.written,
            "diff": self.diff,
        }


@dataclass(frozen=True)
class Argv:
    """A shell-free form of one command line."""

    argv: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    timeout_ms: int | None = None


def shell_hazard(text: str) -> str | None:
    """Why ``sh`` would interpret ``text`` beyond splitting words, or ``None``.

    Quote-aware: ``'a|b'`` and ``"*.py"`` are plain words; ``$`` and backquotes
    expand inside double quotes too, so they are hazards there as well.
    """
    quote: str | None = None
    escaped = False
    word_start = True
    for char in text:
        if escaped:
            escaped, word_start = False, False
            continue
        if quote == "'":
            if char == "'":
                quote = None
            continue
        if char == "\\":
            escaped = True
            continue
        if char == "$":
            return "`$` expands a variable or a command"
        if char == "`":
            return "backquotes run a command"
        if quote == '"':
            if char == '"':
                quote = None
            continue
        if char in "'\"":
            quote, word_start = char, False
            continue
        if char in _OPERATORS:
            return _OPERATORS[char]
        if char in "*?[":
            return f"the glob `{char}` is expanded by the shell"
        if word_start and char == "~":
            return "`~` expands to the home directory"
        if word_start and char == "#":
            return "`#` starts a comment"
        word_start = char in " \t"
    return None


def to_argv(text: str) -> Argv | str:
    """``text`` as an argv (with assignments and a ``timeout N`` lifted out), or the reason not.

    ``FOO=1 BAR=2 timeout 30 make test`` -> argv ``make test``, env
    ``{FOO: 1, BAR: 2}``, timeout 30000 ms; ``timeout 0 make`` -> argv
    ``make``, no timeout (coreutils: 0 is no limit).
    """
    hazard = shell_hazard(text)
    if hazard is not None:
        return hazard
    try:
        words = shlex.split(text)
    except ValueError as exc:
        return f"the shell cannot split it ({exc})"
    env: dict[str, str] = {}
    while words and _ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    timeout_ms: int | None = None
    if words[:1] == ["exec"]:
        words.pop(0)
    if words[:1] == ["timeout"]:
        lifted = _lift_timeout(words[1:])
        if isinstance(lifted, str):
            return lifted
        timeout_ms, words = lifted
    if not words:
        return "it runs no program"
    program = words[0]
    if program in BUILTINS:
        return f"`{program}` is a shell builtin" + (
            " (give the directory as `cwd:` instead)" if program == "cd" else ""
        )
    if program.rsplit("/", 1)[-1] in SHELLS and any(w in ("-c", "-lc", "-ec") for w in words):
        return f"`{program} -c` runs a shell script"
    return Argv(tuple(words), env, timeout_ms)


def _lift_timeout(words: list[str]) -> tuple[int | None, list[str]] | str:
    """The words after ``timeout`` as ``(deadline in ms, the command's words)``, or why not.

    The deadline is ``None`` for a zero DURATION (coreutils: no limit). See the
    module docstring for the forms read; any other is a reason string.
    """
    if words[:1] == ["--"]:
        words = words[1:]
    elif words and words[0].startswith("-"):
        return (
            f"`timeout {words[0]}` changes what happens at the deadline (the signal, a "
            "second kill, the exit status), which `timeout_ms` cannot say"
        )
    if not words:
        return "`timeout` is given no duration"
    found = _GNU_DURATION.match(words[0])
    if found is None:
        return (
            f"`timeout {words[0]}` is not a duration read exactly here (write seconds, "
            "optionally with s, m, h or d, e.g. `timeout 90` or `timeout 5m`)"
        )
    if len(words) < 2:
        return "`timeout` runs no program"
    ms = Decimal(found.group(1)) * _UNIT_MS[found.group(2)]
    return (math.ceil(ms) if ms else None), words[1:]


def migrate_contracts(packet: Path | str, *, write: bool = False) -> MigrationReport:
    """Convert the packet's legacy shell-string commands into argv entries.

    Looks at every prompt's ``verify.commands`` and the manifest's
    ``agent_control.completion_verify.commands``.

    Args:
        packet: the packet directory (or its manifest).
        write: rewrite the changed files (atomically); otherwise only report.

    Returns:
        The :class:`MigrationReport` (the diff is there either way).

    Raises:
        UserError: the packet does not load its files' front matter.
    """
    root = find_packet_root(packet)
    source = read_packet_source(root)
    files = [root / MANIFEST_NAME, *(ps.file for ps in source.prompts)]
    converted = 0
    unconverted: list[Unconverted] = []
    changes: list[tuple[Path, str, str]] = []
    for file in files:
        rel = relative_file(file, root)
        old = read_text(file, display=rel)
        new, count, left = _migrate_text(old, rel, manifest=file.name == MANIFEST_NAME)
        converted += count
        unconverted.extend(left)
        if new != old:
            changes.append((file, old, new))
    diff = "".join(
        line
        for file, old, new in changes
        for line in difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"a/{relative_file(file, root)}",
            tofile=f"b/{relative_file(file, root)}",
        )
    )
    if write:
        state_root = StateLayout.of_packet(root).root
        for file, _, new in changes:
            write_packet_file(file, new, state_root=state_root, by="packet migrate --write")
    return MigrationReport(
        packet=root,
        converted=converted,
        unconverted=tuple(unconverted),
        changed_files=tuple(relative_file(f, root) for f, _, _ in changes),
        diff=diff,
        written=write and bool(changes),
    )


def _migrate_text(text: str, rel: str, *, manifest: bool) -> tuple[str, int, list[Unconverted]]:
    """``(new text, converted count, entries left)`` for one file's text."""
    document = split_for_edit(text)
    if document is None:
        return text, 0, []
    front = document.yaml_text
    yaml = round_trip_like(front)
    data = load_mapping(yaml, front, rel)
    converted = 0
    left: list[Unconverted] = []
    for contract, key in _contracts(data, manifest=manifest):
        commands = contract.get("commands")
        if not isinstance(commands, list):
            continue
        for index, entry in enumerate(commands):
            label = f"{key}.commands[{index}]"
            shell = entry if isinstance(entry, str) else None
            if isinstance(entry, Mapping) and "run" in entry and "exec" not in entry:
                shell = entry["run"] if isinstance(entry["run"], str) else None
            if shell is None:
                continue
            result = to_argv(shell)
            if isinstance(result, str):
                left.append(Unconverted(rel, label, shell, result))
                continue
            replacement = _argv_entry(entry, result)
            try:  # the verifier's own parser has the last word
                parse_contract({"commands": [_plain(replacement)]}, file=rel, key=key)
            except UserError as exc:
                left.append(Unconverted(rel, label, shell, exc.reason))
                continue
            commands[index] = replacement
            converted += 1
    if not converted:
        return text, 0, left
    return document.with_front(dump(yaml, data)), converted, left


def _contracts(data: Any, *, manifest: bool) -> Iterator[tuple[Any, str]]:
    """The contract mappings of one file, with their key paths."""
    if manifest:
        control = data.get("agent_control")
        contract = control.get("completion_verify") if isinstance(control, Mapping) else None
        if isinstance(contract, Mapping):
            yield contract, "agent_control.completion_verify"
    elif isinstance(data.get("verify"), Mapping):
        yield data["verify"], "verify"


def _argv_entry(entry: Any, argv: Argv) -> Any:
    """The structured entry replacing legacy ``entry``; its other keys keep their order."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    args = CommentedSeq(quoted(list(argv.argv[1:])))
    args.fa.set_flow_style()
    old: Mapping[str, Any] = entry if isinstance(entry, Mapping) else {}
    given = [old.get("timeout_ms"), argv.timeout_ms]
    deadlines = [t for t in given if isinstance(t, int) and not isinstance(t, bool)]
    deadline = min(deadlines) if deadlines else DEFAULT_TIMEOUT_MS
    out = CommentedMap()
    for key, value in old.items() if old else [("run", None)]:
        if key == "run":
            out["exec"] = quoted(argv.argv[0])
            out["args"] = args
        elif key == "timeout_ms":
            out[key] = deadline
        elif key == "env" and argv.env and isinstance(value, Mapping):
            merged = CommentedMap(value)
            merged.update(quoted(argv.env))  # `FOO=1 cmd` wins over env, as in the shell
            out["env"] = merged
        else:
            out[key] = value
    if argv.env and "env" not in out:
        out["env"] = quoted(argv.env)
    if "timeout_ms" not in out:
        out["timeout_ms"] = deadline
    return out


def _plain(value: Any) -> Any:
    """A ruamel value as plain dicts, lists and scalars (for the verifier's parser)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value
