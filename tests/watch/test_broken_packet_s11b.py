"""A bounded watch judges a packet that does not load as ``status`` does (a new user's finding).

Prompt 02's file was edited to give ``id: '01'``: ``run`` refuses the packet
(exit 2, the loader's sentence) while ``watch --for`` passed saying nothing.
Now each sample carries ``packet_error`` -- the sentence ``status`` warns with
-- and the human watch says it once, on a ``warning:`` line; the run's records
are valid, so it is shown, not judged (the watch still passes, as ``status``
still exits 0). The answer is kept while the packet's files are unchanged.
Real runs of the simulated provider, the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


@pytest.fixture
def broken(tmp_path: Path) -> tuple[Path, str]:
    """A packet whose three prompts ran, then 02's file gave 01's id; and the
    sentence ``run`` refuses it with."""
    packet = make_packet(tmp_path, {"01": {}, "02": {}, "03": {}})
    assert cli("run", packet, "--no-commit").returncode == 0
    path = packet / "prompts" / "02_step.prompt.md"
    path.write_text(path.read_text().replace("id: '02'", "id: '01'"), encoding="utf-8")
    refused = cli("run", packet, "--remaining", "--no-commit")
    assert refused.returncode == 2 and "duplicate prompt id '01'" in refused.stderr
    return packet, refused.stderr.strip().splitlines()[-1].removeprefix("error: ")


def test_each_sample_carries_the_loaders_sentence(broken: tuple[Path, str]) -> None:
    packet, sentence = broken
    shown = cli("watch", packet, "--for", "1s", "--every", "1s", "--json")
    assert shown.returncode == 0, shown.stdout + shown.stderr  # shown, not judged
    *samples, report = [json.loads(line) for line in shown.stdout.splitlines()]
    assert samples and all(s["packet_error"] == sentence for s in samples)
    assert report["passed"] is True
    human = cli("watch", packet, "--for", "1s", "--every", "1s")
    assert human.returncode == 0, human.stdout + human.stderr
    warnings = [line for line in human.stderr.splitlines() if line.startswith("warning:")]
    status = cli("status", packet)
    assert warnings == [line for line in status.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].endswith(sentence)
    assert all("packet=unloadable" in line for line in human.stdout.splitlines()[:-1])


def test_the_answer_is_kept_while_the_packet_holds_still(
    broken: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from prompt_runner.watch import packet_check  # new with the check (the first test runs without)

    packet, sentence = broken
    asked: list[str] = []
    real = packet_check.packet_ids

    def counted(root: str) -> tuple[set[str] | None, str | None]:
        asked.append(root)
        return real(root)

    monkeypatch.setattr(packet_check, "packet_ids", counted)
    check = packet_check.PacketCheck()
    assert check.error(packet) == sentence
    assert check.error(packet) == sentence
    assert len(asked) == 1
    path = packet / "prompts" / "02_step.prompt.md"
    path.write_text(path.read_text().replace("id: '01'", "id: '02'"), encoding="utf-8")
    assert check.error(packet) is None
    assert len(asked) == 2
