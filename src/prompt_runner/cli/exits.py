"""The one place that maps what a command raised to its exit code (SPEC 10).

Like pip's ``cli/base_command._run_wrapper``: :func:`run_wrapper` runs a whole
command -- parsing included -- and turns whatever escapes it into one sentence
on stderr (plus, with ``--json``, one error document on stdout) and an exit
code:

==========================  ===================================================
raised                      exit code
==========================  ===================================================
:class:`UsageError`         2, said as argparse says it (the parser's refusal)
``PromptRunnerError``       its ``exit_code``: 1, 2 (``UserError``) or 3
                            (``InfrastructureError``)
``KeyboardInterrupt``       128 + the signal's number (130 Ctrl-C, 143
                            SIGTERM, 129 SIGHUP)
``BrokenPipeError``         0 (the reader went away)
any other ``OSError``       3, said as a ``StorageError``
anything else               1, "internal error ... a bug"
==========================  ===================================================

``--debug`` adds the traceback (and lets an ``OSError`` or a bug propagate).
Every command goes through here except ``agent-control``, the agent's side of
the directive protocol: ``cli/main.py`` hands it to ``cli/agentctl.py`` before
anything else loads, and its refusals carry the protocol's own exit codes
(``agent/protocol.py``: 1 refused, 2 bad input, 3 the file could not be written).
Imports the standard library's ``sys`` and :mod:`..errors` only.
"""

from __future__ import annotations

import os
import sys

from ..errors import InfrastructureError, PromptRunnerError, StorageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable


class UsageError(PromptRunnerError):
    """The command line is wrong (argparse refused it): exit 2.

    The message is argparse's, followed by where the usage is
    (``...; see `prompt-runner run --help```), and is printed as is.
    """

    exit_code = 2


class Invocation:
    """What the error mapping needs to know about the command being run.

    Attributes:
        json: the command promised one JSON document on stdout (``--json``
            anywhere on the line until it is parsed, then the parsed flag).
        debug: ``--debug`` was given.
    """

    def __init__(self, *, json: bool, debug: bool) -> None:
        self.json = json
        self.debug = debug


def run_wrapper(call: Callable[[], int], invocation: Invocation) -> int:
    """Run ``call`` (a whole command) and return its exit code, or the one for
    what it raised (the table above)."""
    try:
        return call()
    except UsageError as exc:
        # said as argparse says it; nothing was printed before the line was parsed
        _say(exc, invocation, printable=False, printed=False)
        return exc.exit_code
    except PromptRunnerError as exc:
        if invocation.debug:
            import traceback  # lazy: only an error shown with --debug needs it

            traceback.print_exc()
        return _said(exc, invocation)
    except KeyboardInterrupt as exc:
        return _interrupted(exc, invocation)
    except BrokenPipeError:
        return 0
    except OSError as exc:
        # An I/O fault no layer below named (full or read-only disk, a file where
        # a directory should be): an infrastructure fault, said in one sentence.
        if invocation.debug:
            raise
        if exc.filename is None and _cwd_gone():
            # os.getcwd() failed somewhere (relative paths are shown from it)
            return _said(
                InfrastructureError(
                    "the current directory no longer exists (deleted or moved away); "
                    "cd to an existing directory and run again"
                ),
                invocation,
            )
        return _said(StorageError(exc.filename or "a file", exc, doing="used"), invocation)
    except Exception as exc:  # the last door: never a bare traceback without --debug
        if invocation.debug:
            raise
        sys.stderr.write(
            f"internal error: {exc!r}; this is a bug in prompt-runner, rerun with --debug "
            "and report the traceback\n"
        )
        return 1


def _cwd_gone() -> bool:
    """Whether this process's current directory was deleted under it."""
    try:
        os.getcwd()
    except FileNotFoundError:
        return True
    return False


def _said(exc: PromptRunnerError, invocation: Invocation) -> int:
    _say(exc, invocation, printable=True)  # file names in the sentence are shown printable
    return exc.exit_code


def _say(
    exc: PromptRunnerError, invocation: Invocation, *, printable: bool, printed: bool = True
) -> None:
    """``error: SENTENCE`` on stderr; with ``--json``, the error document on stdout
    unless the command may have ``printed`` its document already and did."""
    from ._out import emit_error, json_emitted, warn  # lazy: rendering loads on an error only

    if printable:
        warn(f"error: {exc}")
    else:
        sys.stderr.write(f"error: {exc}\n")
    if invocation.json and not (printed and json_emitted()):
        # --json promises one JSON document on stdout, failures included.
        emit_error({"error": str(exc), "exit_code": exc.exit_code, "kind": type(exc).__name__})


def _interrupted(exc: KeyboardInterrupt, invocation: Invocation) -> int:
    # SignalInterrupt (cli/running.py) carries SIGTERM/SIGHUP; plain Ctrl-C is SIGINT (2).
    signum = int(getattr(exc, "signum", 2))
    sys.stderr.write("interrupted\n" if signum == 2 else f"terminated (signal {signum})\n")
    from ._out import emit_error, json_emitted  # lazy: rendering loads on an interrupt only

    if invocation.json and not json_emitted():
        # --json promises one document on stdout, an interrupted command too.
        import signal  # lazy: only an interrupted --json command names its signal

        name = signal.Signals(signum).name
        emit_error(
            {
                "error": f"interrupted by {name}",
                "exit_code": 128 + signum,
                "kind": "Interrupted",
                "signal": name,
            }
        )
    return 128 + signum
