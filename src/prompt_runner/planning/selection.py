"""Prompt selection and dependency ordering (SPEC 3.2; catalog A, F2).

Selectors, in precedence order: explicit ids (in the given order; they win
over ``--remaining``), ``--remaining`` (every prompt whose recorded status is
not ``completed``), API ``continue`` (after the highest completed prompt),
``--phase``, ``--from``/``--through`` (inclusive, by file order), else all.
A completion judged under a contract the prompt file no longer has arrives
here as ``contract_changed`` (``lifecycle.reopen_changed_contracts``) and
``--remaining`` selects it, with a note.
Selected prompts are then ordered topologically by ``depends_on``; independent
prompts keep their selection order. Unknown ids and cycles are errors, and
so are contradictory selectors: explicit ids with ``--from``/``--through``/
``--phase`` (which would silently lose one of them), and ``--all`` with
``--remaining``. ``--from``/``--through`` with ``--remaining`` narrows.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import UserError
from ..packet.loader import Packet, unknown_prompt_id
from ..packet.phase_order import later_phase_dependencies
from .options import RunOptions


def normalize_id(raw: str, known: list[str]) -> str:
    """Trim ``raw``; a numeric id that is not known as written is the one known
    numeric id of the same number, when there is exactly one: "3" -> "03" or
    "003", and "03" -> "3" (a packet whose ids are "1", "2", ... named by a
    command that pads, e.g. a control request). Otherwise ``raw`` trimmed."""
    value = raw.strip()
    if value not in known and value.isdigit():
        same = [k for k in known if k.isdigit() and int(k) == int(value)]
        if len(same) == 1:
            return same[0]
    return value


def _known_or_error(packet: Packet, raw: str, what: str) -> str:
    known = packet.ids()
    value = normalize_id(raw, known)
    if value not in known:
        raise unknown_prompt_id(packet, value, what)
    return value


def select_prompts(
    packet: Packet, options: RunOptions, progress: Mapping[str, str]
) -> tuple[list[str], list[str]]:
    """Return ``(selected ids in execution order, notes)``.

    Args:
        progress: prompt id -> last recorded status.

    Raises:
        UserError: unknown id or bound, inverted bounds, dependency cycle,
            contradictory selectors.
    """
    check_selectors(options)
    notes: list[str] = []
    if options.ids:
        selected = _explicit(packet, options.ids)
    else:
        selected = _in_bounds(packet, options.from_id, options.through_id)
        if options.phase is not None:
            selected = _in_phase(packet, selected, str(options.phase).strip())
        if options.remaining:
            selected = _unfinished(selected, progress, notes)
        elif options.continue_run:
            selected = _after_last_completed(packet.ids(), selected, progress, notes)
    check_cycles(packet)
    ordered = topo_order(packet, selected)
    notes.extend(phase_order_notes(packet, ordered))
    return ordered, notes


def _explicit(packet: Packet, raw_ids: tuple[str, ...]) -> list[str]:
    """Explicit ids, in the given order, each once."""
    selected: list[str] = []
    for raw in raw_ids:
        value = _known_or_error(packet, raw, "")
        if value not in selected:
            selected.append(value)
    return selected


def _in_bounds(packet: Packet, from_id: str | None, through_id: str | None) -> list[str]:
    """The ids from ``--from`` through ``--through`` (inclusive, file order)."""
    ids = packet.ids()
    if from_id is None and through_id is None:
        return list(ids)
    # `is not None`: an empty --from "" is an unknown id, not "from the first"
    lo = _known_or_error(packet, from_id, "--from") if from_id is not None else ids[0]
    hi = _known_or_error(packet, through_id, "--through") if through_id is not None else ids[-1]
    a, b = ids.index(lo), ids.index(hi)
    if a > b:
        raise UserError(
            f"invalid prompt bounds: --from {lo} comes after --through {hi}",
            fix="swap the bounds",
        )
    return ids[a : b + 1]


def _in_phase(packet: Packet, selected: list[str], phase: str) -> list[str]:
    """The ids of ``selected`` in ``phase`` (a phase no prompt has is an error)."""
    if not any(p.phase == phase for p in packet.prompts):
        phases = sorted({p.phase for p in packet.prompts if p.phase is not None})
        raise UserError(
            f"no prompt has phase {phase!r}",
            key="--phase",
            fix=f"use one of: {', '.join(phases) or '(no phases)'}",
        )
    return [i for i in selected if packet.prompt(i).phase == phase]


def _unfinished(selected: list[str], progress: Mapping[str, str], notes: list[str]) -> list[str]:
    """``--remaining``: every prompt not recorded ``completed`` (a note names the reopened)."""
    selected = [i for i in selected if progress.get(i) != "completed"]
    reopened = [i for i in selected if progress.get(i) == "contract_changed"]
    if reopened:
        notes.append(
            f"{', '.join(reopened)} completed under a contract that has changed since "
            "(amended with --persist or edited): --remaining runs "
            f"{'it' if len(reopened) == 1 else 'them'} again."
        )
    rerun = [i for i in selected if progress.get(i) == "interrupted_rerun"]
    if rerun:
        notes.append(
            f"{', '.join(rerun)} completed before, but a later run re-ran "
            f"{'it' if len(rerun) == 1 else 'them'} and was interrupted: --remaining runs "
            f"{'it' if len(rerun) == 1 else 'them'} again."
        )
    return selected


def _after_last_completed(
    ids: list[str], selected: list[str], progress: Mapping[str, str], notes: list[str]
) -> list[str]:
    """API ``continue``: the prompts after the highest completed one (a note names
    the unfinished ones it skips)."""
    done = [i for i in ids if progress.get(i) == "completed"]
    if not done:
        return selected
    last = ids.index(done[-1])
    skipped = [i for i in ids[:last] if progress.get(i) != "completed"]
    if skipped:
        notes.append(
            "continue resumes after the last completed prompt and is skipping "
            f"{', '.join(skipped)}, which "
            f"{'is' if len(skipped) == 1 else 'are'} not completed. "
            "Use --remaining to run every unfinished prompt."
        )
    return [i for i in selected if ids.index(i) > last]


def phase_order_notes(packet: Packet, ordered: list[str]) -> list[str]:
    """What ``later_phase_dependencies`` does to this selection, one note per edge."""
    chosen = set(ordered)
    notes = []
    for prompt, dep in later_phase_dependencies(packet):
        if prompt.id not in chosen:
            continue
        if dep.id in chosen:
            notes.append(
                f"prompt {prompt.id} (phase {prompt.phase}) depends on {dep.id} (phase "
                f"{dep.phase}), so {dep.id} runs before {prompt.id}, ahead of its phase; "
                f"move {dep.id} into phase {prompt.phase} or drop the dependency"
            )
        else:
            notes.append(
                f"prompt {prompt.id} (phase {prompt.phase}) depends on {dep.id} (phase "
                f"{dep.phase}), which this selection does not run: {prompt.id} is blocked "
                f"unless {dep.id} has completed"
            )
    return notes


def check_selectors(options: RunOptions) -> None:
    """Refuse selector combinations where one selector would silently lose.

    Raises:
        UserError: explicit ids with ``--from``/``--through``/``--phase``, or
            ``--all`` with ``--remaining``.
    """
    ranged = [
        flag
        for flag, value in (
            ("--from", options.from_id),
            ("--through", options.through_id),
            ("--phase", options.phase),
        )
        if value is not None
    ]
    if options.ids and ranged:
        named = ", ".join(map(str, options.ids))
        raise UserError(
            f"prompt ids ({named}) cannot be combined with {', '.join(ranged)}",
            fix="name prompt ids or use --from/--through/--phase, not both",
        )
    if options.ids and options.select_all:
        raise UserError(
            f"prompt ids ({', '.join(map(str, options.ids))}) cannot be combined with --all",
            fix="name prompt ids, or pass --all to run every prompt, not both",
        )
    if options.select_all and options.remaining:
        raise UserError(
            "--all and --remaining contradict each other",
            fix="use --all to run every prompt, or --remaining for the unfinished ones, not both",
        )


def check_cycles(packet: Packet) -> None:
    """Raise :class:`UserError` naming the cycle if ``depends_on`` has one."""
    graph = {p.id: list(p.front.depends_on) for p in packet.prompts}
    state: dict[str, int] = {}
    stack: list[str] = []
    for node in graph:
        if state.get(node) is None:
            _visit(packet, graph, state, stack, node)


def _visit(
    packet: Packet, graph: dict[str, list[str]], state: dict[str, int], stack: list[str], node: str
) -> None:
    """:func:`check_cycles`' depth-first walk from ``node`` (``state``: 1 on the
    stack, 2 done). A module function, not a closure calling itself: that is a
    reference cycle, which kept the packet alive until the cycle collector ran."""
    state[node] = 1
    stack.append(node)
    for dep in graph.get(node, []):
        if state.get(dep) == 1:
            cycle = stack[stack.index(dep) :]
            raise UserError(
                f"dependency cycle [{', '.join(cycle)}]",
                file=packet.prompt(node).file,
                key="depends_on",
                fix="remove one of the depends_on edges",
            )
        if state.get(dep) is None:
            _visit(packet, graph, state, stack, dep)
    stack.pop()
    state[node] = 2


def topo_order(packet: Packet, selected: list[str]) -> list[str]:
    """Order ``selected`` so dependencies come first; otherwise keep selection order."""
    chosen = set(selected)
    placed: list[str] = []
    done: set[str] = set()
    for node in selected:
        _place(packet, chosen, done, placed, node)
    return placed


def _place(packet: Packet, chosen: set[str], done: set[str], placed: list[str], node: str) -> None:
    """:func:`topo_order`'s walk: ``node`` after its chosen dependencies (a module
    function for the reason :func:`_visit` is)."""
    if node in done:
        return
    done.add(node)
    for dep in packet.prompt(node).front.depends_on:
        if dep in chosen:
            _place(packet, chosen, done, placed, dep)
    placed.append(node)
