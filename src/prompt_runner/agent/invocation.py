"""Agent-control invocations (SPEC 7): private files, token, authentication, prompt text.

One invocation is one iteration of a controlled prompt. The runner creates a
private directory (0700) and, per invocation, names a request file
(``<prompt>-<iteration>-<nonce>.json``) and a progress file
(``....progress.json``) in it, plus an opaque random token; the agent side
(:mod:`.client`) creates those files 0600.

Reading is the security boundary: the runner reads only the invocation's own
paths, without following symlinks, requires a private regular file of
bounded size, and compares the token together with run id, prompt id and
iteration in constant time (``hmac.compare_digest``). Every refusal comes back
as a one-line reason for the caller to record.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..state.layout import StateLayout
from . import protocol

_MAX_READ = 65536


# --------------------------------------------------------------------------- invocations


@dataclass(frozen=True)
class Invocation:
    """One controlled invocation (an iteration of a prompt).

    Attributes:
        directory: the private 0700 directory holding its files.
        request_file, progress_file: the agent's request and progress paths.
        token: the opaque random token (never logged).
        iteration: 1-based; ``max_iterations`` the cap.
    """

    directory: Path
    run_id: str
    prompt_id: str
    iteration: int
    max_iterations: int
    token: str
    request_file: Path
    progress_file: Path

    def env(self) -> dict[str, str]:
        """The six ``PROMPT_RUNNER_*`` variables for the provider process."""
        return {
            protocol.ENV_FILE: str(self.request_file),
            protocol.ENV_PROGRESS: str(self.progress_file),
            protocol.ENV_TOKEN: self.token,
            protocol.ENV_RUN: self.run_id,
            protocol.ENV_PROMPT: self.prompt_id,
            protocol.ENV_ITERATION: str(self.iteration),
        }


def control_directory(state_root: Path | None, run_id: str) -> tuple[Path, bool]:
    """Create the private agent-control directory of a run.

    Returns:
        ``(directory, temporary)``: ``<state_root>/runs/<run_id>/agent-control``
        (0700), or a new private temporary directory when ``state_root`` is
        ``None`` (memory/noop stores; the caller removes it).
    """
    if state_root is None:
        return Path(tempfile.mkdtemp(prefix="prompt-runner-agent-control-")), True
    directory = StateLayout(state_root).agent_control_dir(run_id)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(directory, 0o700)  # mkdir's mode is filtered by the umask
    return directory, False


def open_invocation(
    directory: Path, run_id: str, prompt_id: str, iteration: int, max_iterations: int
) -> Invocation:
    """A fresh invocation: new token, new file names (nothing is created yet)."""
    stem = f"{prompt_id}-{iteration}-{secrets.token_hex(6)}"
    return Invocation(
        directory=directory,
        run_id=run_id,
        prompt_id=prompt_id,
        iteration=iteration,
        max_iterations=max_iterations,
        token=secrets.token_urlsafe(32),
        request_file=directory / f"{stem}.json",
        progress_file=directory / f"{stem}.progress.json",
    )


def live_marker(inv: Invocation) -> dict[str, Any]:
    """What ``status`` needs to show ``inv``'s progress while it runs (never the token).

    See :func:`prompt_runner.agent.client.live_progress`.
    """
    return {
        "iteration": inv.iteration,
        "progress_file": str(inv.progress_file),
        "token_sha256": hashlib.sha256(inv.token.encode("utf-8")).hexdigest(),
    }


def seal(inv: Invocation) -> None:
    """End ``inv``: occupy its request path so a late directive is refused as closed."""
    doc = {"schema": protocol.REQUEST_SCHEMA, "schema_version": 1, "closed": True}
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(inv.request_file, flags, 0o600)
    except OSError:  # a directive (or anything else) already occupies the name
        return
    try:
        os.write(fd, json.dumps(doc).encode())
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Directive:
    """An authenticated directive: ``action`` and the agent's ``reason``."""

    action: str
    reason: str | None
    requested_at: str | None


def read_private_json(path: Path, directory: Path) -> tuple[dict[str, Any] | None, str | None]:
    """Read ``path`` as a private JSON object inside ``directory``.

    Returns:
        ``(doc, None)``; ``(None, None)`` when the file does not exist;
        ``(None, problem)`` when it is a symlink, not a regular file, not
        private (0600, this user), outside ``directory``, too large or not a
        JSON object.
    """
    if path.parent != directory:
        return None, f"{path.name} is outside the invocation directory {directory}"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if os.path.islink(path):
            return None, f"{path.name} is a symbolic link (it points outside the invocation)"
        return None, f"{path.name} cannot be read: {exc.strerror or exc}"
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None, f"{path.name} is not a regular file"
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None, f"{path.name} belongs to another user"
        if info.st_mode & 0o077:
            return None, f"{path.name} is readable or writable by other users (not 0600)"
        data = os.read(fd, _MAX_READ + 1)
    finally:
        os.close(fd)
    if len(data) > _MAX_READ:
        return None, f"{path.name} is larger than {_MAX_READ} bytes"
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):  # RecursionError: nested too deeply
        return None, f"{path.name} is not valid JSON"
    if not isinstance(doc, dict):
        return None, f"{path.name} is not a JSON object"
    return doc, None


def authenticate(doc: dict[str, Any], inv: Invocation, schema: str) -> str | None:
    """``None`` when ``doc`` belongs to ``inv``; otherwise why it is rejected.

    The token is compared together with run id, prompt id and iteration in
    constant time, so neither a wrong token nor a record replayed from another
    run, prompt or iteration is accepted.
    """
    if doc.get("schema") != schema:
        return f"schema {doc.get('schema')!r} is not {schema}"
    token, run_id, prompt_id = doc.get("token"), doc.get("run_id"), doc.get("prompt_id")
    iteration = doc.get("iteration")
    texts = (token, run_id, prompt_id)
    if not all(isinstance(x, str) for x in texts) or type(iteration) is not int:
        return "malformed identity: token, run_id and prompt_id must be text, iteration an integer"
    claimed = "\n".join((*texts, str(iteration)))  # type: ignore[arg-type]
    expected = "\n".join((inv.token, inv.run_id, inv.prompt_id, str(inv.iteration)))
    if not hmac.compare_digest(claimed.encode("utf-8"), expected.encode("utf-8")):
        if (doc.get("run_id"), doc.get("prompt_id"), iteration) != (
            inv.run_id,
            inv.prompt_id,
            inv.iteration,
        ):
            return (
                "identity mismatch: the record is for run "
                f"{doc.get('run_id')!r} prompt {doc.get('prompt_id')!r} iteration "
                f"{iteration!r}, not this invocation (a replay or a stale record)"
            )
        return "token mismatch: the record was not written with this invocation's token"
    return None


def read_directive(inv: Invocation) -> tuple[Directive | None, str | None]:
    """The authenticated directive of ``inv``: ``(directive, None)``, ``(None, None)``
    when none was issued, or ``(None, problem)`` when the request is rejected."""
    doc, problem = read_private_json(inv.request_file, inv.directory)
    if doc is None:
        return None, problem
    if doc.get("closed") is True:
        return None, None
    problem = authenticate(doc, inv, protocol.REQUEST_SCHEMA)
    if problem is not None:
        return None, problem
    action = doc.get("action")
    if action not in protocol.DIRECTIVES:
        return None, f"unknown directive {action!r}"
    reason = doc.get("reason")
    if reason is not None and not isinstance(reason, str):
        return None, "the reason is not text"
    if action in protocol.REASON_REQUIRED and not (reason or "").strip():
        return None, f"{action} without a reason"
    requested_at = doc.get("requested_at")
    return Directive(str(action), reason, str(requested_at) if requested_at else None), None


def read_progress(inv: Invocation) -> tuple[dict[str, Any] | None, str | None]:
    """The authenticated progress of ``inv`` (``run_id, prompt_id, iteration,
    cursor, unit, summary, updated_at``), ``(None, None)`` if none, or
    ``(None, problem)``."""
    doc, problem = read_private_json(inv.progress_file, inv.directory)
    if doc is None:
        return None, problem
    problem = authenticate(doc, inv, protocol.PROGRESS_SCHEMA)
    if problem is not None:
        return None, problem
    keys = ("run_id", "prompt_id", "iteration", "cursor", "unit", "summary", "updated_at")
    return {k: doc.get(k) for k in keys}, None


def discard_directive(inv: Invocation) -> bool:
    """Remove a directive written during a session whose verify failed."""
    try:
        os.unlink(inv.request_file)
    except FileNotFoundError:
        return False
    return True


def read_client_rejections(directory: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Lines the agent side appended to ``rejections.jsonl`` since ``offset``."""
    path = directory / protocol.REJECTIONS_NAME
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return [], offset
    complete = data[: data.rfind(b"\n") + 1]
    out: list[dict[str, Any]] = []
    for line in complete.splitlines():
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested too deeply to decode
            continue
        if isinstance(doc, dict):
            out.append(doc)
    return out, offset + len(complete)


def progress_view(
    progress: dict[str, Any] | None, run_id: str, prompt_id: str, iteration: int
) -> dict[str, Any] | None:
    """``progress`` labelled ``stale`` unless it is from this run, prompt and iteration."""
    if progress is None:
        return None
    current = (progress.get("run_id"), progress.get("prompt_id"), progress.get("iteration"))
    return {**progress, "stale": current != (run_id, prompt_id, iteration)}
