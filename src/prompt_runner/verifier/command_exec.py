"""Running one ``commands`` entry and classifying its verdict (SPEC 2.6).

Verdicts:

* exit 0 and every output assertion holds -> ``pass``;
* any other exit, an unmet ``stdout_*`` assertion, a ``regenerates`` output
  not written anew by the command (:mod:`~prompt_runner.verifier.regenerates`:
  the proof, the lock, the restore), or a missing / unstartable *repo-relative* executable
  (it may be an output the prompt had to create) -> ``failure``;
* an exit listed in ``fault_exit_codes``, a missing bare PATH command or
  absolute executable, or any other failure to start the command ->
  ``verifier_fault``; a legacy shell command exiting 126/127 (the shell could
  not find or run a command) is a fault too;
* the deadline expired -> ``verifier_timeout`` (the whole process group is
  killed by :func:`prompt_runner.proc.run`).

Commands run with the caller's environment (``ctx.env`` or ``os.environ``)
plus the entry's ``env``, never through a login shell.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_runner import proc
from prompt_runner.verifier import regenerates, regexes
from prompt_runner.verifier.command_entry import (
    ARTIFACT_REF,
    ARTIFACTS_ENV,
    REPO_REF,
    CommandEntry,
    split_repo_ref,
)
from prompt_runner.verifier.model import FAILURE, FAULT, TIMEOUT, VerifierItem, VerifyContext, item
from prompt_runner.verifier.output import REGEX_TEXT_CAP_BYTES, CommandOutput
from prompt_runner.verifier.paths import RepoDir, inside, refused_text, repo_for

BACKUP_SUFFIX = regenerates.BACKUP_SUFFIX
LEGACY_FAULT_EXITS = (126, 127)
_PASS_DETAIL_LINES = 20


class _Stop(Exception):
    """Carries the item that ends a command check early."""

    def __init__(self, result: VerifierItem) -> None:
        super().__init__(result.details)
        self.result = result


@dataclass
class _Run:
    entry: CommandEntry
    ctx: VerifyContext
    repo: RepoDir
    cwd: Path

    def make(
        self, passed: bool, details: str, verdict: str | None = None, **extra: Any
    ) -> VerifierItem:
        command: tuple[str, ...] | str = (
            self.entry.shell
            if self.entry.shell is not None
            else (self.entry.exec or "", *self.entry.args)
        )
        return item(
            "commands",
            passed=passed,
            verdict=verdict,
            details=details,
            repo=self.repo.name,
            command=command,
            cwd=str(self.cwd),
            mode="legacy" if self.entry.legacy else "structured",
            timeout_ms=self.entry.effective_timeout_ms,
            **extra,
        )

    def stop(self, passed: bool, details: str, verdict: str | None = None, **extra: Any) -> _Stop:
        return _Stop(self.make(passed, details, verdict, **extra))


def run_command(entry: CommandEntry, ctx: VerifyContext) -> VerifierItem:
    """Run ``entry`` and return its item (never raises for the command's behaviour)."""
    found = repo_for("commands", entry.repo, ctx, command=entry.display())
    if isinstance(found, VerifierItem):
        return found
    cwd = inside(found.root, entry.cwd)
    run = _Run(entry, ctx, found, cwd if cwd is not None else found.root / entry.cwd)
    try:
        if cwd is None:
            raise run.stop(False, refused_text("cwd", entry.cwd, found))
        if not cwd.is_dir():
            what, fix = (
                ("is a file, not a directory", "make it a directory")
                if cwd.exists()
                else ("does not exist", "create it")
            )
            raise run.stop(False, f"cwd {entry.cwd} {what} in repo {found.name!r}; {fix}")
        env = dict(os.environ if ctx.env is None else ctx.env)
        env.update(entry.env)
        argv = _argv(run, env)
        if entry.regenerates:
            return _regenerate(run, argv, env)
        return _execute(run, argv, env)
    except _Stop as stop:
        return stop.result


def _argv(run: _Run, env: dict[str, str]) -> list[str]:
    entry = run.entry
    if entry.shell is not None:
        shell = shutil.which("sh", path=env.get("PATH"))
        if shell is None:
            raise run.stop(False, "cannot run legacy command: `sh` is not on PATH", FAULT)
        return [shell, "-c", entry.shell]
    args = [_expand_artifacts(run, _expand_repo_refs(run, a), env) for a in entry.args]
    return [_executable(run, env), *args]


def _expand_artifacts(run: _Run, text: str, env: dict[str, str]) -> str:
    """``@artifact:ID`` -> the installed executable (a verifier fault when there is none)."""
    return ARTIFACT_REF.sub(lambda m: _artifact(run, m.group(1), env), text)


def _artifact(run: _Run, artifact_id: str, env: dict[str, str]) -> str:
    directory = env.get(ARTIFACTS_ENV, "")
    if not directory:
        raise run.stop(
            False,
            f"verifier_fault: @artifact:{artifact_id} names a workspace artifact, and "
            f"${ARTIFACTS_ENV} is not set; run it through its workspace (verify --workspace W)",
            FAULT,
        )
    path = os.path.join(directory, artifact_id)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise run.stop(
            False,
            f"verifier_fault: artifact {artifact_id!r} is not built ({path}); run "
            "`prompt-runner workspace prepare`",
            FAULT,
        )
    return path


def _expand_repo_refs(run: _Run, text: str) -> str:
    def sub(m: re.Match[str]) -> str:
        found = repo_for("commands", m.group(1), run.ctx)
        if isinstance(found, VerifierItem):
            raise _Stop(run.make(False, f"{found.details} (in {text!r})"))
        return str(found.root)

    return REPO_REF.sub(sub, text)


def _executable(run: _Run, env: dict[str, str]) -> str:
    exe = run.entry.exec or ""
    if ARTIFACT_REF.fullmatch(exe):
        return _expand_artifacts(run, exe, env)
    ref = split_repo_ref(exe)
    if ref is not None:
        found = repo_for("commands", ref[0], run.ctx)
        if isinstance(found, VerifierItem):
            raise run.stop(False, f"{found.details} (in exec {exe!r})", missing_repo=True)
        return _relative_exe(run, found, ref[1], exe)
    if exe.startswith("/"):
        if not os.path.isfile(exe) or not os.access(exe, os.X_OK):
            problem = "does not exist" if not os.path.exists(exe) else "is not an executable file"
            raise run.stop(
                False,
                f"verifier_fault: absolute executable {exe} {problem} (cwd {run.cwd}); "
                "install it or fix `exec:`",
                FAULT,
            )
        return exe
    if "/" in exe:
        rel = os.path.normpath(os.path.relpath(run.cwd / exe, run.repo.root))
        return _relative_exe(run, run.repo, rel, exe)
    found_path = shutil.which(exe, path=env.get("PATH"))
    if found_path is None:
        raise run.stop(
            False,
            f"verifier_fault: command {exe!r} not found on PATH (cwd {run.cwd}); "
            "install it or put its directory on PATH",
            FAULT,
        )
    return found_path


def _relative_exe(run: _Run, repo: RepoDir, rel: str, shown: str) -> str:
    target = inside(repo.root, rel)
    if target is None:
        raise run.stop(False, refused_text("executable", rel, repo) + f" (exec {shown!r})")
    if not target.exists():
        raise run.stop(
            False,
            f"executable {shown} does not exist ({target}); the prompt may need to create it",
            missing_executable=True,
        )
    if not target.is_file() or not os.access(target, os.X_OK):
        raise run.stop(False, f"{shown} is not an executable file ({target}); chmod +x it")
    return str(target)


def _execute(run: _Run, argv: list[str], env: dict[str, str]) -> VerifierItem:
    entry = run.entry
    out = CommandOutput(entry.stdout_contains, keep_stdout=bool(entry.stdout_matches))
    res = proc.run(
        argv,
        cwd=run.cwd,
        env=env,
        timeout_ms=entry.effective_timeout_ms,
        on_output=out,
        on_start=run.ctx.on_process_start,
    )
    out.close()
    return _judge(run, res, out)


def _judge(run: _Run, res: proc.ProcResult, out: CommandOutput) -> VerifierItem:
    """The verdict on how the command ended (the module docstring lists them)."""
    entry = run.entry
    output = out.report() or None
    where = f"`{entry.display()}` in {run.cwd}"
    facts: dict[str, Any] = {"exit_code": res.returncode, "duration_ms": res.duration_ms}
    if out.truncated:
        facts["output_truncated"] = True
        facts["output_bytes"] = {"stdout": out.stdout.bytes, "stderr": out.stderr.bytes}
    if res.returncode is None:
        relative = entry.exec is not None and not entry.exec.startswith("/") and "/" in entry.exec
        if relative:
            return run.make(False, f"could not start {where}: {res.start_error}", output=output)
        return run.make(
            False, f"verifier_fault: could not start {where}: {res.start_error}", FAULT, **facts
        )
    if res.timed_out:
        return run.make(
            False,
            f"verifier_timeout: {where} did not finish within {entry.effective_timeout_ms} ms; "
            "its whole process group was killed",
            TIMEOUT,
            output=output,
            **facts,
        )
    code = res.returncode
    fault = _fault_exit(entry, code, where)
    if fault is not None:
        return run.make(False, fault, FAULT, output=output, **facts)
    if code != 0:
        how = f"was killed by signal {-code}" if code < 0 else f"exited {code} (expected 0)"
        last = out.last_line()
        return run.make(
            False,
            f"{where} {how}" + (f"; last output: {last}" if last else "") + out.size_note(),
            output=output,
            **facts,
        )
    return _judge_output(run, res, out, where, output, facts)


def _fault_exit(entry: CommandEntry, code: int, where: str) -> str | None:
    """Why exit ``code`` means the verifier could not judge the work, or ``None``."""
    if code in entry.fault_exit_codes:
        return (
            f"verifier_fault: {where} exited {code}, listed in fault_exit_codes "
            f"{list(entry.fault_exit_codes)}; the verifier could not judge the work"
        )
    if entry.legacy and code in LEGACY_FAULT_EXITS:
        return f"verifier_fault: the shell could not find or run a command (exit {code}) in {where}"
    return None


def _judge_output(
    run: _Run,
    res: proc.ProcResult,
    out: CommandOutput,
    where: str,
    output: str | None,
    facts: dict[str, Any],
) -> VerifierItem:
    """The verdict on a command that exited 0: its ``stdout_*`` assertions."""
    entry = run.entry
    unmet = [f"stdout does not contain {s!r}" for s in entry.stdout_contains if not out.contains(s)]
    if entry.stdout_matches:
        text = out.whole_stdout()
        if text is None:
            return run.make(
                False,
                f"verifier_fault: {where} printed {out.stdout.bytes} bytes of stdout, more than "
                f"the {REGEX_TEXT_CAP_BYTES // (1024 * 1024)} MiB (REGEX_TEXT_CAP_BYTES) that "
                "stdout_matches searches whole; print less, or assert with stdout_contains "
                "(streamed, no cap)",
                FAULT,
                output=output,
                stdout_cap_bytes=REGEX_TEXT_CAP_BYTES,
                **facts,
            )
        for p in entry.stdout_matches:
            try:
                found = regexes.search(p, text)
            except regexes.RegexTimeout as exc:
                return run.make(
                    False, exc.details(f"the stdout of {where}"), TIMEOUT, output=output, **facts
                )
            if found is None:
                unmet.append(f"stdout has no match for /{p}/")
    if unmet:
        return run.make(
            False,
            f"{where} exited 0 but " + "; ".join(unmet) + out.size_note(),
            output=output,
            **facts,
        )
    details = out.stdout_head(_PASS_DETAIL_LINES) or f"exited 0 in {res.duration_ms} ms"
    return run.make(True, details, output=output, **facts)


def _regenerate(run: _Run, argv: list[str], env: dict[str, str]) -> VerifierItem:
    """Run a command with ``regenerates:`` outputs (verifier/regenerates.py): stage them,
    run, prove each is new, then keep them or restore the prior versions."""
    entry = run.entry
    targets: list[tuple[str, Path]] = []
    for rel in entry.regenerates:
        target = inside(run.repo.root, rel)
        if target is None:
            raise run.stop(False, "regenerates: " + refused_text("path", rel, run.repo))
        targets.append((rel, target))
    try:
        regen = regenerates.begin(
            run.repo.root,
            targets,
            wait_ms=entry.effective_timeout_ms + regenerates.LOCK_GRACE_MS,
        )
    except regenerates.RegenerateError as exc:
        raise run.stop(False, exc.details, FAULT) from None
    result: VerifierItem | None = None
    stale: list[tuple[str, str]] = []
    try:
        result = _execute(run, argv, env)
        if result.passed:
            stale = regen.not_new()
    finally:
        done = regen.finish(keep=result is not None and result.passed and not stale)
    facts = {k: v for k, v in result.extra.items() if k not in ("mode", "timeout_ms")}
    if regen.waited_ms >= 100:
        facts["regenerates_waited_ms"] = regen.waited_ms
    details = result.details
    passed, verdict = result.passed, result.verdict
    if stale:
        passed, verdict = False, FAILURE
        details = "regenerates: not newly written by the command: " + "; ".join(
            f"{rel} ({why}; {done.notes.get(rel, '')})" for rel, why in stale
        )
        facts["regenerated_missing"] = [rel for rel, _ in stale]
    notes = regen.recovered()
    if notes:
        details += "; before the command, " + "; ".join(notes)
        facts["regenerates_recovered"] = [o.rel for o in regen.outputs if o.recovered]
    if done.fault is not None:
        passed, verdict = False, FAULT
        details = done.fault + "; " + details
    return run.make(passed, details, verdict, output=result.output, **facts)
