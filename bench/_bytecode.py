"""Compile the installed package's bytecode before timing a cold start.

``pip install`` of a wheel writes ``__pycache__`` for every module, so a user's
first ``prompt-runner`` call already reads bytecode. An editable install in a
shell with ``PYTHONDONTWRITEBYTECODE=1`` (dev.py sets it for the test suite)
never writes any, and every start would recompile each module from source:
that measures the compiler, not the command. The benches that time process
starts call :func:`ensure_bytecode` first so they measure what a user runs.
"""

from __future__ import annotations

import compileall
from pathlib import Path


def ensure_bytecode() -> Path:
    """Compile ``prompt_runner``'s modules (quietly; existing fresh ``.pyc`` are kept).

    Returns the package directory that was compiled. Raises ``SystemExit`` if
    any module fails to compile.
    """
    import prompt_runner

    package = Path(prompt_runner.__file__).parent
    if not compileall.compile_dir(package, quiet=1):
        raise SystemExit(f"could not compile the bytecode of {package}")
    return package
