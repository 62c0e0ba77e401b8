"""``list`` prints a kept text only while every input it read holds
(cli/kept_output.py): real packets, real files, the real command in a
subprocess. Each test keeps a text (inputs older than the 2 s settle rule),
changes one input and expects the new output; a marker planted in the kept
entry shows whether a text was served from it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prompt_runner.cli import kept_output
from prompt_runner.state.status_cache import SETTLED_NS
from tests.helpers.packets import make_packet

MARKER = "served from the kept entry\n"


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A packet of three prompts whose run completed them (copied for each test)."""
    root = tmp_path_factory.mktemp("ran")
    packet = make_packet(
        root, {"01": {"name": "alpha"}, "02": {"name": "bravo"}, "03": {"name": "charl"}}
    )
    subprocess.run(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        check=True,
        capture_output=True,
    )
    return root


@pytest.fixture
def packet(ran: Path, tmp_path: Path) -> Path:
    subprocess.run(["cp", "-a", str(ran), str(tmp_path / "w")], check=True)
    return tmp_path / "w" / "demo"


def _env(cache: Path | str, **extra: str) -> dict[str, str]:
    env = dict(os.environ, PROMPT_RUNNER_CACHE_DIR=str(cache))
    env.update(extra)
    return env


def _list(
    packet: Path | None, *flags: str, cache: Path | str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "prompt_runner", "list"]
    argv += [str(packet)] if packet is not None else []
    return subprocess.run(
        [*argv, *flags], capture_output=True, text=True, env=_env(cache, **env), cwd=cwd
    )


def _settle() -> None:
    time.sleep(SETTLED_NS / 1e9 + 0.2)  # only inputs older than this are kept


def _entries(cache: Path) -> list[Path]:
    outputs = cache / "outputs"
    return sorted(outputs.iterdir()) if outputs.is_dir() else []


def _plant(entry: Path, text: str = MARKER) -> None:
    """Replace the kept text of ``entry`` by ``text``, its digest made right, so a
    served text is told from a folded one."""
    data = entry.read_bytes()
    head = data.split(b"\n", 3)
    inputs_length = int(head[2].split(b" ")[0])
    inputs = head[3][:inputs_length]
    new = text.encode("utf-8")
    line = f"{len(inputs)} {len(new)} ".encode() + kept_output._check(inputs, new)
    entry.write_bytes(b"\n".join([head[0], head[1], line, inputs + new]))


def _keep(packet: Path, cache: Path, *flags: str, cwd: Path | None = None) -> str:
    """Settle, list (keeps), plant the marker, and check it is served; the real text."""
    _settle()
    first = _list(packet, *flags, cache=cache, cwd=cwd)
    assert first.returncode == 0, first.stderr
    entries = _entries(cache)
    assert len(entries) == 1
    _plant(entries[0])
    assert _list(packet, *flags, cache=cache, cwd=cwd).stdout == MARKER
    return first.stdout


def test_a_kept_text_is_the_folded_text_and_never_serves_a_cold_list(
    packet: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    _settle()
    texts: dict[tuple[str, ...], str] = {}
    for flags in ((), ("--json",)):
        folded = _list(packet, *flags, cache=cache)
        served = _list(packet, *flags, cache=cache)
        assert folded.returncode == served.returncode == 0
        assert served.stdout == folded.stdout and served.stderr == ""
        cold = _list(packet, *flags, cache="")  # PROMPT_RUNNER_CACHE_DIR= : the cache is off
        assert cold.stdout == folded.stdout
        texts[flags] = folded.stdout
    assert len(_entries(cache)) == 2  # one per command line
    assert json.loads(texts[("--json",)])["packet"] == "demo"
    for entry in _entries(cache):
        _plant(entry)
    assert _list(packet, cache=cache).stdout == MARKER
    assert _list(packet, "--json", cache=cache).stdout == MARKER
    assert _list(packet, cache="").stdout == texts[()]  # truly cold: nothing kept serves it


def test_a_damaged_entry_is_not_served(packet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    real = _keep(packet, cache)
    entry = _entries(cache)[0]
    data = bytearray(entry.read_bytes())
    data[-3] ^= 0x01  # one bit of the text, digest left as it was
    entry.write_bytes(bytes(data))
    assert _list(packet, cache=cache).stdout == real


def test_a_named_pipe_in_place_of_an_entry_is_not_read(packet: Path, tmp_path: Path) -> None:
    # F-packet's finding: the entry was read with open().read(), which a named
    # pipe blocks for ever
    cache = tmp_path / "cache"
    real = _keep(packet, cache)
    entry = _entries(cache)[0]
    entry.unlink()
    os.mkfifo(entry)
    try:
        res = subprocess.run(
            [sys.executable, "-m", "prompt_runner", "list", str(packet)],
            capture_output=True,
            text=True,
            env=_env(cache),
            timeout=60,
        )
    finally:
        if entry.is_fifo():
            entry.unlink()
    assert res.returncode == 0, res.stderr
    assert res.stdout == real  # folded afresh


def test_a_same_size_edit_with_its_mtime_put_back_is_seen(packet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert "bravo" in _keep(packet, cache)
    prompt = packet / "prompts" / "02_step.prompt.md"
    before = prompt.stat()
    prompt.write_text(prompt.read_text().replace("bravo", "brave"))
    os.utime(prompt, ns=(before.st_atime_ns, before.st_mtime_ns))  # cp -p, touch -d
    after = prompt.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    out = _list(packet, cache=cache).stdout
    assert "brave" in out and "bravo" not in out and out != MARKER


def test_inputs_changed_too_recently_are_not_kept(packet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    prompt = packet / "prompts" / "02_step.prompt.md"
    _settle()
    prompt.write_text(prompt.read_text().replace("bravo", "brave"))
    assert "brave" in _list(packet, cache=cache).stdout
    assert _entries(cache) == []  # 02's file changed within the settle time: not kept


def _add_prompt(packet: Path) -> None:
    text = (packet / "prompts" / "03_step.prompt.md").read_text()
    new = text.replace("id: '03'", "id: '04'").replace("charl", "delta")
    (packet / "prompts" / "04_step.prompt.md").write_text(new)


def _remove_prompt(packet: Path) -> None:
    (packet / "prompts" / "03_step.prompt.md").unlink()


def _rename_packet(packet: Path) -> None:
    manifest = packet / "prompt_runner_packet.md"
    manifest.write_text(manifest.read_text().replace("name: demo", "name: other", 1))


def _forget_a_prompt(packet: Path) -> None:
    state = packet / ".prompt_runner"
    (state / "prompts" / "02.jsonl").unlink()
    progress = state / "progress.log"
    lines = progress.read_text().splitlines(keepends=True)
    progress.write_text("".join(line for line in lines if not line.startswith("02:")))


def _break_the_profile(packet: Path) -> None:
    home = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner" / "profiles"
    home.mkdir(parents=True, exist_ok=True)
    (home / "simulated-default.md").write_text("---\nnot_a_plan_key: 1\n---\n")


def _drop_the_repo(packet: Path) -> None:
    repo = packet.parent / "repo"
    repo.rename(packet.parent / "repo-moved")


@pytest.mark.parametrize(
    ("change", "expect"),
    [
        (_add_prompt, lambda out, code: code == 0 and "delta" in out),
        (_remove_prompt, lambda out, code: code == 0 and "charl" not in out),
        (_rename_packet, lambda out, code: code == 0 and out.startswith("other:")),
        (_forget_a_prompt, lambda out, code: code == 0 and "pending" in out),
        (_break_the_profile, lambda out, code: code == 2),
        (_drop_the_repo, lambda out, code: out != MARKER),
    ],
    ids=["prompt added", "prompt removed", "manifest", "state", "profile", "repo"],
)
def test_each_input_changes_the_output(
    packet: Path, tmp_path: Path, change: object, expect: object
) -> None:
    cache = tmp_path / "cache"
    _keep(packet, cache)
    change(packet)  # type: ignore[operator]
    proc = _list(packet, cache=cache)
    assert proc.stdout != MARKER
    assert expect(proc.stdout, proc.returncode), (proc.stdout, proc.stderr)  # type: ignore[operator]


def test_the_environment_and_the_current_directory_name_their_own_texts(
    packet: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    real = _keep(None, cache, cwd=packet)  # `list` inside the packet
    elsewhere = tmp_path / "state"
    elsewhere.mkdir()
    moved = _list(None, cache=cache, cwd=packet, PROMPT_RUNNER_STATE_DIR=str(elsewhere))
    assert moved.returncode == 0 and moved.stdout != MARKER
    assert "completed" in real and "completed" not in moved.stdout  # no state there
    other = tmp_path / "w2"
    subprocess.run(["cp", "-a", str(packet.parent), str(other)], check=True)
    _rename_packet(other / "demo")
    here = _list(None, cache=cache, cwd=other / "demo")
    assert here.stdout.startswith("other:")


def test_a_run_pid_is_never_served_nor_kept(packet: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    real = _keep(packet, cache)
    run_pid = packet / ".prompt_runner" / "run.pid"
    run_pid.write_text(f"{os.getpid()}\n")
    assert _list(packet, cache=cache).stdout != MARKER  # folded, not served
    for entry in _entries(cache):
        entry.unlink()
    _settle()
    assert _list(packet, cache=cache).returncode == 0
    assert _entries(cache) == []  # a run holds the packet: nothing kept
    run_pid.unlink()
    assert _list(packet, cache=cache).stdout == real
