"""The installed ``prompt-runner`` script leaves the way ``python -m prompt_runner`` does.

``cli.main.leave`` ends a process that loaded the Temporal SDK without
finalizing the interpreter (the SDK's threads can abort a finalizing one).
``__main__`` went through it, but the console scripts named ``main``, so the
installed command -- the one users type -- never did.
"""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from prompt_runner import __version__


def test_both_console_scripts_name_entry() -> None:
    scripts = {ep.name: ep.value for ep in entry_points(group="console_scripts")}
    assert scripts["prompt-runner"] == "prompt_runner.cli.main:entry"
    assert scripts["prompt_runner"] == "prompt_runner.cli.main:entry"


def _leaves(preload: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import atexit, sys\n"
        f"{preload}\n"
        "atexit.register(lambda: print('finalized'))\n"
        "sys.argv = ['prompt-runner', '--version']\n"
        "from prompt_runner.cli.main import entry\n"
        "entry()\n"
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_entry_leaves_without_finalizing_once_temporal_is_loaded() -> None:
    res = _leaves("import temporalio")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines() == [__version__]  # flushed before it left
    assert "finalized" not in res.stdout  # os._exit: no atexit, no finalization


def test_entry_exits_normally_otherwise() -> None:
    res = _leaves("pass")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[-1] == "finalized"
