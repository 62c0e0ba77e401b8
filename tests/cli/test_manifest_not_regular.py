"""A packet whose manifest exists but is not a regular file (a tester's finding).

A ``prompt_runner_packet.md`` that is a named pipe, a directory, a symlink to
``/dev/zero`` or a dangling symlink made every command say ``is not a packet
(no prompt_runner_packet.md); pass a packet directory, or create one with
`prompt-runner packet new``` (exit 2): the file is there, and creating it is
not the fix. Where the packet directory is recognised (paths.py) such a
manifest is now named with the sentence every packet file gets
(packet/file_read.py: what it is, "replace it with a regular file"):
``run``, ``list``, ``plan``, ``packet lint`` and ``watch`` refuse it with that
sentence (exit 2), never opening a named pipe; ``status`` (whose state root
needs no manifest) shows the recorded state with the one ``warning: the
packet does not load: <sentence>`` line and exits 0 (``--json``:
``packet_error``), as for a manifest over the size limit. ``watch`` needs the
manifest's repos, so it refuses both alike: a too-large manifest and one that
is not a regular file (exit 2, the sentence).

The installed ``prompt-runner`` script runs as a real subprocess with a
deadline: a command that waits on the pipe fails the test instead of hanging.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet

PROMPT_RUNNER = Path(sys.executable).parent / "prompt-runner"
DEADLINE_S = 30  # each command ends in well under a second
MANIFEST = "prompt_runner_packet.md"

WHAT = {
    "fifo": "is not a regular file (a named pipe); replace it with a regular file.",
    "directory": "is a directory, not a file; replace it with a regular file.",
    "devzero": "is not a regular file (a character device); replace it with a regular file.",
    "dangling": (
        "is a symbolic link to nowhere.md, which does not exist; "
        "replace it with a regular file, or fix the link."
    ),
}


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROMPT_RUNNER), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,
        check=False,
        env={**os.environ, "PROMPT_RUNNER_STATE_DIR": ""},
    )


def _run_packet(tmp_path: Path) -> Path:
    """A packet ``demo`` whose one prompt ``01`` a run completed."""
    packet = make_packet(tmp_path, {"01": {}})
    ran = _run("run", "demo", "--no-commit", cwd=tmp_path)
    assert ran.returncode == 0, ran
    return packet


def _assert_refused(
    args: tuple[str, ...], refused: subprocess.CompletedProcess[str], line: str
) -> None:
    """Exit 2 with ``line`` on stderr; ``--json``: the sentence as the JSON error too."""
    assert (refused.returncode, refused.stderr) == (2, line), (args, refused)
    if "--json" in args:
        doc = json.loads(refused.stdout)
        assert (doc["error"], doc["exit_code"]) == (line[len("error: ") : -1], 2), doc
    else:
        assert refused.stdout == "", (args, refused)


def _spoil(packet: Path, kind: str) -> None:
    manifest = packet / MANIFEST
    manifest.unlink()
    if kind == "fifo":
        os.mkfifo(manifest)
    elif kind == "directory":
        manifest.mkdir()
    elif kind == "devzero":
        manifest.symlink_to("/dev/zero")
    elif kind == "dangling":
        manifest.symlink_to("nowhere.md")
    else:
        raise AssertionError(kind)


@pytest.mark.parametrize("kind", sorted(WHAT))
def test_commands_name_the_manifest_with_the_file_rule(tmp_path: Path, kind: str) -> None:
    packet = _run_packet(tmp_path)
    _spoil(packet, kind)
    line = f"error: demo/{MANIFEST}: {WHAT[kind]}\n"
    for args in (
        ("run", "demo", "--no-commit"),
        ("run", f"demo/{MANIFEST}", "--no-commit"),  # the manifest given as the packet
        ("list", "demo"),
        ("plan", "demo"),
        ("packet", "lint", "demo"),
        ("watch", "demo", "--once"),
        ("watch", "demo", "--once", "--json"),
        ("watch", "demo", "--for", "2s", "--every", "1s"),
    ):
        _assert_refused(args, _run(*args, cwd=tmp_path), line)


@pytest.mark.parametrize("kind", sorted(WHAT))
def test_status_shows_the_recorded_state_with_one_warning(tmp_path: Path, kind: str) -> None:
    packet = _run_packet(tmp_path)
    assert _run("status", "demo", "--json", cwd=tmp_path).returncode == 0  # kept, then stale
    _spoil(packet, kind)
    sentence = f"demo/{MANIFEST}: {WHAT[kind]}"
    shown = _run("status", "demo", cwd=tmp_path)
    assert shown.returncode == 0, shown
    assert shown.stderr == f"warning: the packet does not load: {sentence}\n"
    assert "Prompts: 1 completed" in shown.stdout, shown.stdout
    assert "  01  completed" in shown.stdout, shown.stdout
    for _ in range(2):  # folded anew each time: a packet that does not load is not kept
        listed = _run("status", "demo", "--json", cwd=tmp_path)
        assert (listed.returncode, listed.stderr) == (0, ""), listed
        doc = json.loads(listed.stdout)
        assert doc["packet_error"] == sentence
        assert doc["prompts"]["01"]["status"] == "completed"
        assert doc["pending"] == []


def test_a_missing_manifest_is_still_no_packet(tmp_path: Path) -> None:
    packet = _run_packet(tmp_path)
    (packet / MANIFEST).unlink()
    for args in (("status", "demo"), ("run", "demo"), ("watch", "demo", "--once")):
        refused = _run(*args, cwd=tmp_path)
        assert refused.returncode == 2, refused
        assert f"demo: is not a packet (no {MANIFEST})" in refused.stderr, refused


@pytest.mark.parametrize("kind", ["huge", "fifo"])
def test_watch_refuses_a_too_large_manifest_as_one_not_regular(tmp_path: Path, kind: str) -> None:
    """``watch`` reads the manifest's repos: a manifest it cannot read is refused
    alike, whether too large or not a regular file; ``status`` shows both."""
    packet = _run_packet(tmp_path)
    manifest = packet / MANIFEST
    if kind == "huge":
        with manifest.open("a") as out:
            out.write("a" * 10_000_001)
        what = (
            "is larger than 10,000,000 bytes; make it smaller "
            "(a packet's files are text; keep large data in the repos)."
        )
    else:
        _spoil(packet, kind)
        what = WHAT[kind]
    line = f"error: demo/{MANIFEST}: {what}\n"
    for args in (("--once",), ("--once", "--json"), ("--for", "2s", "--every", "1s")):
        _assert_refused(args, _run("watch", "demo", *args, cwd=tmp_path), line)
    shown = _run("status", "demo", cwd=tmp_path)
    assert shown.returncode == 0, shown
    assert shown.stderr == f"warning: the packet does not load: demo/{MANIFEST}: {what}\n"
