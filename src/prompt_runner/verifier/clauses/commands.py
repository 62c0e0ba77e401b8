"""The ``commands`` clause: entry forms, validation and checklist labels.

Structured form (run **without a shell**; argv is passed literally)::

    commands:
      - exec: "pytest"                 # bare name: looked up on PATH
        args: ["-q", "@repo:app/tests"]
        repo: app                      # default: the prompt's first target
        cwd: "sub/dir"                 # repo-relative, default the repo root
        timeout_ms: 60000              # whole process group killed at the deadline
        env: {CI: "1"}                 # merged over the runner's environment
        fault_exit_codes: [3]          # these exits mean "could not judge": verifier_fault
        stdout_contains: ["passed"]    # literal(s) required in stdout
        stdout_matches: ["\\d+ passed"]  # regex(es) required in stdout
        regenerates: ["figure.png"]    # repo-relative outputs that must be rewritten

``exec`` may be a bare name (PATH), an absolute path, a repo-relative path
(``./x``, ``bin/x``, resolved against ``cwd``), ``@repo:NAME/path`` or
``@artifact:ID`` (a workspace's contract artifact, docs/workspaces.md). In
``args``, ``@repo:NAME/`` is replaced by that repo's absolute directory and
``@artifact:ID`` by the artifact's installed executable.

Legacy forms (load for compatibility, fail strict lint) run through
``sh -c`` in the repo with the default deadline
(:data:`~prompt_runner.verifier.command_entry.DEFAULT_TIMEOUT_MS`) unless
``timeout_ms`` is given: ``- "make test"`` and ``- {run: "make test", timeout_ms: 1000}``.
The entry model is :mod:`prompt_runner.verifier.command_entry`; running one is
:mod:`prompt_runner.verifier.command_exec`.
"""

from __future__ import annotations

from typing import Any

from prompt_runner.verifier import schema
from prompt_runner.verifier.command_entry import ARTIFACT_REF, CommandEntry, split_repo_ref
from prompt_runner.verifier.command_exec import run_command
from prompt_runner.verifier.model import ClauseEntry
from prompt_runner.verifier.registry import ClauseSpec, per_entry, register
from prompt_runner.verifier.schema import Where

_COMMON_KEYS = {"repo", "cwd", "timeout_ms", "env", "fault_exit_codes"}
_STRUCTURED_KEYS = _COMMON_KEYS | {
    "exec",
    "args",
    "stdout_contains",
    "stdout_matches",
    "regenerates",
}
_LEGACY_KEYS = _COMMON_KEYS | {"run"}


def _scalar_str(raw: object, where: Where) -> str:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        where.fail("must be a string", "quote the value")
    return str(raw)


def _parse_exec(raw: object, where: Where) -> str:
    text = schema.string(raw, where)
    ref = split_repo_ref(text)
    if ref is not None:
        schema.rel_path(ref[1], where, allow_dot=False)
        return text
    if text.startswith("@repo:"):
        where.fail(f"{text!r} is not a valid repo reference", "write `@repo:NAME/path/to/tool`")
    if text.startswith("@artifact:"):
        if not ARTIFACT_REF.fullmatch(text):
            where.fail(f"{text!r} is not a valid artifact reference", "write `@artifact:ID`")
        return text
    if text.startswith("/"):
        return text
    if "/" in text:
        schema.rel_path(text, where)  # relative to cwd: no `..`, kept as written
        return text
    if any(c.isspace() for c in text):
        where.fail(
            f"{text!r} is not one executable (no shell runs it)",
            "put the program in `exec:` and each argument in `args:`",
        )
    return text


def _parse_one(value: object, where: Where) -> CommandEntry:
    if isinstance(value, str):
        return CommandEntry(shell=schema.string(value, where), legacy=True, bare_string=True)
    if not isinstance(value, dict):
        where.fail("must be a string or a mapping", "write `{exec: ..., args: [...]}`")
    legacy = "run" in value
    if legacy and "exec" in value:
        where.fail("has both `run` and `exec`", "keep `exec`/`args` (structured, no shell)")
    if not legacy and "exec" not in value:
        where.at("exec").fail("is required", "add `exec:` (the program) and `args:`")
    m = schema.mapping(value, where, allowed=_LEGACY_KEYS if legacy else _STRUCTURED_KEYS)
    env_raw = m.get("env") or {}
    if not isinstance(env_raw, dict):
        where.at("env").fail(
            "must be a mapping of variable names to values", "write `{NAME: value}`"
        )
    env = {str(k): _scalar_str(v, where.at("env").at(str(k))) for k, v in env_raw.items()}
    codes_raw = m.get("fault_exit_codes") or []
    if not isinstance(codes_raw, list):
        where.at("fault_exit_codes").fail("must be a list of exit codes", "write e.g. `[3, 4]`")
    codes: list[int] = []
    for i, code in enumerate(codes_raw):
        if isinstance(code, bool) or not isinstance(code, int) or not 1 <= code <= 255:
            where.at("fault_exit_codes").at(i).fail(
                "must be an exit code from 1 to 255", "list the non-zero exits that mean a fault"
            )
        codes.append(code)
    cwd = (
        "." if m.get("cwd") is None else schema.rel_path(m["cwd"], where.at("cwd"), allow_dot=True)
    )
    common: dict[str, Any] = {
        "repo": schema.repo_name(m, where),
        "cwd": cwd,
        "timeout_ms": schema.integer(
            m, "timeout_ms", where, minimum=1, unit=" (milliseconds, e.g. 60000)"
        ),
        "env": env,
        "fault_exit_codes": tuple(codes),
    }
    if legacy:
        return CommandEntry(shell=schema.string(m["run"], where.at("run")), legacy=True, **common)
    args_raw = m.get("args") or []
    if not isinstance(args_raw, list):
        where.at("args").fail("must be a list of arguments", 'write `args: ["-q", "tests"]`')
    patterns = schema.string_list(m.get("stdout_matches"), where.at("stdout_matches"))
    for i, pattern in enumerate(patterns):
        schema.regex(pattern, where.at("stdout_matches").at(i))
    return CommandEntry(
        exec=_parse_exec(m["exec"], where.at("exec")),
        args=tuple(_scalar_str(a, where.at("args").at(i)) for i, a in enumerate(args_raw)),
        stdout_contains=schema.string_list(m.get("stdout_contains"), where.at("stdout_contains")),
        stdout_matches=patterns,
        regenerates=tuple(
            schema.rel_path(p, where.at("regenerates").at(i))
            for i, p in enumerate(schema.string_list(m.get("regenerates"), where.at("regenerates")))
        ),
        **common,
    )


def _parse(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
    values = schema.entry_list(raw, where, what="commands")
    return tuple(_parse_one(v, where.at(i)) for i, v in enumerate(values))


_check = per_entry(CommandEntry, run_command)


def _label(entry: ClauseEntry, default_repo: str | None) -> str:
    assert isinstance(entry, CommandEntry)
    where = f" (in {entry.repo})" if entry.repo is not None and entry.repo != default_repo else ""
    return f"command passes: {entry.display()}{where}"


register(ClauseSpec("commands", 100, _parse, _check, _label, structural=False))
