"""runs/current.json whose fields have the wrong JSON types is a damaged file.

``{"run_id": 5, "status": [1]}`` was accepted: ``status`` dropped its "Last
run ended" line (``last_run: null``) and exited 0, and ``run --all`` resumed a
"run 5" that ran nothing and created ``runs/5/``. Every reader now refuses it
with the damaged-current.json sentence (naming the key), exit 2, and writes
nothing. Real runs of the installed CLI on a real packet and git repo.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.packets import make_packet

EXE = Path(sys.executable).with_name("prompt-runner")  # .venv/bin/prompt-runner
FIX = "delete it; the next run then starts a new run generation."


def _cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(EXE), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet of three prompts whose run completed (committed to its git repo)."""
    root = tmp_path_factory.mktemp("ran")
    packet = make_packet(root, {"01": {}, "02": {}, "03": {}})
    done = _cli("run", packet)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def _copy(ran: Path, tmp_path: Path) -> Path:
    shutil.copytree(ran, tmp_path / "w", symlinks=True)
    return tmp_path / "w" / "demo"


def _tree(state: Path) -> dict[str, str]:
    """Every file and directory under the state root, with its content's digest."""
    return {
        str(p.relative_to(state)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "/"
        for p in sorted(state.rglob("*"))
    }


def _current(packet: Path) -> Path:
    return packet / ".prompt_runner" / "runs" / "current.json"


def _damage(packet: Path, change: dict[str, Any] | None) -> None:
    """Merge ``change`` over the real current.json (``None``: the tester's file)."""
    path = _current(packet)
    doc = (
        {"run_id": 5, "status": [1]}
        if change is None
        else {**json.loads(path.read_text()), **change}
    )
    path.write_text(json.dumps(doc), encoding="utf-8")


def _refused(proc: subprocess.CompletedProcess[str], packet: Path, key: str) -> str:
    """The one sentence ``proc`` refused the file with (exit 2, no traceback)."""
    assert proc.returncode == 2, (proc.args, proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr + proc.stdout
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, proc.stderr
    sentence = lines[0].removeprefix("error: ")
    # the file (shown relative to the working directory, the packet's parent) and the key
    assert sentence.startswith(f"demo/.prompt_runner/runs/current.json: {key}: must be "), sentence
    assert sentence.endswith(FIX), sentence
    return sentence


def test_the_testers_file_is_refused_by_every_reader_and_nothing_is_written(
    ran: Path, tmp_path: Path
) -> None:
    packet = _copy(ran, tmp_path)
    _damage(packet, None)
    state = packet / ".prompt_runner"
    before = _tree(state)
    sentences = set()
    argvs: list[list[str | Path]] = [
        ["status", packet],
        ["status", packet, "--json"],
        ["control", "status", packet],
        ["control", "status", packet, "--json"],
        ["control", "steer", "hi", "--packet", packet],
        ["run", packet, "--all"],
        ["run", packet, "--remaining"],
        ["run", packet, "--all", "--new-run"],
    ]
    for argv in argvs:
        proc = _cli(*argv, cwd=packet.parent)
        sentences.add(_refused(proc, packet, "run_id"))
        assert "Resuming run" not in proc.stdout and "Skipping" not in proc.stdout
        assert not (state / "runs" / "5").exists()
        assert _tree(state) == before, argv  # the damaged file stays as it was, nothing added
    assert len(sentences) == 1, sentences  # the same sentence wherever it is read
    assert "not a number" in sentences.pop()


def test_a_bounded_watch_names_it_as_unreadable_state(ran: Path, tmp_path: Path) -> None:
    packet = _copy(ran, tmp_path)
    _damage(packet, None)
    proc = _cli("watch", packet, "--for", "1s", "--every", "1s", cwd=packet.parent)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "state_unreadable" in proc.stdout + proc.stderr
    assert "current.json: run_id: must be " in proc.stdout + proc.stderr


@pytest.mark.parametrize(
    ("change", "key", "shown"),
    [
        ({"status": [1]}, "status", "not a list"),
        ({"status": None}, "status", "not null"),
        ({"run_id": "../outside"}, "run_id", "not '../outside'"),
        ({"run_id": ""}, "run_id", "not ''"),
        ({"run_id": None}, "run_id", "not null"),
        ({"targets": "01"}, "targets", "not '01'"),
        ({"targets": ["01", 2]}, "targets", "not a list holding a number"),
        ({"fingerprint": 7}, "fingerprint", "not a number"),
        ({"started_at": {"at": 1}}, "started_at", "not an object"),
        ({"schema_version": "1"}, "schema_version", "not '1'"),
    ],
)
def test_each_field_of_the_wrong_type_is_named(
    ran: Path, tmp_path: Path, change: dict[str, Any], key: str, shown: str
) -> None:
    packet = _copy(ran, tmp_path)
    _damage(packet, change)
    state = packet / ".prompt_runner"
    before = _tree(state)
    argvs: list[list[str | Path]] = [["status", packet, "--json"], ["run", packet, "--all"]]
    for argv in argvs:
        sentence = _refused(_cli(*argv, cwd=packet.parent), packet, key)
        assert shown in sentence, sentence
        assert _tree(state) == before, argv


def test_unknown_keys_and_a_null_resumption_are_still_read(ran: Path, tmp_path: Path) -> None:
    packet = _copy(ran, tmp_path)
    _damage(packet, {"resumed_at": None, "note": [1, {"x": None}], "closed_by": "remaining"})
    human = _cli("status", packet)
    assert human.returncode == 0, human.stderr
    assert "Last run ended completed at " in human.stdout
    doc = json.loads(_cli("status", packet, "--json").stdout)
    assert doc["last_run"]["status"] == "completed"
    assert _cli("control", "status", packet, "--json").returncode == 0


def test_a_run_id_is_the_name_the_store_gives_a_run_directory() -> None:
    from prompt_runner.state import current_run_shape, prompt_log

    assert current_run_shape._SAFE_NAME.pattern == prompt_log._SAFE_NAME.pattern
