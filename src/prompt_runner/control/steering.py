"""Steers of one run (SPEC 5): accepted, queued, delivered, recorded, counted.

An accepted steer is queued and the live session interrupted
(``handle.interrupt()``); the attempt loop then calls
:meth:`~prompt_runner.control.plane.ControlPlane.take_steer` and resumes the
same provider session with the steer as its next message. A steer read at a
boundary -- it arrived while the prompt's last session was being verified --
goes to the prompt's next session when one follows (a repair, a retry, a
resume): the attempt loop takes it with ``take_queued_steers`` and puts it
into that session's prompt (delivery ``next_session``). When no session
follows, it is refused with that reason -- and so is a steer read as a
prompt ends (it arrived while its work was committed: ``stage`` names what it
was being). A steer is not an attempt and spends no retry or repair budget;
its own budget is ``recovery.max_steers`` per invocation of a prompt, as the
retry and repair budgets are: each time a run (or a resumed run) executes the
prompt, :meth:`Steers.start_invocation` gives it a fresh budget. The prompt's
``steer_count`` (its record, the snapshot) stays the run's total.

An accepted steer outlives its runner. Its control log line (the commit point
of its decision) names it, and its delivery appends it to ``interventions/``;
a steer of this run that the log has as applied and no interventions line
has as delivered -- a stop or a crash ended the run before its session read
it -- is queued again by the resumed run (:meth:`Steers.carry_over`, as the
plane starts) for the prompt's next session, so its ``applied`` receipt stays
true (it was counted against the budget of the invocation that accepted it,
not the next one's).

A delivered steer is one line of ``<state_root>/interventions/<prompt_id>.jsonl``::

    {"text", "prompt", "attempt", "author", "lane", "delivery", "at", "run_id", "request"}

and the prompt's record gets ``steered``, ``steer_count`` and
``interventions_file``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..state.jsonl import read_from
from ..state.layout import StateLayout
from .audit import append_record_line
from .decisions import refuse
from .plane_files import as_int

if TYPE_CHECKING:
    from ..state.store import RuntimeStore

DELIVERY = "interrupt_and_resume"
NEXT_SESSION = "next_session"


@dataclass(frozen=True)
class Steer:
    """An accepted steer waiting to be delivered into the session.

    Attributes:
        text: what the operator said.
        author: who said it (free text) or ``None``.
        prompt_id, attempt: where it was accepted.
        at: ISO 8601 time it was accepted.
        request: the request file name it came from.
        delivery: ``interrupt_and_resume`` (into the live session) or
            ``next_session`` (into the prompt of the prompt's next session).
    """

    text: str
    author: str | None
    prompt_id: str
    attempt: int | None
    at: str
    request: str
    delivery: str = DELIVERY


class Steers:
    """The steers of one run: those waiting for the live session, those queued for a
    prompt's next session, each prompt's count in the run (``steer_count``) and
    in its current invocation (against ``max_steers``).

    Not thread safe: the plane's lock guards it.

    Args:
        state_root: the packet's ``.prompt_runner/`` (``interventions/`` lives there).
        run_id: the run the steers belong to.
        runtime: the run's runtime store (the prompt records' steer fields), or ``None``.
    """

    def __init__(self, state_root: Path, run_id: str, runtime: RuntimeStore | None) -> None:
        self.state_root = state_root
        self.run_id = run_id
        self.runtime = runtime
        self.live: list[Steer] = []  # for the session that runs now
        self.queued: list[Steer] = []  # for the prompt's next session
        self.counts: dict[str, int] = {}  # the run's, for steer_count
        self.invocation: dict[str, int] = {}  # the prompt's current invocation's, for max_steers
        self.flagged: set[str] = set()  # prompts whose record says whether they were steered

    def used(self, prompt_id: str) -> int:
        """Steers accepted for ``prompt_id`` in this run (a resumed run counts its earlier ones)."""
        if prompt_id not in self.counts:
            count = 0
            if self.runtime is not None:
                record = self.runtime.load_prompt(prompt_id)
                if record.get("run_id") == self.run_id:
                    count = as_int(record.get("steer_count"))
            self.counts[prompt_id] = count
        return self.counts[prompt_id]

    def start_invocation(self, prompt_id: str) -> None:
        """A new invocation of ``prompt_id`` begins (the runner executes it, in a
        new run or a resumed one): its steer budget starts again at zero, as its
        retry and repair budgets do. Its run total (``steer_count``) goes on."""
        self.invocation[prompt_id] = 0

    def used_now(self, prompt_id: str) -> int:
        """Steers accepted for ``prompt_id`` in its current invocation (what
        ``max_steers`` limits)."""
        return self.invocation.get(prompt_id, 0)

    def decide(
        self,
        entry: dict[str, Any],
        params: Mapping[str, Any],
        *,
        live_prompt: str | None,
        between: tuple[str, str | None] | None,
        attempt: object,
        max_steers: Callable[[str], int],
        stage: str = "verified",
    ) -> Steer | None:
        """Accept or refuse the steer request logged as ``entry``.

        Args:
            live_prompt: the prompt whose session runs now, or ``None``.
            between: ``(prompt id, next session's mode or None)`` at a boundary.
            attempt: the attempt a steer read at a boundary is logged with.
            max_steers: prompt id -> its steer budget (per invocation of the prompt).
            stage: what the prompt was being since its last session ended
                (``verified``, ``committed``), for the refusal when none follows.

        Returns:
            The steer (``entry`` marked applied; :meth:`add` lines it up), or
            ``None`` with ``entry`` marked rejected and why.
        """
        prompt_id, delivery = live_prompt, DELIVERY
        if prompt_id is None:
            if between is None or between[0] is None:
                refuse(entry, "no prompt is running")
                return None
            prompt_id, next_mode = between
            if next_mode is None:
                refuse(
                    entry,
                    f"prompt {prompt_id}'s last session had ended (it was being {stage}) and "
                    "no further session of it follows: there is nothing left to steer",
                )
                return None
            delivery = NEXT_SESSION
            entry["prompt_id"] = prompt_id
            entry["attempt"] = attempt
        limit = max_steers(prompt_id)
        used = self.used_now(prompt_id)
        if used >= limit:
            refuse(
                entry,
                f"steer budget spent: {used} of max_steers {limit} used on {prompt_id} "
                "in this invocation of it",
            )
            return None
        return self.accept(entry, params, prompt_id, delivery)

    def accept(
        self, entry: dict[str, Any], params: Mapping[str, Any], prompt_id: str, delivery: str
    ) -> Steer:
        """The steer of the request ``entry`` (its log entry, now marked applied)."""
        entry["params"] = {**params, "delivery": delivery}
        entry["outcome"] = "applied"
        entry["reason"] = None
        return Steer(
            text=str(params["text"]),
            author=entry["author"],
            prompt_id=prompt_id,
            attempt=entry["attempt"],
            at=entry["at"],
            request=entry["request"],
            delivery=delivery,
        )

    def add(self, steer: Steer) -> int:
        """Count ``steer`` (in the run and in its prompt's current invocation) and
        line it up for its delivery; returns its prompt's count in the run."""
        self.invocation[steer.prompt_id] = self.used_now(steer.prompt_id) + 1
        return self._line_up(steer)

    def _line_up(self, steer: Steer) -> int:
        """Count ``steer`` in the run and queue it for its delivery; returns the count."""
        count = self.counts[steer.prompt_id] = self.used(steer.prompt_id) + 1
        if steer.delivery == NEXT_SESSION:
            self.queued.append(steer)
        else:
            self.live.append(steer)
        return count

    def pop_live(self, prompt_id: str) -> Steer | None:
        """The next steer for the live session of ``prompt_id`` (others are dropped)."""
        if not self.live or self.live[0].prompt_id != prompt_id:
            self.live.clear()
            return None
        return self.live.pop(0)

    def pop_queued(self, prompt_id: str) -> list[Steer]:
        """The steers queued for ``prompt_id``'s next session, taken off the queue
        (another prompt's stay queued for that prompt's next session)."""
        steers = [s for s in self.queued if s.prompt_id == prompt_id]
        self.queued = [s for s in self.queued if s.prompt_id != prompt_id]
        return steers

    def carry_over(self, log: Iterable[Mapping[str, Any]]) -> list[Steer]:
        """Queue again the steers this run accepted that no session read.

        A resumed run (the same ``run_id``) calls it as its plane starts, with
        the control log's entries: each steer the log has as ``applied`` in
        this run whose request no line of its prompt's interventions file
        names (a ``stop``, Ctrl-C or a crash ended the run first) is queued for
        the prompt's next session (delivery ``next_session``) and counted in
        its ``steer_count``, not against the ``max_steers`` of the invocation
        that will read it (the invocation that accepted it counted it).

        Returns:
            The steers queued, in the log's order.
        """
        applied: list[dict[str, Any]] = []
        for entry in log:
            params = entry.get("params")
            if (
                entry.get("command") == "steer"
                and entry.get("outcome") == "applied"
                and entry.get("run_id") == self.run_id
                and isinstance(entry.get("prompt_id"), str)
                and isinstance(entry.get("request"), str)
                and isinstance(params, dict)
                and isinstance(params.get("text"), str)
            ):
                applied.append(dict(entry))
        if not applied:
            return []
        layout = StateLayout(self.state_root)
        delivered: dict[str, set[str]] = {}
        carried: list[Steer] = []
        for entry in applied:
            prompt_id = entry["prompt_id"]
            if prompt_id not in delivered:
                lines = read_from(layout.interventions(prompt_id), 0)[0]
                delivered[prompt_id] = {
                    str(line.get("request")) for line in lines if line.get("run_id") == self.run_id
                }
            if entry["request"] in delivered[prompt_id]:
                continue
            delivered[prompt_id].add(entry["request"])  # a line logged twice: queued once
            steer = Steer(
                text=entry["params"]["text"],
                author=entry.get("author") if isinstance(entry.get("author"), str) else None,
                prompt_id=prompt_id,
                attempt=None,
                at=str(entry.get("at") or ""),
                request=entry["request"],
                delivery=NEXT_SESSION,
            )
            self._line_up(steer)
            carried.append(steer)
        return carried

    def record(self, steer: Steer, lane: str | None) -> None:
        """Append ``steer`` to its prompt's interventions file and flag the prompt record.

        Raises:
            OSError: the line cannot be written.
        """
        path = StateLayout(self.state_root).interventions(steer.prompt_id)
        record = {
            "text": steer.text,
            "prompt": steer.prompt_id,
            "attempt": steer.attempt,
            "author": steer.author,
            "lane": lane,
            "delivery": steer.delivery,
            "at": steer.at,
            "run_id": self.run_id,
            "request": steer.request,
        }
        append_record_line(path, record)
        if self.runtime is not None:
            self.runtime.update_prompt(
                steer.prompt_id,
                {
                    "steered": True,
                    "steer_count": self.counts.get(steer.prompt_id, 0),
                    "interventions_file": str(path),
                },
            )

    def mark_unsteered(self, prompt_id: str) -> None:
        """Say ``steered: false`` on a prompt record that does not say yet."""
        if self.runtime is None:
            return
        record = self.runtime.load_prompt(prompt_id)
        if "steered" not in record:
            self.runtime.update_prompt(prompt_id, {"steered": False})
