"""``status`` on a packet that does not load never calls a prompt removed (a new user's finding).

Prompt 02's file was edited to give ``id: '01'``: ``run`` refuses the packet
(exit 2, "duplicate prompt id '01'"), but ``status`` read the ids as text,
took the set {01, 03} for the packet's and said ``1 recorded prompt(s) no
longer in the packet (not counted): 02 completed`` -- of a prompt whose file
is still there. Now a packet whose ids cannot be known (it does not load)
takes nothing out: every recorded prompt is shown, and one ``warning:`` line
gives the loader's own sentence (``--json``: ``packet_error``); ``status``
still exits 0, as it reports a run that may be live and whose state is
valid. Also when ``status --json``'s text was kept before the edit. Real runs
of the simulated provider.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from prompt_runner.state.status_cache import SETTLED_NS
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _ran(tmp_path: Path) -> Path:
    packet = make_packet(tmp_path, {"01": {}, "02": {}, "03": {}})
    done = cli("run", packet, "--no-commit")
    assert done.returncode == 0, done.stderr
    return packet


def _duplicate_id(packet: Path) -> str:
    """Make 02's file give 01's id; returns the sentence ``run`` refuses it with."""
    path = packet / "prompts" / "02_step.prompt.md"
    text = path.read_text(encoding="utf-8")
    assert "id: '02'" in text
    path.write_text(text.replace("id: '02'", "id: '01'"), encoding="utf-8")
    refused = cli("run", packet, "--remaining", "--no-commit")
    assert refused.returncode == 2
    assert "duplicate prompt id '01'" in refused.stderr
    return refused.stderr.strip().splitlines()[-1].removeprefix("error: ")


def test_a_prompt_still_there_is_not_called_removed(tmp_path: Path) -> None:
    packet = _ran(tmp_path)
    sentence = _duplicate_id(packet)
    shown = cli("status", packet)
    assert shown.returncode == 0, shown.stderr
    assert "no longer in the packet" not in shown.stdout
    lines = shown.stdout.splitlines()
    assert lines[1] == "Prompts: 3 completed"
    assert [line.split()[0] for line in lines if line.startswith("  ")] == ["01", "02", "03"]
    warnings = [line for line in shown.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].endswith(sentence), shown.stderr
    doc = json.loads(cli("status", packet, "--json").stdout)
    assert "removed_prompts" not in doc
    assert sorted(doc["prompts"]) == ["01", "02", "03"]
    assert doc["packet_error"] == sentence


def test_a_kept_status_text_is_not_printed_once_the_packet_breaks(tmp_path: Path) -> None:
    packet = _ran(tmp_path)
    time.sleep(SETTLED_NS / 1e9 + 0.2)  # only files older than this are kept
    assert "packet_error" not in json.loads(cli("status", packet, "--json").stdout)
    assert (packet / ".prompt_runner" / "status-cache").is_file()
    sentence = _duplicate_id(packet)
    time.sleep(SETTLED_NS / 1e9 + 0.2)  # old enough to keep: a broken packet's is not kept
    for _ in range(2):  # the argparse-free kept path first (cli/fast.py)
        shown = cli("status", packet, "--json")
        assert shown.returncode == 0, shown.stderr
        doc = json.loads(shown.stdout)
        assert doc["packet_error"] == sentence and "removed_prompts" not in doc


def test_a_packet_with_no_prompt_files_left_is_named_not_all_removed(tmp_path: Path) -> None:
    """Every prompt file gone (or the whole ``prompts/`` directory): ``run`` says
    the packet has no prompts; ``status`` said all recorded prompts were "no longer
    in the packet" with no warning (re-test s11 #4). Now it gives run's sentence."""
    packet = _ran(tmp_path)
    for path in (packet / "prompts").glob("*.prompt.md"):
        path.unlink()
    refused = cli("run", packet, "--remaining", "--no-commit")
    assert refused.returncode == 2 and "has no prompts" in refused.stderr, refused.stderr
    sentence = refused.stderr.strip().splitlines()[-1].removeprefix("error: ")
    shown = cli("status", packet)
    assert shown.returncode == 0, shown.stderr
    assert "no longer in the packet" not in shown.stdout, shown.stdout
    assert [line.split()[0] for line in shown.stdout.splitlines() if line.startswith("  ")] == [
        "01",
        "02",
        "03",
    ]
    warnings = [line for line in shown.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].endswith(sentence), shown.stderr
