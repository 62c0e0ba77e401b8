"""The ``repos_clean`` clause: the work is committed, and optionally pushed.

Entry forms: ``"app"`` or ``{repo, pushed, network, remote_timeout_ms}`` (no
``repo`` = the prompt's first target).

* The tree must be clean: ``git status --porcelain -uall`` shows nothing.
* ``pushed: true``: the current branch has an upstream and ``HEAD`` equals it.
  The upstream is read from the cached remote-tracking ref; with
  ``network: true`` the remote tip is read with a bounded ``git ls-remote``
  (``remote_timeout_ms``, default 10000) instead -- never a fetch, so
  ``refs/remotes`` stay unchanged. When ls-remote fails the cached ref is used
  and ``details`` says so.

Verification is read-only: HEAD, branches, the index and refs are untouched.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prompt_runner import git
from prompt_runner.verifier import schema
from prompt_runner.verifier.model import FAULT, ClauseEntry, VerifierItem, VerifyContext, item
from prompt_runner.verifier.paths import RepoDir, repo_for
from prompt_runner.verifier.registry import ClauseSpec, per_entry, register
from prompt_runner.verifier.schema import Where

KIND = "repos_clean"
_SHOW = 20


@dataclass(frozen=True, kw_only=True)
class RepoCleanEntry(ClauseEntry):
    """One repo that must be committed (and maybe pushed)."""

    pushed: bool = False
    network: bool = False
    remote_timeout_ms: int | None = None

    def to_raw(self) -> dict[str, Any]:
        raw: dict[str, Any] = {}
        if self.repo is not None:
            raw["repo"] = self.repo
        if self.pushed:
            raw["pushed"] = True
        if self.network:
            raw["network"] = True
        if self.remote_timeout_ms is not None:
            raw["remote_timeout_ms"] = self.remote_timeout_ms
        return raw


def _parse(raw: object, where: Where) -> tuple[ClauseEntry, ...]:
    out: list[ClauseEntry] = []
    for i, value in enumerate(schema.entry_list(raw, where, what="repo names")):
        at = where.at(i)
        if isinstance(value, str):
            out.append(RepoCleanEntry(repo=schema.string(value, at)))
            continue
        m = schema.mapping(
            value,
            at,
            allowed={"repo", "pushed", "network", "remote_timeout_ms"},
            plain=("a repo name", "repo"),
        )
        out.append(
            RepoCleanEntry(
                repo=schema.repo_name(m, at),
                pushed=schema.boolean(m, "pushed", at),
                network=schema.boolean(m, "network", at),
                remote_timeout_ms=schema.integer(
                    m, "remote_timeout_ms", at, minimum=1, unit=" (milliseconds)"
                ),
            )
        )
    return tuple(out)


def _short(sha: str | None) -> str:
    return sha[:7] if sha else "none"


def _check_one(e: RepoCleanEntry, ctx: VerifyContext) -> VerifierItem:
    found = repo_for(KIND, e.repo, ctx)
    if isinstance(found, VerifierItem):
        return found
    try:
        return _check_repo(e, found)
    except git.GitError as exc:
        return item(
            KIND, passed=False, verdict=FAULT, repo=found.name, details=f"verifier_fault: {exc}"
        )


def _check_repo(e: RepoCleanEntry, repo: RepoDir) -> VerifierItem:
    def result(passed: bool, details: str, **facts: Any) -> VerifierItem:
        return item(
            KIND, passed=passed, repo=repo.name, details=details, pushed_required=e.pushed, **facts
        )

    if not git.is_git_repo(repo.root):
        return result(False, f"not a git repository: {repo.root}")
    dirty = sorted({s.path for s in git.porcelain_status(repo.root)})
    if dirty:
        more = f" (+{len(dirty) - _SHOW} more)" if len(dirty) > _SHOW else ""
        return result(
            False,
            f"uncommitted changes ({len(dirty)}): {', '.join(dirty[:_SHOW])}{more}; commit them"
            + (" and push" if e.pushed else ""),
            dirty_count=len(dirty),
            dirty=dirty,
        )
    head = git.head_sha(repo.root)
    branch = git.current_branch(repo.root)
    up = git.upstream(repo.root)
    facts: dict[str, Any] = {"dirty_count": 0, "head": head, "branch": branch}
    if up is None:
        if e.pushed:
            return result(
                False,
                f"no upstream for {branch or 'detached HEAD'} but pushed: true; "
                "push it with `git push -u <remote> <branch>`",
                **facts,
            )
        return result(True, f"committed (HEAD {_short(head)}); no upstream configured", **facts)
    facts["upstream"] = up.short
    tip, source, note = up.sha, f"cached {up.short}", ""
    if e.network:
        remote = git.ls_remote(
            repo.root,
            up.remote,
            up.remote_ref,
            timeout_ms=e.remote_timeout_ms or git.DEFAULT_LS_REMOTE_TIMEOUT_MS,
        )
        facts["remote_checked"] = remote.sha is not None
        if remote.sha is not None:
            tip, source = remote.sha, f"{up.remote} {up.remote_ref} (ls-remote)"
        else:
            note = f"; {remote.error}, so the cached {up.short} was used"
    facts["upstream_sha"] = tip
    if not e.pushed:
        return result(
            True,
            f"committed (HEAD {_short(head)}); upstream {source} at {_short(tip)}{note}",
            **facts,
        )
    if head is not None and head == tip:
        return result(
            True, f"committed and pushed: HEAD {_short(head)} equals {source}{note}", **facts
        )
    return result(
        False,
        f"not pushed: HEAD {_short(head)} differs from {source} at {_short(tip)}{note}; "
        "push the branch (pull first if the remote moved)",
        **facts,
    )


_check = per_entry(RepoCleanEntry, _check_one)


def _label(entry: ClauseEntry, default_repo: str | None) -> str:
    assert isinstance(entry, RepoCleanEntry)
    name = entry.repo or default_repo or "(default repo)"
    return f"repo committed and pushed: {name}" if entry.pushed else f"repo committed: {name}"


register(ClauseSpec(KIND, 120, _parse, _check, _label))
