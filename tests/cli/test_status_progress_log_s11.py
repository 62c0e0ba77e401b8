"""``status`` refuses a bad ``progress.log`` line as ``run`` does (a new user's finding).

``run`` refused a packet whose ``progress.log`` (the resume source, a record of
truth) had a line that does not parse, with exit 2 and a sentence naming the
file, the line and the fix; ``status`` printed ``Prompts: 1 completed`` and
exited 0. Now both say the same sentence with the same exit code -- also when
``status --json``'s kept text (state/status_cache.py) was made before the line
was written. A torn last line (a writer killed mid-append, or a live runner's
line in flight) is not corruption. Real runs of the simulated provider.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from prompt_runner.state.status_cache import SETTLED_NS
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

BAD = "zz:bogus line\n"


def _ran(tmp_path: Path) -> Path:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    done = cli("run", packet, "01", "--no-commit")
    assert done.returncode == 0, done.stderr
    return packet


def _progress(packet: Path) -> Path:
    return packet / ".prompt_runner" / "progress.log"


def test_status_says_what_run_says_of_a_bad_progress_line(tmp_path: Path) -> None:
    packet = _ran(tmp_path)
    with _progress(packet).open("a") as handle:
        handle.write("02:compl")  # no newline: a torn last line (a line in flight) is no fault
    torn = cli("status", packet, "--json")
    assert torn.returncode == 0, torn.stderr
    assert json.loads(torn.stdout)["prompts"]["01"]["status"] == "completed"
    with _progress(packet).open("a") as handle:
        handle.write("\n" + BAD)  # line 2 now ends: it is a bad line, and so is line 3
    run = cli("run", packet, "--remaining", "--no-commit")
    assert run.returncode == 2
    assert "progress.log: line 2 is not ID:STATUS:ISO8601" in run.stderr
    for args in ((), ("--json",)):
        shown = cli("status", packet, *args)
        assert shown.returncode == run.returncode, (args, shown.stdout)
        assert "Prompts:" not in shown.stdout
        sentence = run.stderr.strip().splitlines()[-1].removeprefix("error: ")
        assert sentence in shown.stderr or sentence in shown.stdout, (args, shown.stderr)


def test_a_kept_status_text_never_hides_a_bad_progress_line(tmp_path: Path) -> None:
    packet = _ran(tmp_path)
    time.sleep(SETTLED_NS / 1e9 + 0.2)  # only files older than this are kept
    first = cli("status", packet, "--json")
    assert first.returncode == 0, first.stderr
    assert (packet / ".prompt_runner" / "status-cache").is_file()
    with _progress(packet).open("a") as handle:
        handle.write(BAD)
    shown = cli("status", packet, "--json")  # the argparse-free kept path first (cli/fast.py)
    assert shown.returncode == 2, shown.stdout
    assert "progress.log: line 2 is not ID:STATUS:ISO8601" in shown.stderr + shown.stdout
