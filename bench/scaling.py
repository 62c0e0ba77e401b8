#!/usr/bin/env python3
"""Scaling of the packet commands: `plan`, `list`, `packet lint`, `status` on 100,
1,000 and 5,000 prompts.

Each size is a packet of simulated prompts on one git repo (bench/_packets.py)
with a recorded run of every prompt (a real `run` of the first, its records
replayed through the runtime store for the others: bench/_packets.py
``record_state``), so `status` and `list` read as much state as a full run
leaves. Every
command is started as a user starts it (the console script, bytecode
compiled), ``--rounds`` times with the commands interleaved; each figure is the
median. Printed per size: seconds and the cost per prompt; then the marginal
cost per prompt between sizes (flat = linear). Target: each command on 5,000
prompts in under 2 s.

Each command is timed twice per round: **cold**, with an empty cache directory
(``$PROMPT_RUNNER_CACHE_DIR``, a directory of this bench's: the parsed packet
and ``list``'s kept stdout; see ``docs/performance.md``) and no ``status
--json`` text kept in the state root
-- as the first command after an edit of every file runs -- and then **warm**,
the same command again, with what the cold one kept (as every later command
on an unchanged packet runs). The last line's ``<command>_<N>_s`` keys are the
warm figures; the ``<command>_<N>_cold_s`` keys beside them are the cold ones.

Usage: .venv/bin/python bench/scaling.py [--sizes 100,1000,5000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import ensure_bytecode
from _packets import git_init, make_packet, record_state

COMMANDS = ("plan", "list", "lint", "status")


def argv_for(script: str, command: str, packet: Path) -> list[str]:
    p = str(packet)
    return {
        "plan": [script, "plan", p, "--json"],
        "list": [script, "list", p],
        "lint": [script, "packet", "lint", p],
        "status": [script, "status", p, "--json"],
    }[command]


def forget(cache: Path, packet: Path) -> None:
    """Empty the cache directory (the parsed packet, ``list``'s kept stdout) and drop
    the state root's kept ``status --json`` text."""
    shutil.rmtree(cache, ignore_errors=True)
    (packet / ".prompt_runner" / "status-cache").unlink(missing_ok=True)


def once_s(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[1:]} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    script = str(Path(sys.executable).with_name("prompt-runner"))
    ensure_bytecode()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results: dict[str, dict[int, dict[str, float]]] = {"cold": {}, "warm": {}}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        os.environ["PROMPT_RUNNER_CACHE_DIR"] = str(cache)  # for the commands started
        for size in sizes:
            root = Path(tmp) / str(size)
            git_init(root / "repo")
            packet = make_packet(root, size, shared_contract=True)
            run_s = record_state(packet, size)
            times = {kind: {c: [] for c in COMMANDS} for kind in results}
            for _ in range(args.rounds):
                for command in COMMANDS:
                    argv = argv_for(script, command, packet)
                    forget(cache, packet)
                    times["cold"][command].append(once_s(argv))
                    times["warm"][command].append(once_s(argv))
            print(f"{size:5d} prompts (state recorded in {run_s:.1f} s):")
            for kind, by_command in times.items():
                got = results[kind][size] = {c: statistics.median(v) for c, v in by_command.items()}
                row = "  ".join(
                    f"{c} {got[c]:6.3f} s ({got[c] / size * 1000:.2f} ms/prompt)" for c in COMMANDS
                )
                print(f"  {kind}: {row}")
    for kind, by_size in results.items():
        for small, big in itertools.pairwise(sizes):
            row = "  ".join(
                f"{c} {(by_size[big][c] - by_size[small][c]) / (big - small) * 1000:.3f}"
                for c in COMMANDS
            )
            print(f"marginal ms/prompt {small}->{big} ({kind}): {row}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    n = sizes[-1]
    warm, cold = results["warm"][n], results["cold"][n]
    print(
        "bench: scaling "
        + " ".join(f"{c}_{n}_s={warm[c]:.2f}" for c in COMMANDS)
        + " "
        + " ".join(f"{c}_{n}_cold_s={cold[c]:.2f}" for c in COMMANDS)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
