"""``status`` and ``watch`` on a packet file that cannot be read as text (a new user's finding).

A prompt file that is a named pipe hung ``status``, ``status --json`` and
``watch --for`` forever (and ``watch --once`` once a run had logged that
prompt), and one linked to ``/dev/zero`` made ``status`` read until memory
ran out: their light id reader (packet/prompt_ids_text.py) opened the file
itself, while ``run``, ``list`` and ``plan`` refuse it before any read. It now
reads by the same rule (packet/file_read.py), so the packet is one that does
not load: ``status`` gives the loader's sentence in one ``warning:`` line
(``--json``: ``packet_error``) and still exits 0, as for a duplicate prompt id
(tests/cli/test_status_broken_packet_s11.py); a bounded watch marks its
samples ``packet=unloadable``.

A manifest (or a prompt file) giving a top-level key twice is refused by
``run`` naming the key and both lines; ``status`` said nothing of it (the
text reader reads only ``prompt_dir:`` and ``id:``). It now leaves such a
file to the loader, so ``status`` reports it as it reports an empty manifest.

The installed ``prompt-runner`` script runs as a real subprocess with a
deadline, under an address-space limit of 3 GB: a regression fails (a
timeout, a MemoryError) instead of hanging or taking the machine's memory.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.packets import make_packet

PROMPT_RUNNER = Path(sys.executable).parent / "prompt-runner"
LIMIT_AS = 3_000_000 * 1024  # `ulimit -v 3000000`
DEADLINE_S = 30  # each command ends in well under a second


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROMPT_RUNNER), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=DEADLINE_S,  # the old code never returned on a named pipe
        preexec_fn=_limited,
        check=False,
    )


def _refusal(tmp_path: Path) -> str:
    """The sentence ``run`` refuses the packet ``demo`` with (exit 2)."""
    refused = _run("run", "demo", "--no-commit", cwd=tmp_path)
    assert refused.returncode == 2, refused
    assert "Traceback" not in refused.stderr
    (line,) = refused.stderr.splitlines()
    return line.removeprefix("error: ")


def _assert_status_says(tmp_path: Path, sentence: str) -> None:
    shown = _run("status", "demo", cwd=tmp_path)
    assert shown.returncode == 0, shown
    assert shown.stderr == f"warning: the packet does not load: {sentence}\n", shown.stderr
    doc = json.loads(_run("status", "demo", "--json", cwd=tmp_path).stdout)
    assert doc["packet_error"] == sentence


def _unreadable(packet: Path, kind: str) -> Path:
    prompt = packet / "prompts" / "02_step.prompt.md"
    prompt.unlink()
    if kind == "fifo":
        os.mkfifo(prompt)
    else:
        prompt.symlink_to("/dev/zero")
    return prompt


KINDS = [("fifo", "a named pipe"), ("dev_zero", "a character device")]


@pytest.mark.parametrize(("kind", "named"), KINDS)
def test_status_names_a_prompt_file_that_is_not_a_regular_file(
    tmp_path: Path, kind: str, named: str
) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    _unreadable(packet, kind)
    sentence = _refusal(tmp_path)
    assert sentence == (
        f"demo/prompts/02_step.prompt.md: is not a regular file ({named}); "
        "replace it with a regular file, or remove it."
    )
    _assert_status_says(tmp_path, sentence)


@pytest.mark.parametrize(("kind", "named"), KINDS)
def test_a_bounded_watch_marks_the_packet_unloadable_and_ends(
    tmp_path: Path, kind: str, named: str
) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    _unreadable(packet, kind)
    watched = _run("watch", "demo", "--for", "2s", "--every", "1s", cwd=tmp_path)
    assert watched.returncode == 0, watched
    assert "packet=unloadable" in watched.stdout, watched.stdout
    assert f"02_step.prompt.md: is not a regular file ({named})" in watched.stderr
    assert "Traceback" not in watched.stderr


def test_watch_once_after_a_run_does_not_wait_on_the_logged_prompts_pipe(
    tmp_path: Path,
) -> None:
    """Once a run logged prompt 02, ``watch --once`` reads the file named for it
    to tell that the packet still holds 02: that read must not wait on a pipe."""
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    ran = _run("run", "demo", "--no-commit", cwd=tmp_path)
    assert ran.returncode == 0, ran
    _unreadable(packet, "fifo")
    for args in (("--once",), ("--once", "--json")):
        watched = _run("watch", "demo", *args, cwd=tmp_path)
        assert watched.returncode == 0, watched
        assert "Traceback" not in watched.stderr


@pytest.mark.parametrize("where", ["prompt_runner_packet.md", "prompts/02_step.prompt.md"])
def test_status_names_a_top_level_key_given_twice(tmp_path: Path, where: str) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    path = packet / where
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("name:"))
    lines.insert(at + 1, "name: again\n")
    path.write_text("".join(lines), encoding="utf-8")
    sentence = _refusal(tmp_path)
    assert f"demo/{where}: duplicate key 'name' at line" in sentence
    _assert_status_says(tmp_path, sentence)


def test_status_names_an_empty_manifest_as_before(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    (packet / "prompt_runner_packet.md").write_text("", encoding="utf-8")
    _assert_status_says(tmp_path, _refusal(tmp_path))


def test_the_text_reader_tells_a_repeated_top_level_key_from_a_nested_or_a_word() -> None:
    from prompt_runner.packet.prompt_ids_text import repeats_a_key

    assert repeats_a_key(["name: a", "id: '01'", "name: b"])
    assert repeats_a_key(['"name": a', "name: b"])  # quoted or bare: one key
    assert repeats_a_key(["name:", "  - x", "name : y"])
    assert not repeats_a_key(["name: a", "repos:", "  app: {path: x}", "  name: b"])
    assert not repeats_a_key(["a:b: c", "a: d", "# a: e", "- a: f"])  # a:b is one word
    assert not repeats_a_key(["body: |", "  name: a", "  name: b", "name: c"])
