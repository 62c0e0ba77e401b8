"""``status`` describes the packet as it is now: a prompt deleted from the packet
whose record remains in ``.prompt_runner/prompts/`` was still listed and counted
as completed (a new user's finding). It is named once, apart, and counted
nowhere; ``--json`` puts it under ``removed_prompts`` -- also when the kept text
(state/status_cache.py) was made before the deletion. Real runs, real git.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import prompt_runner.api_status as api_status
from prompt_runner.state.status_cache import SETTLED_NS
from tests.helpers.cli import cli
from tests.helpers.packets import FAST, NOREPAIR, make_packet

ONE_TRY = {"recovery": {**FAST, **NOREPAIR, "retry": {**FAST["retry"], "max_attempts": 1}}}


def _ran(tmp_path: Path) -> Path:
    """01 completed, 02 verification_failed, 03 never run (the run stopped at 02)."""
    never = {"verify": {"files_exist": ["never.txt"]}}
    packet = make_packet(tmp_path, {"01": {}, "02": never, "03": {}}, manifest=ONE_TRY)
    assert cli("run", packet, "--no-commit").returncode == 1
    return packet


def _json(packet: Path) -> dict[str, object]:
    shown = cli("status", packet, "--json")
    assert shown.returncode == 0, shown.stderr
    doc: dict[str, object] = json.loads(shown.stdout)
    return doc


def test_a_deleted_prompt_is_named_once_and_counted_nowhere(tmp_path: Path) -> None:
    packet = _ran(tmp_path)
    (packet / "prompts" / "01_step.prompt.md").unlink()
    shown = cli("status", packet)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1] == "Prompts: 1 pending, 1 verification_failed"
    assert lines[2] == "1 recorded prompt(s) no longer in the packet (not counted): 01 completed"
    assert not [line for line in lines if line.startswith("  01  ")]
    assert lines[-1] == f"  03  {'pending':<22} not run yet"
    doc = _json(packet)
    assert sorted(doc["prompts"]) == ["02"]  # type: ignore[call-overload]
    assert doc["removed_prompts"] == {"01": "completed"}
    assert doc["pending"] == ["03"]


def test_a_deleted_pending_prompt_is_no_longer_pending(tmp_path: Path) -> None:
    packet = _ran(tmp_path)
    (packet / "prompts" / "03_step.prompt.md").unlink()
    doc = _json(packet)
    assert doc["pending"] == [] and "removed_prompts" not in doc
    lines = cli("status", packet).stdout.splitlines()
    assert lines[1] == "Prompts: 1 completed, 1 verification_failed"
    assert "03" not in "\n".join(lines[3:])


def test_every_prompt_in_the_packet_means_nothing_removed(tmp_path: Path) -> None:
    packet = _ran(tmp_path)
    doc = _json(packet)
    assert "removed_prompts" not in doc
    assert sorted(doc["prompts"]) == ["01", "02"]  # type: ignore[call-overload]
    assert "no longer in the packet" not in cli("status", packet).stdout


def test_a_kept_status_text_is_not_printed_once_a_prompt_is_deleted(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    assert cli("run", packet, "--no-commit").returncode == 0
    time.sleep(SETTLED_NS / 1e9 + 0.2)  # only files older than this are kept
    assert "removed_prompts" not in _json(packet)
    assert (packet / ".prompt_runner" / "status-cache").is_file()
    (packet / "prompts" / "02_step.prompt.md").unlink()
    doc = _json(packet)  # the argparse-free kept path first (cli/fast.py)
    assert doc["removed_prompts"] == {"02": "completed"}
    assert sorted(doc["prompts"]) == ["01"]  # type: ignore[call-overload]


def test_a_prompt_added_since_the_run_is_pending_nowhere_removed(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    assert cli("run", packet, "--no-commit").returncode == 0
    time.sleep(SETTLED_NS / 1e9 + 0.2)
    assert "removed_prompts" not in _json(packet)
    renamed = packet / "prompts" / "01_step.prompt.md"
    text = renamed.read_text(encoding="utf-8").replace("id: '01'", "id: '07'")
    renamed.write_text(text, encoding="utf-8")  # the same file, another id: 01 is gone
    assert _json(packet)["removed_prompts"] == {"01": "completed"}


def test_the_ids_read_without_yaml_are_the_loaders(tmp_path: Path) -> None:
    """Quoted, bare and commented ids and a ``prompt_dir`` read by the light scan;
    a form only YAML can read (a bare number, a flow mapping) is loaded."""
    packet = make_packet(tmp_path, {"a1": {}, "02": {}}, manifest={"prompt_dir": "steps"})
    (packet / "prompts").rename(packet / "steps")
    files = sorted((packet / "steps").glob("*.prompt.md"))
    assert api_status.packet_prompt_ids(packet) == {"a1", "02"}
    bare = files[-1]  # a1_step.prompt.md
    bare.write_text(
        bare.read_text(encoding="utf-8").replace("id: a1", "id: a1  # the first"),
        encoding="utf-8",
    )
    assert api_status.packet_prompt_ids(packet) == {"a1", "02"}
    flow = files[0]  # 02_step.prompt.md, its front matter as one flow mapping
    body = flow.read_text(encoding="utf-8").split("---\n", 2)[2]
    flow.write_text(
        '---\n{id: "02", phase: 1, name: Two, targets: [app]}\n---\n' + body, encoding="utf-8"
    )
    assert api_status.packet_prompt_ids(packet) == {"a1", "02"}
    (packet / "prompt_runner_packet.md").write_text("no front matter\n", encoding="utf-8")
    assert api_status.packet_prompt_ids(packet) is None  # no packet loads: nothing hidden
