#!/usr/bin/env python3
"""Cold start of the CLI's reporting commands against `python -c pass`.

Times, with the venv's interpreter directly (a pyenv shim adds ~70 ms to every
start) and the installed console script:

* `prompt-runner --version`;
* on a 300-prompt packet whose run recorded 3 attempts for every prompt (two
  failed verifications, each repaired; built once by a real simulated run):
  `status --json`, `control status --json`, `list`, `watch --once --json`;
  `list` runs with the cache directory its first run filled (a cache
  directory of this bench's: the parsed packet and list's kept stdout,
  cli/kept_output.py), and `list_cold` with the cache off
  (``PROMPT_RUNNER_CACHE_DIR=``: nothing kept is used, every file parsed, as
  after an edit of all).

Rounds are interleaved (each round starts the baseline, then every command
once), so a burst of load on a shared machine hits every figure of a round
alike; each figure is the median over the rounds. Target: every ratio <= 3.

Usage: .venv/bin/python bench/cli_startup.py [--runs 20] [--prompts 300]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import ensure_bytecode
from _packets import git_init, make_packet, run_packet


def once_ms(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - start) * 1000


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--prompts", type=int, default=300)
    args = parser.parse_args()
    py = sys.executable
    script = str(Path(py).with_name("prompt-runner"))  # the installed console script
    ensure_bytecode()  # as pip install does; see bench/_bytecode.py
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["PROMPT_RUNNER_CACHE_DIR"] = str(root / "cache")  # not the user's
        git_init(root / "repo")
        packet = make_packet(root, args.prompts, attempts=3)
        built_s = run_packet(packet)
        p = str(packet)
        commands = {
            "baseline": [py, "-c", "pass"],
            "version": [script, "--version"],
            "status": [script, "status", p, "--json"],
            "control_status": [script, "control", "status", p, "--json"],
            "list": [script, "list", p],
            "watch": [script, "watch", p, "--once", "--json"],
            "list_cold": ["env", "PROMPT_RUNNER_CACHE_DIR=", script, "list", p],
        }
        # the kept texts (status --json's, list's) are kept only from inputs at
        # least 2 s old (state/status_cache.SETTLED_NS): let the run's files settle
        time.sleep(2.2)
        for argv in commands.values():  # warm the file cache; each must work
            code = subprocess.run(argv, stdout=subprocess.DEVNULL, check=False).returncode
            if code != 0:
                print(f"warning: {' '.join(argv[1:])} exited {code}; its time means little")
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(once_ms(argv))
    med = {name: statistics.median(values) for name, values in times.items()}
    base = med["baseline"]
    print(f"packet: {args.prompts} prompts x 3 recorded attempts (run in {built_s:.1f} s)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for name, value in med.items():
        print(f"{name:15s} median {value:7.1f} ms  ratio {value / base:.2f}")
    ratios = {name: med[name] / base for name in commands if name != "baseline"}
    print(
        "bench: cli_startup "
        + " ".join(f"{name}_ratio={ratio:.2f}" for name, ratio in ratios.items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
