"""Linting the manifest: its model, ``execution`` policy, ``profile``, repos and
``prompt_dir``, and the agent-control completion contract."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...paths import repo_path_error
from ..builtins import BUILTIN_PROFILES
from ..files import MANIFEST_NAME
from ..models import Manifest
from ..profile_names import PROFILE_NAME
from ..profiles import profile_path
from .context import Linter, LintFile, open_file, validate
from .contract import lint_contract


def lint_manifest(lint: Linter) -> dict[str, Any]:
    """Lint the manifest and note on ``lint`` what the prompts' checks need.

    Returns:
        The manifest's raw front matter (``{}`` when it does not parse).
    """
    handle, raw, _ = open_file(lint, lint.root / MANIFEST_NAME, MANIFEST_NAME, "invalid_manifest")
    if raw is None:
        return {}
    bad_execution = _lint_execution(handle, raw.get("execution"))
    validate(
        handle,
        Manifest,
        {k: v for k, v in raw.items() if not (bad_execution and k == "execution")},
        "invalid_manifest",
    )
    repos = raw.get("repos")
    lint.repos = [str(k) for k in repos] if isinstance(repos, dict) else None
    if repos is None:
        lint.repos = []
    _note_repos(lint, handle, repos)
    lint.git_committer = raw.get("committer") != "noop"
    _lint_profile(handle, raw.get("profile"))
    prompt_dir = raw.get("prompt_dir")
    if isinstance(prompt_dir, str) and prompt_dir.strip():
        parts = Path(prompt_dir).parts
        if not Path(prompt_dir).is_absolute() and ".." not in parts:
            lint.prompt_dir = prompt_dir  # an escaping one is an invalid_manifest finding
    execution = raw.get("execution")
    lint.agent_owned = isinstance(execution, dict) and execution.get("completion") == "agent_owned"
    control = raw.get("agent_control")
    if isinstance(control, dict) and isinstance(control.get("completion_verify"), dict):
        lint_contract(handle, control["completion_verify"], ("agent_control", "completion_verify"))
    return raw


def _lint_profile(handle: LintFile, name: Any) -> None:
    """``profile_not_found`` for a manifest ``profile`` that exists nowhere on this machine."""
    if not isinstance(name, str) or not name.strip() or name in BUILTIN_PROFILES:
        return
    if PROFILE_NAME.fullmatch(name) is None:
        return  # not a profile name at all: the model's invalid_manifest finding
    try:
        exists = profile_path(name).is_file()
    except (OSError, ValueError):
        return
    if not exists:
        handle.add("profile_not_found", "profile", name=name)


def _note_repos(lint: Linter, handle: LintFile, repos: Any) -> None:
    """The default repo and each repo's resolved path, as the loader resolves them;
    a path that cannot be resolved (``~nosuchuser``, a symlink loop) is the
    loader's error as an ``invalid_manifest`` finding."""
    lint.repo_paths = {"packet": lint.root.resolve()}
    if not isinstance(repos, dict):
        return
    for name, spec in repos.items():
        if not isinstance(spec, dict):
            continue
        if spec.get("default") is True:
            lint.default_repo = str(name)
        if isinstance(spec.get("path"), str):
            try:
                path = Path(spec["path"]).expanduser()
                path = path if path.is_absolute() else lint.root / path
                lint.repo_paths[str(name)] = path.resolve()
            except (RuntimeError, OSError) as exc:  # ~nosuchuser, a symlink loop
                problem = repo_path_error(MANIFEST_NAME, str(name), spec["path"], exc)
                error = f"repos.{name}.path: {problem.reason}; {problem.fix}."
                handle.add("invalid_manifest", "repos", str(name), "path", error=error)
    if lint.default_repo is None and len(repos) == 1:
        lint.default_repo = str(next(iter(repos)))


def _lint_execution(handle: LintFile, execution: Any) -> bool:
    """Report an invalid ``execution`` block; True when one was reported."""
    if execution is None:
        return False
    problem = None
    if not isinstance(execution, dict):
        problem = "`execution` must be a mapping"
    else:
        completion = execution.get("completion", "verifier_owned")
        incomplete = execution.get("incomplete")
        extra = sorted(str(k) for k in set(execution) - {"completion", "incomplete"})
        if extra:
            problem = f"`execution` has unknown key(s) {', '.join(extra)}"
        elif completion not in ("verifier_owned", "agent_owned"):
            problem = f"`execution.completion: {completion}` is not a completion mode"
        elif incomplete not in (None, "fail", "repeat"):
            problem = f"`execution.incomplete: {incomplete}` is not an incomplete policy"
        elif completion == "agent_owned" and incomplete != "repeat":
            problem = "agent-owned completion without `incomplete: repeat` never asks again"
        elif completion == "verifier_owned" and incomplete == "repeat":
            problem = "`incomplete: repeat` only applies to agent-owned completion"
    if problem is not None:
        handle.add("invalid_execution_policy", "execution", problem=problem)
    return problem is not None
