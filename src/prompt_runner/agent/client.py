"""The agent's half of agent control (SPEC 7): write a directive or progress.

``prompt-runner agent-control ...`` -- and the simulated provider, through
:func:`issue_simulated` -- call this module, which checks the environment
(:func:`.protocol.invocation_from_env`) and then writes one of two private
files in the invocation directory:

* the **request** (a directive): created exactly once per iteration. It is
  written whole to a temporary file and published with ``os.link``, which fails
  when the name exists -- so the first terminal directive wins atomically and a
  second one is refused (``request already exists``);
* the **progress** record: nonterminal and repeatable; written whole and
  published with ``os.replace`` (the latest wins; a reader never sees half).

Both are ``0600`` files carrying the token and the invocation identity (run id,
prompt id, iteration); the runner authenticates them again when it reads them
(:mod:`.invocation`), so this side's checks are a courtesy to the agent, not the
security boundary. A refused call appends one line to ``rejections.jsonl`` in
the invocation directory (when that directory is a private one) so the runner
can record it.

Only the standard library is imported, and little of it: this is the agent's
hot path (``bench/agent_control_cli.py``).
"""

from __future__ import annotations

import json
import os

from .protocol import (
    DIRECTIVES,
    ENV_FILE,
    ENV_ITERATION,
    ENV_PROGRESS,
    ENV_PROMPT,
    ENV_RUN,
    ENV_TOKEN,
    EXIT_IO,
    EXIT_REFUSED,
    MAX_FIELD,
    PROGRESS_RECEIPT,
    PROGRESS_SCHEMA,
    REASON_REQUIRED,
    REJECTIONS_NAME,
    REQUEST_RECEIPT,
    REQUEST_SCHEMA,
    AgentControlError,
    Invocation,
    check_private_dir,
    invocation_from_env,
    now_iso,
)

TYPE_CHECKING = False

if TYPE_CHECKING:  # annotations only: typing stays off the hot path
    from collections.abc import Mapping
    from typing import Any

__all__ = [
    "DIRECTIVES",
    "AgentControlError",
    "issue_directive",
    "issue_simulated",
    "live_progress",
    "record_progress",
]


def _text(value: str | None, what: str, flag: str, *, required: bool) -> str | None:
    text = (value or "").strip()
    if not text:
        if required:
            raise AgentControlError(f"{flag} is required: give the {what} as non-blank text")
        return None
    return text[:MAX_FIELD]


def _signed(schema: str, inv: Invocation, fields: Mapping[str, Any]) -> dict[str, Any]:
    """A record of ``schema`` carrying the invocation's token and identity, then ``fields``."""
    return {"schema": schema, "schema_version": 1, "token": inv.token, **inv.identity(), **fields}


def _write_private(path: str, doc: Mapping[str, Any], *, exclusive: bool) -> None:
    """Write ``doc`` whole to ``path`` (0600): link (exclusive) or replace."""
    directory = os.path.dirname(path)
    tmp = os.path.join(
        directory, f".{os.path.basename(path)}.tmp.{os.getpid()}.{os.urandom(4).hex()}"
    )
    data = (json.dumps(doc, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(tmp, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        if exclusive:
            os.link(tmp, path)  # FileExistsError: the first directive already won
        else:
            os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(dfd)
    except OSError:  # pragma: no cover - file systems that refuse a directory fsync
        pass
    finally:
        os.close(dfd)


def _log_rejection(inv: Invocation | None, env: Mapping[str, str], what: str, why: str) -> None:
    """Append one line to ``rejections.jsonl`` beside the invocation files (best effort)."""
    target = env.get(ENV_PROGRESS, "").strip() or env.get(ENV_FILE, "").strip()
    if not target or not os.path.isabs(target):
        return
    directory = os.path.dirname(target)
    try:
        check_private_dir(directory)
        line = {
            "schema_version": 1,
            "at": now_iso(),
            "command": what,
            "reason": why,
            "pid": os.getpid(),
            "run_id": env.get(ENV_RUN, ""),
            "prompt_id": env.get(ENV_PROMPT, ""),
            "iteration": env.get(ENV_ITERATION, ""),
        }
        data = (json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(os.path.join(directory, REJECTIONS_NAME), flags, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
    except (AgentControlError, OSError):
        return


def _closed(request_file: str | None) -> bool:
    """True when the runner sealed ``request_file`` because the invocation ended."""
    if request_file is None:
        return False
    try:
        with open(request_file, "rb") as handle:
            doc = json.loads(handle.read(65536) or b"{}")
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and doc.get("closed") is True


def record_progress(
    env: Mapping[str, str], *, cursor: str | None, summary: str | None, unit: str | None = None
) -> dict[str, Any]:
    """Record the agent's progress (repeatable; the latest record wins).

    Args:
        env: the process environment (the six ``PROMPT_RUNNER_*`` variables).
        cursor: where the agent is (required, non-blank), e.g. ``P09R.2``.
        summary: one line about the state of the work (required, non-blank).
        unit: the unit of work in progress (optional).

    Returns:
        The receipt ``{schema, state: "accepted", cursor, unit, run_id,
        prompt_id, iteration, updated_at}``.

    Raises:
        AgentControlError: see :func:`invocation_from_env`; blank cursor or
            summary (exit 2); the invocation was closed (exit 1); a write
            failure (exit 3). A refusal is appended to ``rejections.jsonl``.
    """
    inv: Invocation | None = None
    try:
        inv = invocation_from_env(
            env, need=(ENV_PROGRESS, ENV_TOKEN, ENV_RUN, ENV_PROMPT, ENV_ITERATION)
        )
        cursor_text = _text(cursor, "cursor", "--cursor", required=True)
        summary_text = _text(summary, "summary", "--summary", required=True)
        unit_text = _text(unit, "unit", "--unit", required=False)
        if _closed(inv.request_file):
            raise AgentControlError(
                f"the invocation for prompt {inv.prompt_id} iteration {inv.iteration} has "
                "ended; progress is no longer accepted",
                EXIT_REFUSED,
            )
        updated_at = now_iso()
        fields = {"cursor": cursor_text, "unit": unit_text, "summary": summary_text}
        doc = _signed(PROGRESS_SCHEMA, inv, {**fields, "updated_at": updated_at})
        assert inv.progress_file is not None
        try:
            _write_private(inv.progress_file, doc, exclusive=False)
        except OSError as exc:
            raise AgentControlError(
                f"could not write {inv.progress_file}: {exc.strerror or exc}", EXIT_IO
            ) from None
    except AgentControlError as exc:
        _log_rejection(inv, env, "progress", exc.message)
        raise
    return {
        "schema": PROGRESS_RECEIPT,
        "state": "accepted",
        "cursor": cursor_text,
        "unit": unit_text,
        "summary": summary_text,
        **inv.identity(),
        "updated_at": updated_at,
    }


def issue_directive(env: Mapping[str, str], action: str, reason: str | None) -> dict[str, Any]:
    """Issue ``action`` (continue, repeat, finish, blocked) for this iteration.

    The first directive of an iteration wins; a later one is refused and the
    request file is left unchanged.

    Args:
        env: the process environment (the ``PROMPT_RUNNER_*`` variables).
        action: one of :data:`DIRECTIVES`.
        reason: why; required (non-blank) for ``finish`` and ``blocked``.

    Returns:
        The receipt ``{schema, state: "accepted", action, reason, run_id,
        prompt_id, iteration, requested_at}``.

    Raises:
        AgentControlError: unknown action or missing reason (exit 2); a
            directive already exists or the invocation is closed (exit 1); a
            write failure (exit 3); see also :func:`invocation_from_env`.
    """
    inv: Invocation | None = None
    try:
        if action not in DIRECTIVES:
            raise AgentControlError(
                f"unknown directive {action!r}; use one of {', '.join(DIRECTIVES)}"
            )
        inv = invocation_from_env(
            env, need=(ENV_FILE, ENV_TOKEN, ENV_RUN, ENV_PROMPT, ENV_ITERATION)
        )
        reason_text = _text(
            reason, f"reason for {action}", "--reason", required=action in REASON_REQUIRED
        )
        requested_at = now_iso()
        fields = {"action": action, "reason": reason_text, "requested_at": requested_at}
        doc = _signed(REQUEST_SCHEMA, inv, fields)
        assert inv.request_file is not None
        try:
            _write_private(inv.request_file, doc, exclusive=True)
        except FileExistsError:
            if _closed(inv.request_file):
                raise AgentControlError(
                    f"the invocation for prompt {inv.prompt_id} iteration {inv.iteration} has "
                    "ended; no directive is accepted",
                    EXIT_REFUSED,
                ) from None
            raise AgentControlError(
                f"request already exists for prompt {inv.prompt_id} iteration "
                f"{inv.iteration}: the first directive wins and this {action} is rejected",
                EXIT_REFUSED,
            ) from None
        except OSError as exc:
            raise AgentControlError(
                f"could not write {inv.request_file}: {exc.strerror or exc}", EXIT_IO
            ) from None
    except AgentControlError as exc:
        _log_rejection(inv, env, action, exc.message)
        raise
    return {
        "schema": REQUEST_RECEIPT,
        "state": "accepted",
        "action": action,
        "reason": reason_text,
        **inv.identity(),
        "requested_at": requested_at,
    }


def issue_simulated(step: Any, env: Mapping[str, str]) -> str:
    """Issue a simulated step's ``agent_control`` (progress, then directive) like an agent.

    Args:
        step: a :class:`prompt_runner.packet.models.SimulateAgentControl`
            (``directive``, ``reason``, ``progress: {cursor, unit, summary}``).
        env: the session's provider environment.

    Returns:
        One line describing what was accepted or refused (the simulated agent
        "says" it); never raises for a refusal.
    """
    notes: list[str] = []
    progress = getattr(step, "progress", None)
    if progress is not None:
        try:
            record_progress(
                env, cursor=progress.cursor, summary=progress.summary, unit=progress.unit
            )
            notes.append(f"agent-control progress {progress.cursor}: accepted")
        except AgentControlError as exc:
            notes.append(f"agent-control progress refused: {exc.message}")
    directive = getattr(step, "directive", None)
    if directive is not None:
        try:
            issue_directive(env, directive, getattr(step, "reason", None))
            notes.append(f"agent-control {directive}: accepted")
        except AgentControlError as exc:
            notes.append(f"agent-control {directive} refused: {exc.message}")
    return "; ".join(notes)


def live_progress(live: Mapping[str, Any], run_id: str, prompt_id: str) -> dict[str, Any] | None:
    """The progress of a running invocation, for ``status`` (read-only, best effort).

    Args:
        live: the prompt's ``agent_control.live`` state record
            (``iteration``, ``progress_file``, ``token_sha256``).
        run_id, prompt_id: the identity the record must carry.

    Returns:
        ``{run_id, prompt_id, iteration, cursor, unit, summary, updated_at,
        stale: False, live: True}``, or ``None`` when there is no record yet
        or it does not authenticate (token hash, identity) -- never raises.
    """
    path = live.get("progress_file")
    if not isinstance(path, str):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        try:
            data = os.read(fd, 65536)
        finally:
            os.close(fd)
        doc = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("schema") != PROGRESS_SCHEMA:
        return None
    import hashlib  # lazy: only status reads live progress, never the agent's hot path
    import hmac

    token = doc.get("token")
    digest = hashlib.sha256(token.encode("utf-8")).hexdigest() if isinstance(token, str) else ""
    identity = (doc.get("run_id"), doc.get("prompt_id"), doc.get("iteration"))
    if not hmac.compare_digest(digest, str(live.get("token_sha256", ""))):
        return None
    if identity != (run_id, prompt_id, live.get("iteration")):
        return None
    keys = ("run_id", "prompt_id", "iteration", "cursor", "unit", "summary", "updated_at")
    return {**{k: doc.get(k) for k in keys}, "stale": False, "live": True}
