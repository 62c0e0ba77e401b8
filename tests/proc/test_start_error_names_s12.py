"""A process that cannot start says which file was at fault: the working
directory when that is what failed, not the program (session 12: a detached
start under a workspace root that was a file said "Not a directory:
.../bin/python", blaming the interpreter)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from prompt_runner.proc import logged, request
from prompt_runner.proc.values import ProcRequest


def _cwd_under_a_file(tmp_path: Path) -> Path:
    blocker = tmp_path / "afile"
    blocker.write_text("x\n", encoding="utf-8")
    return blocker / "below"


def test_popen_logged_names_the_cwd_not_the_program(tmp_path: Path) -> None:
    cwd = _cwd_under_a_file(tmp_path)
    res = logged.popen_logged(
        (sys.executable, "-c", "pass"),
        cwd=cwd,
        env=dict(os.environ),
        stdout=tmp_path / "logs" / "out",
        stderr=tmp_path / "logs" / "err",
    )
    assert isinstance(res, logged.ProcResult), res
    assert res.start_error is not None and str(cwd) in res.start_error, res.start_error
    assert sys.executable not in res.start_error


def test_a_request_names_the_cwd_not_the_program(tmp_path: Path) -> None:
    cwd = _cwd_under_a_file(tmp_path)
    res = request.start(ProcRequest(argv=(sys.executable, "-c", "pass"), cwd=cwd))
    assert not hasattr(res, "pid"), res
    assert res.start_error is not None and str(cwd) in res.start_error, res.start_error
    assert sys.executable not in res.start_error
