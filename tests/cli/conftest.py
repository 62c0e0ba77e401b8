"""Fixtures for the input/CLI fix tests: run the CLI in-process, keep signal handlers."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest

from prompt_runner.cli.main import main
from tests.cli.inproc import PR, Outcome


@pytest.fixture(autouse=True)
def _keep_signal_handlers() -> Iterator[None]:
    """``run`` installs SIGTERM/SIGHUP handlers; give the test process its own back."""
    saved = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    yield
    for sig, handler in saved.items():
        signal.signal(sig, handler)


@pytest.fixture
def pr(capsys: pytest.CaptureFixture[str]) -> PR:
    """Call ``prompt-runner ARGS`` in-process; return its exit code, stdout and stderr."""

    def call(*args: object) -> Outcome:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return Outcome(code, captured.out, captured.err)

    return call
