"""The run options, each declared once: its name, its flag, its choices and its help.

One :class:`Opt` per field of :class:`~prompt_runner.planning.RunOptions`, in
the order ``run --help`` lists the flags. An option's ``name`` is the
RunOptions field, the keyword argument of :func:`prompt_runner.run`,
:func:`~prompt_runner.plan` and :func:`~prompt_runner.repair`, and the
argparse ``dest``; ``flags`` are what ``run``, ``plan`` and ``repair`` take
(``cli/run_flags.py`` builds them from this table; no flags: library only);
``choices`` come from the ``Literal`` types below, which RunOptions and the
packet models (``packet/model_types.py``) annotate the same keys with.

Like nox's ``_option_set.Option``, but data only: the CLI turns an option into
argparse arguments, the library checks keyword arguments against the names
(``api_options.py``). The CLI imports this module on every start (``--help``
and ``status`` build the ``run`` parser too), so it imports ``typing`` only,
and without ``from __future__ import annotations``: NamedTuple would compile
each field's annotation from its string (1.3 ms of CPU at every start).
"""

from typing import Literal, NamedTuple, get_args

PermissionMode = Literal["default", "auto", "bypass", "plan"]
LogMode = Literal["compact", "verbose", "studio"]
LogMetaMode = Literal["none", "full"]
EventsMode = Literal["compact", "full", "off"]
ToolOutput = Literal["none", "summary", "preview", "full"]
Thinking = Literal["show", "hide"]
DiffMode = Literal["none", "stat", "full"]
CliConfirmation = Literal["off", "warn", "require"]
RuntimeStoreKind = Literal["file", "memory", "noop"]
CommitterKind = Literal["git", "noop"]
PushPolicy = Literal["explicit", "after_prompt"]

OptKind = Literal["value", "switch", "pair"]


class Opt(NamedTuple):
    """One run option.

    Attributes:
        name: the RunOptions field, library keyword and parsed ``dest``.
        flags: the CLI flags; ``()`` for an option only the library takes.
            A ``pair`` has two: the one that sets True, the one that sets False.
        help: the flag's help line (``None``: the flag has none).
        choices: the values a ``value`` option accepts (``None``: any text).
        kind: ``value`` takes a value; ``switch`` is True when given;
            ``pair`` is True, False or not given (None).
        metavar: the value's name in ``--help`` (``None``: argparse's).
        bare: what the flag means given without a value (``--log-meta`` is
            ``full``); ``None``: a value is required.
        aliases: other keyword names the library accepts for it (``all``).
    """

    name: str
    flags: tuple[str, ...] = ()
    help: str | None = None
    choices: tuple[str, ...] | None = None
    kind: OptKind = "value"
    metavar: str | None = None
    bare: str | None = None
    aliases: tuple[str, ...] = ()


RUN_OPTIONS: tuple[Opt, ...] = (
    Opt("profile", ("--profile",)),
    Opt("provider", ("--provider",)),
    Opt("model", ("--model",)),
    Opt("reasoning_effort", ("--reasoning-effort",)),
    Opt("permission_mode", ("--permission-mode",), choices=get_args(PermissionMode)),
    Opt("timeout", ("--timeout",), help="session timeout in ms, or 'unbounded'"),
    Opt("log_mode", ("--log-mode",), choices=get_args(LogMode)),
    Opt(
        "log_meta",
        ("--log-meta",),
        help="full: print the provider's stderr and failure detail (bare --log-meta = full)",
        choices=get_args(LogMetaMode),
        bare="full",
    ),
    Opt("events_mode", ("--events-mode",), choices=get_args(EventsMode)),
    Opt("tool_output", ("--tool-output",), choices=get_args(ToolOutput)),
    Opt("thinking", ("--thinking",), choices=get_args(Thinking)),
    Opt("diff", ("--diff",), choices=get_args(DiffMode)),
    Opt("cli_confirmation", ("--cli-confirmation",), choices=get_args(CliConfirmation)),
    Opt("runtime_store", ("--runtime-store",), choices=get_args(RuntimeStoreKind)),
    Opt(
        "state_dir",
        ("--state-dir",),
        help="keep the run's state in DIR, not in <packet>/.prompt_runner "
        "(default: $PROMPT_RUNNER_STATE_DIR)",
        metavar="DIR",
    ),
    Opt("committer", ("--committer",), choices=get_args(CommitterKind)),
    Opt(
        "push",
        ("--push",),
        help="after_prompt: push the work branch after each committed prompt",
        choices=get_args(PushPolicy),
    ),
    Opt(
        "max_run_cost_usd",
        ("--max-run-cost-usd",),
        help="stop the run once its sessions reported this much cost",
        metavar="USD",
    ),
    Opt("skip_preflight", ("--skip-preflight",), kind="switch"),
    Opt("no_commit", ("--no-commit",), kind="switch"),
    Opt("dry_run", ("--dry-run",), kind="switch"),
    Opt("select_all", ("--all",), kind="switch", aliases=("all",)),
    Opt("remaining", ("--remaining",), kind="switch"),
    Opt("new_run", ("--new-run",), kind="switch"),
    Opt("keep_going", ("--keep-going",), kind="switch"),
    Opt("verify_first", ("--verify-first", "--no-verify-first"), kind="pair"),
    Opt("phase", ("--phase",)),
    Opt("from_id", ("--from",)),
    Opt("through_id", ("--through",)),
    # Without flags: the prompt ids are the commands' ID arguments, and
    # continue_run (resume after the highest completed prompt) is the library's.
    Opt("ids"),
    Opt("continue_run", kind="switch"),
)
"""Every run option, in ``run --help``'s order."""

BY_NAME: dict[str, Opt] = {opt.name: opt for opt in RUN_OPTIONS}
"""Each option by its name."""

ALIASES: dict[str, str] = {alias: opt.name for opt in RUN_OPTIONS for alias in opt.aliases}
"""Each alias the library accepts -> the option's name (``all`` -> ``select_all``)."""

FLAGGED: tuple[Opt, ...] = tuple(opt for opt in RUN_OPTIONS if opt.flags)
"""The options ``run``, ``plan`` and ``repair`` take as flags."""
