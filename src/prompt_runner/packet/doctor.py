"""``packet doctor``: the gaps of an unfinished packet (SPEC 9), plus runtime readiness.

Where ``lint`` reports hazards (constructs that run wrongly), ``doctor``
reports what is obviously not written yet: no prompts, no default repo, a
prompt with no targets or no verification items, scaffold placeholder markers
left in a body. The runtime half is :func:`~prompt_runner.packet.preflight.preflight_report`
when the packet loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UserError
from ..verifier import parse_contract
from .files import relative_file
from .lint import PLACEHOLDER_MARKER
from .loader import load_packet, resolve_repos
from .preflight import preflight_report
from .source import PacketSource, read_packet_source

SCHEMA = "prompt_runner.doctor/v1"

GAP_KINDS = (
    "no_prompts",
    "no_default_repo",
    "prompt_no_targets",
    "prompt_empty_verify",
    "prompt_placeholder_body",
    "prompt_unreadable",
)


def _gap(
    kind: str, message: str, *, prompt_id: str | None = None, path: str | None = None
) -> dict[str, Any]:
    return {"kind": kind, "prompt_id": prompt_id, "path": path, "message": message}


def authoring_gaps(source: PacketSource) -> list[dict[str, Any]]:
    """The authoring gaps of a parsed packet, as ``{kind, prompt_id, path, message}`` dicts.

    Args:
        source: the packet as parsed by :func:`~prompt_runner.packet.source.read_packet_source`.
    """
    gaps: list[dict[str, Any]] = []
    _, default_repo = resolve_repos(source.root, source.manifest)
    if not source.prompts:
        gaps.append(
            _gap(
                "no_prompts",
                f"the packet has no {relative_file(source.prompts_dir, source.root)}/"
                "NN_name.prompt.md files, so a run does nothing; "
                "add one with `prompt-runner prompt new 01 --packet PACKET --name NAME`",
            )
        )
    if default_repo is None:
        gaps.append(
            _gap(
                "no_default_repo",
                "no repo is marked `default: true` (and there is not exactly one repo), so a "
                "prompt without `targets:` has no working directory; mark one with "
                "`prompt-runner packet add-repo NAME PATH --packet PACKET --default`",
                path="prompt_runner_packet.md",
            )
        )
    for ps in source.prompts:
        rel = relative_file(ps.file, source.root)
        if ps.error is not None or ps.front is None:
            gaps.append(
                _gap("prompt_unreadable", f"{ps.error}; run `packet lint` for details", path=rel)
            )
            continue
        front = ps.front
        if not front.targets and default_repo is None:
            gaps.append(
                _gap(
                    "prompt_no_targets",
                    "the prompt has no `targets:` and the packet has no default repo, so its "
                    "session has no working directory; add `targets: [REPO]`",
                    prompt_id=front.id,
                    path=rel,
                )
            )
        try:
            empty = parse_contract(front.verify, file=rel).is_empty()
        except UserError:
            empty = False  # malformed, not missing: lint reports it
        if empty:
            gaps.append(
                _gap(
                    "prompt_empty_verify",
                    "the prompt has no verification items yet, so the provider's own claim "
                    "decides completion; fill in `verify:`",
                    prompt_id=front.id,
                    path=rel,
                )
            )
        markers = PLACEHOLDER_MARKER.findall(ps.body)
        if markers:
            gaps.append(
                _gap(
                    "prompt_placeholder_body",
                    f"the body still has scaffold placeholder(s) {', '.join(markers)}; write "
                    "those sections and delete the `<!-- prompt_runner:placeholder -->` lines",
                    prompt_id=front.id,
                    path=rel,
                )
            )
    return gaps


def doctor_report(path: Path | str) -> dict[str, Any]:
    """Authoring gaps and runtime readiness of the packet at ``path``.

    Returns:
        ``{schema, packet, root, authoring_ready, authoring_warnings: [{kind,
        prompt_id, path, message}], runtime_ready, repos, readiness_errors,
        load_error}``. ``runtime_ready`` is false (with ``load_error`` set) when
        the packet does not load.

    Raises:
        UserError: ``path`` is not a packet, or its manifest is invalid.
    """
    source = read_packet_source(path)
    gaps = authoring_gaps(source)
    runtime: dict[str, Any]
    load_error = None
    try:
        runtime = preflight_report(load_packet(source.root))
    except UserError as exc:
        load_error = str(exc)
        runtime = {"runtime_ready": False, "repos": [], "readiness_errors": []}
    return {
        "schema": SCHEMA,
        "packet": source.manifest.name or source.root.name,
        "root": str(source.root),
        "authoring_ready": not gaps,
        "authoring_warnings": gaps,
        "runtime_ready": runtime["runtime_ready"],
        "repos": runtime["repos"],
        "readiness_errors": runtime["readiness_errors"],
        "load_error": load_error,
    }
