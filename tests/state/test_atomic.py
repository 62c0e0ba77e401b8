"""Atomic replacement and checked JSON reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner.errors import StateError
from prompt_runner.state.atomic import (
    read_json,
    remove_stale_temps,
    temp_name,
    write_json_atomic,
    write_text_atomic,
)


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if ".tmp." in p.name)


def test_write_json_round_trips_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "state.json"
    for n in range(50):
        write_json_atomic(target, {"schema_version": 1, "n": n, "text": "é\n"})
        assert read_json(target) == {"schema_version": 1, "n": n, "text": "é\n"}
    assert _leftovers(target.parent) == []
    assert target.read_text(encoding="utf-8").endswith("}\n")


def test_temp_name_is_hidden_sibling_with_pid(tmp_path: Path) -> None:
    name = temp_name(tmp_path / "state.json")
    assert name.parent == tmp_path
    assert name.name.startswith(f".state.json.tmp.{os.getpid()}.")


def test_unencodable_object_writes_nothing(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    write_json_atomic(target, {"ok": True})
    with pytest.raises(ValueError):
        write_json_atomic(target, {"bad": float("nan")})
    with pytest.raises(TypeError):
        write_json_atomic(target, {"bad": object()})
    assert read_json(target) == {"ok": True}
    assert _leftovers(tmp_path) == []


def test_failed_replace_removes_temp(tmp_path: Path) -> None:
    target = tmp_path / "is-a-dir"
    (target / "child").mkdir(parents=True)  # os.replace over a non-empty dir fails
    with pytest.raises(OSError):
        write_text_atomic(target, "x")
    assert _leftovers(tmp_path) == []


def test_read_json_missing_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_json(tmp_path / "nope.json")


def test_read_json_corrupt_names_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text('{"a": 1,\n  oops', encoding="utf-8")
    with pytest.raises(StateError) as info:
        read_json(target)
    assert str(target) in str(info.value)
    assert "line 2" in str(info.value)
    assert "restore it from a backup" in str(info.value)


def test_read_json_invalid_utf8_is_state_error(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(StateError):
        read_json(target)


def test_reader_never_sees_partial_document(tmp_path: Path) -> None:
    """A reader process polling while we rewrite always parses a whole document."""
    target = tmp_path / "state.json"
    write_json_atomic(target, {"n": 0, "pad": "x" * 50_000})
    reader = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import json,sys,time\n"
            "p=sys.argv[1]; end=time.time()+1.5; n=0\n"
            "while time.time()<end:\n"
            "    json.load(open(p)); n+=1\n"
            "print(n)\n",
            str(target),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    n = 0
    while reader.poll() is None:
        n += 1
        write_json_atomic(target, {"n": n, "pad": "x" * 50_000})
    out, err = reader.communicate()
    assert reader.returncode == 0, err
    assert int(out) > 0
    assert json.loads(target.read_text())["n"] == n


def test_remove_stale_temps_only_removes_dead_writers(tmp_path: Path) -> None:
    dead = tmp_path / ".state.json.tmp.2147483646.abcd"
    live = tmp_path / f".state.json.tmp.{os.getpid()}.abcd"
    other = tmp_path / "state.json"
    for p in (dead, live, other):
        p.write_text("x")
    assert remove_stale_temps(tmp_path) == [dead]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])
    assert remove_stale_temps(tmp_path / "missing") == []
