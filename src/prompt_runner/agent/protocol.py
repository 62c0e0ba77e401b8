"""The names both halves of agent control share, and the invocation an agent was given.

A controlled invocation gives the provider process six environment variables
(:data:`ENV_NAMES`); the agent side (:mod:`.client`) reads them back with
:func:`invocation_from_env`, which checks that the files it names sit in one
private directory of this user. The runner side (:mod:`.invocation`) creates
that directory and authenticates what the agent wrote. The schemas, the
directive names and the ``agent-control`` exit codes are defined here once.

Only the standard library is imported, and little of it: this is the agent's
hot path (``bench/agent_control_cli.py``).
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False

if TYPE_CHECKING:  # annotations only: typing stays off the hot path
    from collections.abc import Mapping
    from typing import Any

ENV_FILE = "PROMPT_RUNNER_AGENT_CONTROL_FILE"
ENV_PROGRESS = "PROMPT_RUNNER_AGENT_PROGRESS_FILE"
ENV_TOKEN = "PROMPT_RUNNER_AGENT_CONTROL_TOKEN"
ENV_RUN = "PROMPT_RUNNER_RUN_ID"
ENV_PROMPT = "PROMPT_RUNNER_PROMPT_ID"
ENV_ITERATION = "PROMPT_RUNNER_PROMPT_ITERATION"
ENV_NAMES = (ENV_FILE, ENV_PROGRESS, ENV_TOKEN, ENV_RUN, ENV_PROMPT, ENV_ITERATION)

REQUEST_SCHEMA = "prompt_runner.agent_control/request/v1"
PROGRESS_SCHEMA = "prompt_runner.agent_control/progress/v1"
REQUEST_RECEIPT = "prompt_runner.agent_control.request/receipt/v1"
PROGRESS_RECEIPT = "prompt_runner.agent_control.progress/receipt/v1"
REJECTIONS_NAME = "rejections.jsonl"

DIRECTIVES = ("continue", "repeat", "finish", "blocked")
REASON_REQUIRED = ("finish", "blocked")
MAX_FIELD = 4000  # characters kept of a reason / summary / cursor

EXIT_REFUSED = 1
EXIT_BAD_INPUT = 2
EXIT_IO = 3


class AgentControlError(Exception):
    """A refused ``agent-control`` call.

    Attributes:
        exit_code: 1 refused (a directive already exists, the invocation is
            closed, the files are not private), 2 bad input (missing
            environment, blank ``--cursor``/``--summary``/``--reason``), 3 the
            file could not be written.
    """

    def __init__(self, message: str, exit_code: int = EXIT_BAD_INPUT) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class Invocation:
    """The invocation identity an agent process was given (from its environment).

    Attributes:
        request_file, progress_file: absolute paths, or ``None`` when unset.
        token: the opaque invocation token.
        run_id, prompt_id: the run and prompt the invocation belongs to.
        iteration: the 1-based iteration number.
    """

    __slots__ = ("iteration", "progress_file", "prompt_id", "request_file", "run_id", "token")

    def __init__(
        self,
        request_file: str | None,
        progress_file: str | None,
        token: str,
        run_id: str,
        prompt_id: str,
        iteration: int,
    ) -> None:
        self.request_file = request_file
        self.progress_file = progress_file
        self.token = token
        self.run_id = run_id
        self.prompt_id = prompt_id
        self.iteration = iteration

    def identity(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "prompt_id": self.prompt_id, "iteration": self.iteration}


def now_iso() -> str:
    """UTC now as ISO 8601 with milliseconds and ``Z``."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def invocation_from_env(env: Mapping[str, str], *, need: tuple[str, ...]) -> Invocation:
    """Read the invocation from ``env``, requiring the variables in ``need``.

    Raises:
        AgentControlError: (exit 2) a needed variable is unset or blank -- the
            message names every missing one; the iteration is not a positive
            integer; a file path is relative. (exit 1) the request and progress
            files are not in one private directory owned by this user.
    """
    missing = [name for name in need if not env.get(name, "").strip()]
    if missing:
        raise AgentControlError(
            "not inside a live agent-control invocation: missing environment "
            f"{', '.join(missing)}; run this command from the agent session Prompt Runner "
            "started"
        )
    raw_iteration = env.get(ENV_ITERATION, "").strip()
    try:
        iteration = int(raw_iteration)
    except ValueError:
        iteration = 0
    if iteration < 1:
        raise AgentControlError(
            f"{ENV_ITERATION}={raw_iteration!r} is not a positive integer; use the value "
            "Prompt Runner set"
        )
    files: list[str | None] = []
    for name in (ENV_FILE, ENV_PROGRESS):
        value = env.get(name, "").strip() or None
        if value is not None and not os.path.isabs(value):
            raise AgentControlError(
                f"{name}={value!r} is not an absolute path; use the value Prompt Runner set"
            )
        files.append(value)
    request_file, progress_file = files
    dirs = {os.path.dirname(f) for f in files if f is not None}
    if len(dirs) > 1:
        raise AgentControlError(
            f"{ENV_FILE} is outside the invocation directory of {ENV_PROGRESS}; "
            "use the paths Prompt Runner set",
            EXIT_REFUSED,
        )
    for directory in dirs:
        check_private_dir(directory)
    return Invocation(
        request_file,
        progress_file,
        env.get(ENV_TOKEN, "").strip(),
        env.get(ENV_RUN, "").strip(),
        env.get(ENV_PROMPT, "").strip(),
        iteration,
    )


def check_private_dir(directory: str) -> None:
    """Raise :class:`AgentControlError` (exit 1) unless ``directory`` is a directory of
    this user that no other user may write to."""
    try:
        info = os.lstat(directory)
    except OSError:
        raise AgentControlError(
            f"the invocation directory {directory} does not exist; the invocation is over or "
            "the path is wrong",
            EXIT_REFUSED,
        ) from None
    import stat  # lazy: only once the directory exists (the agent's hot path)

    if not stat.S_ISDIR(info.st_mode):
        raise AgentControlError(
            f"the invocation directory {directory} is not a directory", EXIT_REFUSED
        )
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise AgentControlError(
            f"the invocation directory {directory} belongs to another user", EXIT_REFUSED
        )
    if info.st_mode & 0o022:
        raise AgentControlError(
            f"the invocation directory {directory} is writable by other users", EXIT_REFUSED
        )
