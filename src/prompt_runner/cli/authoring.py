"""Authoring commands: packet new/add-repo/lint/doctor, prompt new, schema (SPEC 9)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..api_authoring import schema
from ..api_packet import doctor, lint
from ..errors import UserError
from ..packet.migrate import migrate_contracts
from ..packet.profiles import RECOVERY_SHORTHANDS
from ..packet.scaffold import add_repo, new_packet, new_prompt, parse_repo_flag
from ._out import emit_json, say, warn


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def cmd_packet_lint(args: argparse.Namespace) -> int:
    report = lint(args.packet, strict=args.strict)
    if args.json:
        emit_json(report.to_dict())
    else:
        for f in report.findings:
            where = f.path or "-"
            if f.line is not None:
                where += f":{f.line}"
            ident = f" [{f.prompt_id}]" if f.prompt_id else ""
            say(f"{f.severity.upper()} {f.kind} {where}{ident}: {f.message}")
        verdict = "pass" if report.passed else "FAIL"
        say(
            f"{report.packet}: {_plural(report.errors, 'error')}, "
            f"{_plural(report.warnings, 'warning')} ({verdict})"
        )
    return 0 if report.passed else 1


def cmd_packet_doctor(args: argparse.Namespace) -> int:
    result = doctor(args.packet)
    report = result.to_dict()
    if args.json:
        emit_json(report)
    else:
        for w in report["authoring_warnings"]:
            ident = f" [{w['prompt_id']}]" if w.get("prompt_id") else ""
            say(f"GAP {w['kind']} {w.get('path') or '-'}{ident}: {w['message']}")
        for e in report["readiness_errors"]:
            say(f"NOT READY {e['kind']} {e['scope']} {e['name']}: {e.get('reason') or e['path']}")
        if report.get("load_error"):
            say(f"NOT READY: {report['load_error']}")
        say(
            f"{report['packet']}: authoring "
            f"{'ready' if report['authoring_ready'] else 'NOT ready'}, runtime "
            f"{'ready' if report['runtime_ready'] else 'NOT ready'}"
        )
    return 0 if result.ready else 1


def cmd_packet_new(args: argparse.Namespace) -> int:
    repos = [parse_repo_flag(text) for text in args.repo]
    from ..planning.authored import PLAN_CHECKS  # lazy: the adapters' option tables

    path = new_packet(
        args.name,
        root=Path(args.root),
        profile=args.profile,
        provider=args.provider,
        model=args.model,
        reasoning_effort=args.reasoning,
        permission_mode=args.permission,
        repos=repos,
        default_repo=args.default_repo,
        prompt_template=args.prompt_template,
        cli_confirmation=args.cli_confirmation,
        cwd=Path.cwd(),
        **{name: getattr(args, name) for name in RECOVERY_SHORTHANDS},
        judge=PLAN_CHECKS,
    )
    say(f"Created packet {args.name}: {path}")
    _warn_unready_repos(path, [name for name, _path in repos])
    return 0


def _warn_unready_repos(packet_dir: Path, names: list[str]) -> None:
    """A ``warning:`` line for each of the repos ``names`` of the packet at
    ``packet_dir`` that ``run`` would refuse as it stands (a path that does not
    exist, a file, not a git work tree): the packet is written all the same, as
    the repo may be made later, but the user hears it now, not at the first run."""
    if not names:
        return
    from ..packet.preflight import preflight_report  # lazy: only after a repo was named

    try:
        report = preflight_report(packet_dir, needs_git=True, needs_identity=False)
    except UserError:
        return  # what does not load is said by the commands that load it
    for entry in report["repos"]:
        if entry["name"] in names:
            for err in entry["errors"]:
                warn(
                    f"warning: repo {entry['name']!r} ({entry['path']}) {err['reason']}, so "
                    f"`prompt-runner run` would refuse it: {err['fix']}"
                )


def cmd_packet_add_repo(args: argparse.Namespace) -> int:
    manifest = add_repo(args.packet, args.name, args.path, default=args.default, cwd=Path.cwd())
    say(f"Added repo {args.name} to {manifest}")
    _warn_unready_repos(manifest.parent, [args.name])
    return 0


def cmd_packet_migrate_contracts(args: argparse.Namespace) -> int:
    """Exit 0 when no legacy entry is left, 1 when some need a person (they are listed)."""
    report = migrate_contracts(args.packet, write=args.write)
    if args.json:
        emit_json(report.to_dict())
        return 1 if report.unconverted else 0
    if report.diff:
        sys.stdout.write(report.diff)
    for left in report.unconverted:
        say(f"NOT CONVERTED {left.file} {left.key} ({left.command!r}): {left.reason}")
    done = "converted" if args.write else "would convert"
    say(
        f"{report.packet.name}: {done} {_plural(report.converted, 'command')} in "
        f"{_plural(len(report.changed_files), 'file')}; "
        f"{len(report.unconverted)} left for you to rewrite"
        + ("" if args.write or not report.converted else " (run again with --write)")
    )
    return 1 if report.unconverted else 0


def cmd_prompt_new(args: argparse.Namespace) -> int:
    targets = None
    if args.targets is not None:
        targets = [t.strip() for t in args.targets.split(",") if t.strip()]
    path = new_prompt(
        args.packet,
        args.id,
        phase=args.phase,
        name=args.name,
        targets=targets,
        commit=args.commit,
        template=args.template,
        cwd=Path.cwd(),
    )
    say(f"Created prompt {path}")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    doc: dict[str, Any] = schema(args.which)
    emit_json(doc)
    return 0
