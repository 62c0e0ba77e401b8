"""``lint_packet``: every lint step over one packet, then the load (or plan) check."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ...errors import UserError
from ...verifier import contract_keys
from ..cached_source import keep_parsed
from ..files import (
    MANIFEST_NAME,
    entries_of,
    find_packet_root,
    hidden_prompt_names,
    ignored_names,
    link_error,
)
from ..frontmatter import read_text
from ..gc_pause import gc_paused
from ..loader import Packet, load_packet
from ..phase_order import later_phase_dependencies
from ..preflight import ignored_outputs, untargeted_outputs
from .cached import keep_findings, kept_findings
from .context import FileReads, KeyLines, Linter, LintFile
from .manifest import lint_manifest
from .messages import ERROR_KINDS
from .prompts import lint_prompt, prompt_files
from .report import LintReport

PlanCheck = Callable[[Path], Packet]
"""Resolves the packet at a directory as ``run`` would and returns it loaded.

Raises:
    UserError: whatever would stop the run.
"""


def lint_packet(
    path: Path | str, *, strict: bool = False, plan: PlanCheck | None = None
) -> LintReport:
    """Lint the packet at ``path``.

    The prompt files' findings are kept in the parsed-packet cache and used
    again while the files and the manifest's reading are the same
    (:mod:`~prompt_runner.packet.lint.cached`); everything else runs each time.

    A packet with no error findings is also checked as a whole by ``plan``;
    whatever still stops it (a ``depends_on`` cycle, a symlink escape, an
    invalid merged recovery config, no prompt file at all ...) becomes
    ``packet_load_error``, so ``pass`` implies the packet runs. The library's
    ``prompt_runner.lint`` passes the whole plan (:func:`prompt_runner.api.plan`);
    this layer knows nothing of plans, so without ``plan`` the packet is only
    loaded.

    Args:
        path: the packet directory (or its manifest file).
        strict: promote every warning to an error.
        plan: the whole-packet check (see :data:`PlanCheck`); default:
            :func:`~prompt_runner.packet.loader.load_packet`.

    Returns:
        The :class:`LintReport`; files that fail to parse become findings, and
        so does a prompt file or checklist that is a broken symlink
        (``packet_load_error`` on it: the loader's sentence).

    Raises:
        UserError: ``path`` is not a packet directory, or its prompt directory
            cannot be listed.
    """
    with gc_paused():  # every file's findings and the plan, no cycles (packet/gc_pause.py)
        return _lint_packet(path, strict, plan)


def _lint_packet(path: Path | str, strict: bool, plan: PlanCheck | None) -> LintReport:
    root = find_packet_root(path)
    lint = Linter(root, strict, contract_keys())
    manifest = lint_manifest(lint)
    prompt_dir = root / lint.prompt_dir
    entries = entries_of(prompt_dir)
    # a prompt file or checklist that is a broken symlink: the loader's sentence, once
    broken = [(n, e) for n, kind in entries if kind == "o" and (e := link_error(prompt_dir, n))]
    files = [f for f in prompt_files(prompt_dir, entries) if f.name not in dict(broken)]
    kept = kept_findings(lint, files)
    reads = FileReads()
    if kept is not None:
        lint.findings.extend(kept)
    else:
        seen: dict[str, str] = {}
        start = len(lint.findings)
        for file in files:
            lint_prompt(lint, file, seen, reads)
        keep_findings(lint, files, reads.data, lint.findings[start:])
    for link, error in broken:
        LintFile(lint, lint.rel(prompt_dir / link), KeyLines("")).add(
            "packet_load_error", error=str(error)
        )
    for stray in ignored_names(entries):
        LintFile(lint, lint.rel(prompt_dir / stray), KeyLines("")).add("ignored_prompt_file")
    for hidden in hidden_prompt_names(entries):
        LintFile(lint, lint.rel(prompt_dir / hidden), KeyLines("")).add(
            "hidden_prompt_file", name=hidden, shown=hidden[1:]
        )
    if not any(f.kind in ERROR_KINDS for f in lint.findings):
        if reads.parsed:  # what the whole-packet check loads: parsed once, here
            keep_parsed(root, prompt_dir, reads.data, reads.parsed)
        try:
            packet = (plan or load_packet)(root)
            # what run refuses first: no prompt at all (no prompt directory, a file, empty)
            packet.require_prompts()
        except UserError as exc:
            # messages name files from the current directory; findings from the packet
            rel = lint.rel(Path(exc.file).absolute()) if exc.file else MANIFEST_NAME
            rel = lint.prompt_dir if rel == "." else rel  # the packet as a whole: no prompts
            LintFile(lint, rel, KeyLines("")).add("packet_load_error", error=str(exc))
        else:
            _lint_phase_order(lint, packet)
            if lint.git_committer:
                _lint_ignored_outputs(lint, packet)
                _lint_untargeted_outputs(lint, packet)
    name = manifest.get("name")
    return LintReport(
        packet=name if isinstance(name, str) and name else root.name,
        root=root,
        strict=strict,
        findings=tuple(lint.findings),
        no_commit=not lint.git_committer,
    )


def _lint_ignored_outputs(lint: Linter, packet: Packet) -> None:
    """``output_ignored``: a contract's output path that its repo's git ignores, so
    the runner's commit never includes it (``git check-ignore``, one call a repo)."""
    for item in ignored_outputs(packet, packet.prompts):
        handle = LintFile(lint, lint.rel(item.prompt.file), KeyLines(read_text(item.prompt.file)))
        handle.prompt_id = item.prompt.id
        handle.add(
            "output_ignored",
            "verify",
            item.clause,
            item.index,
            path=item.path,
            repo=item.repo,
            source=item.source,
        )


def _lint_untargeted_outputs(lint: Linter, packet: Packet) -> None:
    """``output_not_targeted``: a contract's output path in a repo its prompt does
    not target, which the runner never commits (read from the contracts alone)."""
    for item in untargeted_outputs(packet.prompts):
        handle = LintFile(lint, lint.rel(item.prompt.file), KeyLines(read_text(item.prompt.file)))
        handle.prompt_id = item.prompt.id
        handle.add(
            "output_not_targeted", "verify", item.clause, item.index, path=item.path, repo=item.repo
        )


def _lint_phase_order(lint: Linter, packet: Packet) -> None:
    """``depends_on_later_phase``: a dependency that pulls a later phase's prompt ahead."""
    for prompt, dep in later_phase_dependencies(packet):
        handle = LintFile(lint, lint.rel(prompt.file), KeyLines(read_text(prompt.file)))
        handle.prompt_id = prompt.id
        index = list(prompt.front.depends_on).index(dep.id)
        handle.add(
            "depends_on_later_phase",
            "depends_on",
            index,
            id=prompt.id,
            phase=prompt.phase,
            dep=dep.id,
            dep_phase=dep.phase,
        )
