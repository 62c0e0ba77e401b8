"""The library's contract calls: ``prompt-runner control contract|amend|relax``, as typed results.

:func:`control_contract` reads a prompt's effective contract; :func:`control_amend`
and :func:`control_relax` record an amendment at once (between runs too). A
command refused for bad input is in the control log with its reason, and raised.

Like :mod:`prompt_runner.api_control`, on the CLI's ``control`` hot path: the
standard library and :mod:`prompt_runner.control.client` only (the packet is
loaded when a call is made).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .api_calls import StateDirScope, public
from .api_control import PacketPath, _path
from .control import client


class ContractView(NamedTuple):
    """A prompt's contract as the runner enforces it (``control contract``).

    Attributes:
        prompt_id; file: its prompt file.
        base: the prompt file's ``verify:``; contract: the effective one
            (with the amendments in force and pending applied); lines: its
            human view, one line per item.
        amended: some amendment is in force or pending; amendments: those
            records; amendments_file: where they are kept (``None`` if none).
    """

    prompt_id: str
    file: str
    base: dict[str, Any]
    contract: dict[str, Any]
    amended: bool
    amendments: list[dict[str, Any]]
    amendments_file: str | None
    lines: list[str]

    def to_dict(self) -> dict[str, Any]:
        """``control contract --json``."""
        return self._asdict()


@public
def control_contract(
    packet: PacketPath, prompt_id: str, *, state_dir: str | os.PathLike[str] | None = None
) -> ContractView:
    """A prompt's effective contract and its amendment history (read only).

    Args:
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``; see
            :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: not a packet, an invalid one, or an unknown prompt id.
    """
    with StateDirScope(state_dir):
        doc = client.contract(_path(packet), prompt_id)
    return ContractView(**{k: doc[k] for k in ContractView._fields})


class Amendment(NamedTuple):
    """A recorded amendment (``control amend`` / ``control relax``).

    Attributes:
        record: the audit record (``operation``, ``prompt``, ``phase``
            ``pre_verify|post_failure|post_success``, ``applies_to``
            ``{"verification": in_progress|next|deferred, "note"}``, ``before``,
            ``after``, ``reason``, ``author``, ``persist``, ``run_id``, ``at``).
        diff: the contract's change, one line per item (``+``/``-``).
        file_diff: with ``persist``, the unified diff of the prompt file, else ``None``.
        amendments_file: the audit file it was appended to.
    """

    record: dict[str, Any]
    diff: list[str]
    file_diff: str | None
    amendments_file: str

    def to_dict(self) -> dict[str, Any]:
        """``control amend|relax --json``."""
        return self._asdict()


@public
def control_amend(
    packet: PacketPath,
    prompt_id: str,
    *,
    add: Mapping[str, Any],
    reason: str | None,
    author: str | None = None,
    persist: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
) -> Amendment:
    """Add requirements to a prompt's contract (``control amend``): run-local
    (the unfinished run, else the next one) unless ``persist`` edits the file.

    Args:
        add: clauses to add, as in ``verify:`` (``{"files_exist": ["x.md"],
            "contains": [{"path": "x.md", "text": "done"}]}``).
        reason: why (required: an amendment without one is refused).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``; see
            :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: no reason, nothing to add, an unknown clause or a bad
            entry, an unknown prompt (logged as rejected; nothing is written).
    """
    with StateDirScope(state_dir):
        result = client.amend(
            _path(packet), prompt_id, add=add, reason=reason, author=author, persist=persist
        )
    return Amendment(**result)


@public
def control_relax(
    packet: PacketPath,
    prompt_id: str,
    *,
    drop: Sequence[str] = (),
    remove: Mapping[str, Any] | None = None,
    reason: str | None,
    confirm: bool = False,
    author: str | None = None,
    persist: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
) -> Amendment:
    """Remove requirements from a prompt's contract (``control relax``).

    Args:
        drop: whole clauses to drop (``["changed_paths_only"]``).
        remove: entries to remove, as in ``verify:``.
        reason: why (required); confirm: must be true (weakening is the risky
            direction, so it is asked for explicitly).
        state_dir: the run's state directory when it is not
            ``<packet>/.prompt_runner`` (``--state-dir DIR``; see
            :class:`prompt_runner.api_calls.StateDirScope`).

    Raises:
        UserError: no reason, no ``confirm``, nothing named, an unknown clause
            or prompt (logged as rejected; nothing is written).
    """
    with StateDirScope(state_dir):
        result = client.relax(
            _path(packet),
            prompt_id,
            drop=drop,
            remove=remove,
            reason=reason,
            confirm=confirm,
            author=author,
            persist=persist,
        )
    return Amendment(**result)
