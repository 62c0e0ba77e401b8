"""The reference's CLI convention: the packet argument defaults to the current directory.

guides/cli.md of Prompt Runner SDK: "All commands operate on a packet directory.
If you omit the directory, Prompt Runner uses the current working directory." In
its CLI (lib/prompt_runner/cli.ex) ``run``/``plan``/``verify`` take ``[PACKET]
[IDS]`` -- a first word that is no directory is an id of the packet here --
and ``--packet DIR``; ``repair``, ``prompt new`` and ``repo add`` take
``--packet`` or the current directory; ``control steer TEXT`` and ``control
amend ID`` work inside a packet; ``watch`` samples every 900 s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.cli.parser import build_parser
from tests.cli.inproc import PR
from tests.helpers.packets import make_packet

WRITE = {
    "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
    "verify": {"files_exist": ["a.txt"]},
}


@pytest.fixture
def packet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    made = make_packet(tmp_path, {"01": WRITE, "02": {}, "03": {}})
    monkeypatch.chdir(made)
    return made


def _names_demo(doc: Any) -> bool:
    return doc.get("packet") == "demo" or doc.get("packet", {}).get("name") == "demo"


@pytest.mark.parametrize(
    ("args", "check"),
    [
        (("list", "--json"), lambda doc: [p["id"] for p in doc["prompts"]] == ["01", "02", "03"]),
        (("plan", "--json"), lambda doc: doc["selected"] == ["01", "02", "03"]),
        (("verify", "--json"), lambda doc: doc["prompts"] == 3),
        (("status", "--json"), lambda doc: sorted(doc["prompts"]) == ["01", "02", "03"]),
        (("watch", "--once", "--json"), _names_demo),
        (
            ("packet", "explain"),
            lambda doc: [p["id"] for p in doc["prompts"]] == ["01", "02", "03"],
        ),
        (("packet", "lint", "--json"), _names_demo),
        (("packet", "doctor", "--json"), _names_demo),
        (("packet", "preflight"), _names_demo),
        (("packet", "migrate-contracts", "--json"), lambda doc: doc["converted"] == 0),
        (("checklist", "sync", "--json"), lambda doc: len(doc["written"]) == 3),
    ],
)
def test_a_command_without_a_packet_reads_the_packet_here(
    packet: Path, pr: PR, args: tuple[str, ...], check: Callable[[Any], bool]
) -> None:
    assert pr("run", packet, "--no-commit").code == 0
    result = pr(*args)
    assert result.code in (0, 1), result.err  # doctor judges 02 and 03: no verify items
    assert check(json.loads(result.out)), result.out


def test_run_without_a_packet_runs_the_packet_here(packet: Path, pr: PR) -> None:
    result = pr("run", "--no-commit", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["prompts"] == {
        "01": "completed",
        "02": "completed",
        "03": "completed",
    }
    assert (packet / ".prompt_runner" / "progress.log").is_file()


def test_ids_alone_are_ids_of_the_packet_here(packet: Path, pr: PR) -> None:
    result = pr("plan", "02", "03", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["selected"] == ["02", "03"]
    result = pr("verify", "01", "--json")
    assert [r["prompt_id"] for r in json.loads(result.out)["reports"]] == ["01"]


def test_the_packet_flag_names_the_packet_and_every_word_is_an_id(
    packet: Path, pr: PR, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = pr("plan", "--packet", packet, "03", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["selected"] == ["03"]
    assert pr("status", "--packet", packet, "--json").code == 0
    result = pr("status", packet, "--packet", packet)
    assert result.code == 2 and "--packet" in result.err


def test_repair_and_control_take_the_packet_here(packet: Path, pr: PR) -> None:
    assert pr("run", "--no-commit").code == 0
    result = pr("repair", "01", "--no-commit", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["prompts"] == {"01": "completed"}
    assert json.loads(pr("control", "status", "--json").out)["packet"] == "demo"
    assert pr("control", "log", "--json").code == 0
    assert pr("control", "events", "--json").out.strip()
    assert json.loads(pr("control", "contract", "01", "--json").out)["prompt_id"] == "01"
    result = pr("control", "amend", "02", "--add-file", "b.txt", "--reason", "needed", "--json")
    assert result.code == 0, result.err
    assert json.loads(result.out)["record"]["prompt"] == "02"
    view = pr("control", "view", "--diff", "full", "--json")
    assert json.loads(view.out)["params"] == {"diff": "full"}
    steer = pr("control", "steer", "use the helper")
    assert steer.code == 2 and "no live or unfinished run" in steer.err  # the run completed


def test_authoring_commands_take_the_packet_here(packet: Path, pr: PR, tmp_path: Path) -> None:
    result = pr("prompt", "new", "04", "--name", "Four", "--targets", "app")
    assert result.code == 0, result.err
    assert (packet / "prompts").glob("04_*.prompt.md")
    (tmp_path / "docs").mkdir()
    result = pr("packet", "add-repo", "docs", str(tmp_path / "docs"))
    assert result.code == 0, result.err
    assert "docs:" in (packet / "prompt_runner_packet.md").read_text()
    # the reference's spelling, `repo add NAME PATH [PACKET]`
    (tmp_path / "site").mkdir()
    assert pr("repo", "add", "site", str(tmp_path / "site")).code == 0
    (tmp_path / "api").mkdir()
    assert pr("repo", "add", "api", str(tmp_path / "api"), packet, "--default").code == 0
    manifest = (packet / "prompt_runner_packet.md").read_text()
    assert "site:" in manifest and "api:" in manifest
    assert json.loads(pr("packet", "explain").out)["default_repo"] == "api"


def test_outside_a_packet_the_error_names_the_directory(
    tmp_path: Path, pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for args in (("plan",), ("verify",), ("status",), ("control", "status")):
        result = pr(*args)
        assert result.code == 2, (args, result.err)
        assert str(tmp_path) in result.err and "prompt_runner_packet.md" in result.err, result.err
        assert "Traceback" not in result.err


def test_watch_samples_every_900_seconds_by_default() -> None:
    # The reference's `watch --interval SECONDS (default 900)`.
    assert build_parser().parse_args(["watch"]).interval == 900


def test_template_list_inside_a_packet_shows_its_templates(
    packet: Path, pr: PR, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (packet / "templates").mkdir()
    (packet / "templates" / "mine.prompt.md").write_text("---\nname: x\n---\nbody\n")
    here = json.loads(pr("template", "list", "--json").out)
    assert {"name": "mine", "source": "packet"} in here
    assert here == json.loads(pr("template", "list", ".", "--json").out)
    # outside a packet: the home and built-in templates, no error
    monkeypatch.chdir(tmp_path)
    result = pr("template", "list", "--json")
    assert result.code == 0, result.err
    assert {"packet"}.isdisjoint(entry["source"] for entry in json.loads(result.out))
