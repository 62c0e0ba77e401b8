"""The installed ``prompt-runner`` script leaves the way ``python -m prompt_runner`` does.

``cli.main.leave`` ends a process that loaded the Temporal SDK without
finalizing the interpreter (the SDK's threads can abort a finalizing one).
``__main__`` went through it, but the console scripts named ``main``, so the
installed command -- the one users type -- never did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from prompt_runner import __version__
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


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


def test_a_fast_path_answer_leaves_whole_and_with_its_code(tmp_path: Path) -> None:
    # leave() skips finalizing after a reporting fast path (status, list, control
    # status, watch --once): its output must still be whole, its code kept, and a
    # reader that hangs up early must not turn into a traceback
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    assert cli("run", packet, "--no-commit").returncode == 0
    script = Path(sys.executable).with_name("prompt-runner")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "prompt_runner"]
    out = subprocess.run(
        [*argv, "watch", str(packet), "--once", "--json"], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["schema"] == "prompt_runner.watch/v1"
    missing = subprocess.run(
        [*argv, "status", str(tmp_path / "nowhere"), "--json"], capture_output=True, text=True
    )
    assert missing.returncode == 2 and json.loads(missing.stdout)["exit_code"] == 2
    piped = subprocess.run(
        f"{' '.join(argv)} watch {packet} --once | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in piped.stderr, piped.stderr


_QUICK = """
import atexit, sys
{before}
from prompt_runner.cli.main import arm_quick_exit, leave
arm_quick_exit()
atexit.register(lambda: print("handler ran", flush=True))
class Torn:
    def __del__(self):
        print("torn down", flush=True)
kept = Torn()
print("out", end="")  # unflushed: the quick exit flushes it
sys.exit(leave(3))
"""


@pytest.mark.parametrize("before", ["", "atexit.register(lambda: print('earlier handler'))"])
def test_a_console_start_skips_only_the_teardown(before: str) -> None:
    # session 12: after the last exit handler the process ends without
    # finalizing the interpreter -- every exit handler still runs, the code and
    # the output are kept; a handler registered before ours disarms it.
    done = subprocess.run(
        [sys.executable, "-c", _QUICK.format(before=before)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3, done.stderr
    lines = done.stdout.replace("out", "out\n", 1).split()
    assert lines[:3] == ["out", "handler", "ran"], done.stdout
    if before:
        assert "earlier handler" in done.stdout and "torn down" in done.stdout
    else:
        assert "torn down" not in done.stdout, done.stdout
