"""The ``prompt-runner`` command line: parse, call one library function, map to an exit code.

This module is imported on every start, so it imports only the standard
library's ``sys``; the error mapping (``cli/exits.py``) and the parser
(``cli/parser.py``, argparse) load only for a command that is parsed, and
each command's handler lives in a module of this package that is imported
only when that command runs (the hot paths ``status``, ``control`` and
``agent-control`` never import pydantic). ``agent-control`` is dispatched
first, to its own small entry point (``cli/agentctl.py``), which answers
with the directive protocol's exit codes.

Exit codes (SPEC 10): 0 success, 1 the work failed, 2 bad usage or input,
3 infrastructure fault; an interrupting signal exits ``128 + signal number``
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP). Errors print one sentence; ``--debug``
(anywhere on the line) adds the traceback. :func:`.exits.run_wrapper` is the
one place that maps what a command raised to its exit code.

Prompt ids may follow flags (``run P --no-commit 03``) and the packet
defaults to the current directory: see ``cli/positionals.py``.
"""

from __future__ import annotations

import os
import sys

from .. import __version__

TYPE_CHECKING = False

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .exits import Invocation


def _strip_debug(args_list: list[str]) -> tuple[list[str], bool]:
    """Remove every ``--debug`` before a ``--`` separator; return ``(rest, debug)``."""
    cut = args_list.index("--") if "--" in args_list else len(args_list)
    head = args_list[:cut]
    rest = [a for a in head if a != "--debug"] + args_list[cut:]
    return rest, len(rest) != len(args_list)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``prompt-runner``; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list in (["--version"], ["-v"]):
        sys.stdout.write(f"{__version__}\n")
        return 0
    if args_list[:1] == ["agent-control"]:
        # lazy: the agent's hot path has its own small parser, no full CLI tree.
        from .agentctl import main as agent_control_main

        # --debug is accepted anywhere on any command line (it adds nothing here).
        return agent_control_main([a for a in args_list[1:] if a != "--debug"])
    args_list, debug = _strip_debug(args_list)
    from ..errors import SHOWN_FROM_ENV, show_paths_from
    from ..state.layout_text import STATE_DIR_ENV  # the standard library only
    from .exits import Invocation, run_wrapper  # lazy: --version and agent-control need neither

    invocation = Invocation(json="--json" in args_list, debug=debug)
    # ``--state-dir``/``--workspace`` export the state directory for the
    # command's own children (state_args.place_state); a caller that runs
    # several commands in one process gets its environment back after each.
    kept = os.environ.get(STATE_DIR_ENV)
    # A runner ``start`` launched names files as its starter sees them; its own
    # children (agents, verify commands) do not inherit where that was.
    show_paths_from(os.environ.pop(SHOWN_FROM_ENV, None))
    try:
        return run_wrapper(lambda: _answer(args_list, invocation), invocation)
    finally:
        if kept is None:
            os.environ.pop(STATE_DIR_ENV, None)
        else:
            os.environ[STATE_DIR_ENV] = kept


def _answer(args_list: list[str], invocation: Invocation) -> int:
    """The argparse-free answer to ``args_list`` (``cli/fast.py``: a kept ``status
    --json`` or ``list`` text, ``control status --json``), else the command's;
    its exit code."""
    if args_list[:1] in (["status"], ["list"]) or args_list[:2] == ["control", "status"]:
        from .fast import serve  # lazy: only the commands with an argparse-free path

        code = serve(args_list)
        if code is not None:
            _read_only_answer()
            return code
    if args_list[:1] == ["watch"] and "--once" in args_list:
        from .watching import serve_once  # lazy: `watch --once`'s argparse-free path

        code = serve_once(args_list)
        if code is not None:
            _read_only_answer()
            return code
    if args_list[:1] == ["list"]:
        from . import kept_output  # lazy: only list keeps its output

        recorder = kept_output.start(args_list)  # records what the command reads
        if recorder is not None:
            try:
                code = _command(args_list, invocation)
            finally:
                recorder.stop()
            if code == 0:
                recorder.keep()
            return code
    return _command(args_list, invocation)


def _command(args_list: list[str], invocation: Invocation) -> int:
    """Parse ``args_list`` and run its command's handler; its exit code."""
    # lazy: argparse and the parser tree load only for a command that is parsed
    from .parser import build_parser
    from .positionals import absorb_leftovers, place_packet
    from .state_args import place_state

    parser = build_parser(args_list)
    args, leftovers = parser.parse_known_args(args_list)
    if leftovers:
        absorb_leftovers(parser, args, leftovers)
    place_state(args)
    place_packet(parser, args)
    invocation.json = bool(getattr(args, "json", False))
    if args.version:
        sys.stdout.write(f"{__version__}\n")
        return 0
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    module_name, func_name = handler.split(":")
    name = f"prompt_runner.cli.{module_name}"
    __import__(name)  # importlib.import_module, without importing importlib and warnings
    module = sys.modules[name]
    code: int = getattr(module, func_name)(args)
    return code


_ANSWERED_READ_ONLY = False
"""Set once an argparse-free reporting path answered (:func:`_read_only_answer`)."""


def _read_only_answer() -> None:
    """Mark the command as answered by a reporting fast path (``status``, ``list``,
    ``control status``, ``watch --once``): it read files, printed, and wrote at
    most a kept text it closed, so :func:`leave` may skip finalizing."""
    global _ANSWERED_READ_ONLY
    _ANSWERED_READ_ONLY = True


def entry() -> None:
    """The console scripts' entry point (``prompt-runner``, ``prompt_runner``):
    :func:`main` with ``sys.argv``, left through :func:`leave`, as ``python -m
    prompt_runner`` is. Raises ``SystemExit`` with the exit code."""
    arm_quick_exit()
    sys.exit(leave(main()))


_LEAVING: int | None = None
"""The exit code :func:`leave` chose, for the last exit handler (:func:`_quick_exit`)."""
_ARMED = False


def arm_quick_exit() -> None:
    """Register :func:`_quick_exit` with :mod:`atexit` before anything else of
    the command does. Exit handlers run last-registered first, so it runs after
    every other one -- the run lock's release, deferred state writes, a
    temporary directory's finalizer -- and after non-daemon threads were joined:
    only the teardown of the interpreter's modules and objects is skipped, which
    holds nothing of the user's (every record is written and synced before a
    command returns) and costs ~70-80 ms after a ``run`` (pydantic's and the
    runner's objects; measured ``main`` return to process exit, 2 cores, load
    ~1: 68-82 ms, 4-5 ms without it). Armed only when no exit handler was
    registered before it. Call once, first thing, from a console
    entry point (``entry``, ``__main__``); never from :func:`main`, which library
    callers and tests run in-process."""
    global _ARMED
    if _ARMED:
        return
    import atexit  # the standard library's; cheap, and only on a console start

    # A handler registered before this one (a ``sitecustomize``'s: coverage.py
    # saving its data, say) would run after it, that is never: then the
    # interpreter is left to end as it always does. CPython counts them
    # (``_ncallbacks``); without the count, nothing is armed.
    count = getattr(atexit, "_ncallbacks", None)
    if count is None or count() != 0:
        return
    atexit.register(_quick_exit)
    _ARMED = True


def _quick_exit() -> None:
    """The last exit handler: end the process with :func:`leave`'s code once the
    output is out, without tearing the interpreter down. Does nothing when the
    command did not return through :func:`leave` (an exception is on its way
    out: the interpreter ends as it always does)."""
    if _LEAVING is not None:
        _flush_and_exit(_LEAVING)


def _flush_and_exit(code: int) -> None:
    """Flush the standard streams and end the process with ``code`` at once."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed or broken pipe: nothing more can go out
        pass
    os._exit(code)


def leave(code: int) -> int:
    """``code``, the command's exit code, on its way out of a console start.

    The interpreter is not finalized (``os._exit`` once the output is flushed):

    * at once when the Temporal SDK was loaded (the fleet commands of ``engine:
      temporal``) -- the SDK's core threads can abort a finalizing interpreter
      ("PyGILState_Release ... finalizing", temporalio/sdk-python#300) -- and
      when a reporting fast path answered (:func:`_read_only_answer`): it holds
      nothing to finalize (~2 ms of a ~45 ms ``watch --once``: 46.3 -> 44.5 ms,
      median of 25, load ~0.7);
    * otherwise after every exit handler, when :func:`arm_quick_exit` armed it.

    Only the console scripts and ``python -m prompt_runner`` leave through here;
    :func:`main` called in-process always returns."""
    global _LEAVING
    if "temporalio" in sys.modules or _ANSWERED_READ_ONLY:
        _flush_and_exit(code)
    if _ARMED:
        _LEAVING = code
    return code
