"""A packet file that is not a regular file, or is huge, is refused in one
sentence (exit 2) before it is read: a named pipe hung plan, list and lint
forever, a link to ``/dev/zero`` was read until memory ran out (a new user's
finding). The parsed-packet cache must not read one either.

Every command runs as a real subprocess; the ``/dev/zero`` case under an
address-space limit of 3 GB, so a regression fails with a MemoryError instead
of taking the machine's memory.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet

FILES_EXIST = {"verify": {"files_exist": ["a.txt"]}}
LIMIT_AS = 3_000_000 * 1024  # `ulimit -v 3000000`


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,  # the old code never returned on a named pipe
        preexec_fn=_limited,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [("plan",), ("list",), ("packet", "lint"), ("packet", "doctor"), ("packet", "preflight")],
)
def test_a_prompt_file_that_is_a_named_pipe_is_refused_not_waited_on(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    packet = make_packet(tmp_path, {"01": FILES_EXIST})
    os.mkfifo(packet / "prompts" / "02_x.prompt.md")
    res = _run(*command, "demo", cwd=tmp_path)
    assert res.returncode in (1, 2), res  # lint and doctor report a failed check with 1
    said = res.stdout + res.stderr
    assert "prompts/02_x.prompt.md: is not a regular file (a named pipe)" in said, said
    assert "Traceback" not in said


def test_a_prompt_file_linked_to_dev_zero_is_refused_before_any_read(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": FILES_EXIST})
    (packet / "prompts" / "02_x.prompt.md").symlink_to("/dev/zero")
    res = _run("plan", "demo", cwd=tmp_path)
    assert res.returncode == 2, res
    assert res.stderr == (
        "error: demo/prompts/02_x.prompt.md: is not a regular file (a character device); "
        "replace it with a regular file, or remove it.\n"
    )


def test_the_parsed_packet_cache_does_not_read_a_pipe_put_in_a_prompts_place(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {"01": FILES_EXIST, "02": FILES_EXIST})
    first = _run("plan", "demo", cwd=tmp_path)
    assert first.returncode == 0, first  # the parse is kept in the cache
    prompt = packet / "prompts" / "02_step.prompt.md"
    prompt.unlink()
    os.mkfifo(prompt)
    res = _run("plan", "demo", cwd=tmp_path)
    assert res.returncode == 2, res
    assert "demo/prompts/02_step.prompt.md: is not a regular file (a named pipe)" in res.stderr


def test_a_prompt_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": FILES_EXIST})
    big = packet / "prompts" / "02_x.prompt.md"
    big.write_bytes(b"---\nid: '02'\n---\n" + b"a" * 10_000_000)
    res = _run("plan", "demo", cwd=tmp_path)
    assert res.returncode == 2, res
    assert "demo/prompts/02_x.prompt.md: is larger than 10,000,000 bytes" in res.stderr


def test_a_manifest_that_is_a_named_pipe_is_named(tmp_path: Path) -> None:
    """The manifest is there: the refusal names it by the file rule, not "is not
    a packet" (tests/cli/test_manifest_not_regular.py has the other kinds)."""
    packet = make_packet(tmp_path, {"01": FILES_EXIST})
    manifest = packet / "prompt_runner_packet.md"
    manifest.unlink()
    os.mkfifo(manifest)
    res = _run("plan", "demo", cwd=tmp_path)
    assert res.returncode == 2, res
    assert res.stderr == (
        "error: demo/prompt_runner_packet.md: is not a regular file (a named pipe); "
        "replace it with a regular file.\n"
    )


def test_a_pipe_in_place_of_a_kept_cache_entry_is_not_waited_on(tmp_path: Path) -> None:
    make_packet(tmp_path, {"01": FILES_EXIST})
    assert _run("plan", "demo", cwd=tmp_path).returncode == 0  # the parse is kept
    entries = Path(os.environ["XDG_CACHE_HOME"]) / "prompt-runner" / "packets"
    kept = sorted(entries.iterdir())
    assert kept, "plan kept nothing in the cache"
    for entry in kept:
        entry.unlink()
        os.mkfifo(entry)
    res = _run("plan", "demo", cwd=tmp_path)
    assert res.returncode == 0, res  # the entry is ignored, the packet parsed again
