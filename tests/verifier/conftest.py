"""Helpers for verifier tests: build a context over real repos and check a raw contract."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from prompt_runner.verifier import VerifierReport, VerifyContext, parse_contract, verify

Check = Callable[..., VerifierReport]


@pytest.fixture
def check(git_repo: Path, tmp_path: Path) -> Check:
    """``check(raw, repos=None, default="app", **ctx)`` -> report; repo ``app`` = ``git_repo``."""

    def run(
        raw: object,
        *,
        repos: dict[str, Path] | None = None,
        default: str | None = "app",
        **kwargs: object,
    ) -> VerifierReport:
        all_repos = {"app": git_repo, "packet": tmp_path / "packet", **(repos or {})}
        (tmp_path / "packet").mkdir(exist_ok=True)
        contract = parse_contract(raw, file="prompts/01_x.prompt.md")
        return verify(contract, VerifyContext(repos=all_repos, default_repo=default, **kwargs))  # type: ignore[arg-type]

    return run
