"""``watch`` never names a prompt deleted from the packet as the current one.

A sample's ``prompt`` came from the newest ``logs/prompt-<id>-*.log`` alone, so
after a prompt that ran was deleted from the packet, ``watch --once`` went on
naming it (``status`` already leaves such a prompt out). Now the newest log of
a prompt the packet still holds is named, or none. Real runs of the simulated
provider, the real CLI (``watch --once`` takes its argparse-free path in a
subprocess), the library and the bounded watch.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prompt_runner.api_watch import watch_sample
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


@pytest.fixture
def ran(tmp_path: Path) -> Path:
    """A packet of prompts 01 and 02 that ran to completion (02's log is the newest)."""
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    done = cli("run", packet, "--no-commit")
    assert done.returncode == 0, done.stderr
    logs = sorted(p.name for p in (packet / ".prompt_runner" / "logs").glob("prompt-*.log"))
    assert [name[:10] for name in logs] == ["prompt-01-", "prompt-02-"]
    assert json.loads(cli("watch", packet, "--once", "--json").stdout)["prompt"] == "02"
    return packet


def _prompts_everywhere(packet: Path) -> list[str | None]:
    """The ``prompt`` of ``watch --once --json`` (twice: the manifest read anew,
    then kept), ``watch --once``, the library's sample and a bounded watch's."""
    shown: list[str | None] = []
    for _ in range(2):
        once = cli("watch", packet, "--once", "--json")
        assert once.returncode == 0, once.stderr
        shown.append(json.loads(once.stdout)["prompt"])
    text = cli("watch", packet, "--once")
    assert text.returncode == 0, text.stderr
    words = dict(w.split("=", 1) for w in text.stdout.split() if "=" in w)
    shown.append(None if words["prompt"] == "none" else words["prompt"])
    shown.append(watch_sample(packet).prompt)
    bounded = cli("watch", packet, "--for", "1s", "--every", "1s", "--json")
    assert bounded.returncode == 0, bounded.stdout + bounded.stderr
    *samples, _report = [json.loads(line) for line in bounded.stdout.splitlines()]
    shown.extend(s["prompt"] for s in samples)
    return shown


def test_a_deleted_prompt_is_not_named_the_newest_one_left_is(ran: Path) -> None:
    (ran / "prompts" / "02_step.prompt.md").unlink()
    assert set(_prompts_everywhere(ran)) == {"01"}


def test_a_prompt_whose_file_now_gives_another_id_is_not_named(ran: Path) -> None:
    """The file named for 02 is still there, but it is prompt 03 now."""
    prompt = ran / "prompts" / "02_step.prompt.md"
    prompt.write_text(prompt.read_text().replace("id: '02'", "id: '03'"))
    assert "id: '03'" in prompt.read_text()
    assert set(_prompts_everywhere(ran)) == {"01"}


def test_no_prompt_is_named_when_none_that_ran_is_left(ran: Path) -> None:
    for name in ("01_step.prompt.md", "02_step.prompt.md"):
        (ran / "prompts" / name).unlink()
    make_packet(ran.parent, {"03": {}}, name="other")  # a prompt file that never ran
    (ran.parent / "other" / "prompts" / "03_step.prompt.md").rename(
        ran / "prompts" / "03_step.prompt.md"
    )
    assert set(_prompts_everywhere(ran)) == {None}


def test_a_prompt_still_held_under_another_file_name_is_named(ran: Path) -> None:
    """Named by its ``id:``, not by its file's name: 02 moved to a file named
    otherwise is still the packet's, and still the current prompt."""
    (ran / "prompts" / "02_step.prompt.md").rename(ran / "prompts" / "zz_last.prompt.md")
    assert set(_prompts_everywhere(ran)) == {"02"}


def test_a_packet_whose_ids_only_yaml_reads_is_judged_by_loading_it(ran: Path) -> None:
    """An ``id:`` that is not a plain word (here a folded block) is read by the
    packet loader: 02 deleted is still not named, 01 (written so) still is."""
    first = ran / "prompts" / "01_step.prompt.md"
    first.write_text(first.read_text().replace("id: '01'", "id: >-\n  01"))
    (ran / "prompts" / "02_step.prompt.md").unlink()
    assert cli("status", ran).returncode == 0  # the packet loads
    assert set(_prompts_everywhere(ran)) == {"01"}
