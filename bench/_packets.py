"""Packets and repos the benches build: N simulated prompts on one git repo.

Each prompt ``NNNN`` writes ``fNNNN.txt``; its contract asks for the text
``file NNNN``. With ``attempts=K`` the simulated script writes the wrong text
K-1 times first, so the run records K attempts per prompt (K-1 failed
verifications, each repaired), as a long run with repairs leaves its state.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def git_init(path: Path) -> None:
    """A repo with one commit, author pinned."""
    path.mkdir(parents=True)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "bench"],
        ["config", "user.email", "bench@example.invalid"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / "README.md").write_text("# bench\n")
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=path, check=True)


def prompt_text(pid: str, attempts: int, *, shared_contract: bool = False) -> str:
    """The prompt file of ``pid`` whose simulated session succeeds at attempt ``attempts``
    (``shared_contract``: every prompt's contract is the same, ``README.md`` exists)."""
    steps = "".join(
        f'    - writes:\n        - path: f{pid}.txt\n          text: "wrong {n}"\n'
        for n in range(1, attempts)
    )
    steps += f'    - writes:\n        - path: f{pid}.txt\n          text: "file {pid}"\n'
    contract = (
        "verify:\n  files_exist: [README.md]\n"
        if shared_contract
        else f"verify:\n  files_exist: [f{pid}.txt]\n  contains:\n"
        f'    - {{path: f{pid}.txt, text: "file {pid}"}}\n'
    )
    return (
        f'---\nid: "{pid}"\nname: "p{pid}"\ntargets: [app]\ncommit: "bench: {pid}"\n'
        f"simulate:\n  attempts:\n{steps}{contract}---\n# write f{pid}.txt\n"
    )


def make_packet(
    root: Path, count: int, *, attempts: int = 1, shared_contract: bool = False
) -> Path:
    """``root/packet`` with ``count`` prompts on ``root/repo`` (see :func:`prompt_text`)."""
    packet = root / "packet"
    (packet / "prompts").mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text(
        "---\nname: bench\nprovider: simulated\nrepos:\n  app:\n    path: ../repo\n"
        "    default: true\n---\n# bench\n"
    )
    width = max(3, len(str(count)))
    for i in range(1, count + 1):
        pid = f"{i:0{width}d}"
        (packet / "prompts" / f"{pid}_p.prompt.md").write_text(
            prompt_text(pid, attempts, shared_contract=shared_contract)
        )
    return packet


def run_packet(packet: Path) -> float:
    """``prompt-runner run PACKET`` to the end; returns its seconds. Exits on failure."""
    script = str(Path(sys.executable).with_name("prompt-runner"))
    start = time.perf_counter()
    proc = subprocess.run(
        [script, "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    if proc.returncode != 0:
        raise SystemExit(f"the bench run failed: {proc.stderr}")
    return time.perf_counter() - start


def record_state(packet: Path, count: int) -> float:
    """Give every prompt of a ``make_packet(..., shared_contract=True)`` packet a
    recorded run, fast.

    A real ``run`` of the first prompt writes its records; they are replayed
    for every other prompt through the runtime store (the prompt's id
    substituted), so ``status`` and ``list`` read as much state as a full run
    would leave, without running thousands of sessions. Returns the seconds.
    """
    import json

    from prompt_runner.state.store import FileStore

    start = time.perf_counter()
    width = max(3, len(str(count)))
    first = f"{1:0{width}d}"
    script = str(Path(sys.executable).with_name("prompt-runner"))
    subprocess.run([script, "run", str(packet), first], check=True, stdout=subprocess.DEVNULL)
    root = packet / ".prompt_runner"
    store = FileStore(root, fsync_interval_ms=60_000)
    template = (root / "prompts" / f"{first}.jsonl").read_text()
    progress = (root / "progress.log").read_text().splitlines()[-1].split(":")
    for i in range(2, count + 1):
        pid = f"{i:0{width}d}"
        for line in template.replace(first, pid).splitlines():
            op = json.loads(line)
            if op["op"] == "update":
                store.update_prompt(pid, op["fields"])
            elif op["op"] == "attempt_start":
                store.start_attempt(pid, op["attempt"])
            elif op["op"] == "attempt_finish":
                store.finish_attempt(pid, op["key"], op["fields"])
        store.append_progress(pid, progress[1], progress[-1])
    store.close()
    return time.perf_counter() - start
