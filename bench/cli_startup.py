#!/usr/bin/env python3
"""Cold start of the CLI: median wall time of `prompt-runner --version` vs `python -c pass`.

Both are timed in the same run with the venv's interpreter directly (a pyenv shim
adds ~70 ms to every start). Target ratio: <= 4. Also prints `status --json` on a
small packet, which must stay on the light import path.

Usage: .venv/bin/python bench/cli_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import ensure_bytecode


def median_ms(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    py = sys.executable
    script = str(Path(py).with_name("prompt-runner"))  # the installed console script
    ensure_bytecode()  # as pip install does; see bench/_bytecode.py
    median_ms([script, "--version"], 3)  # warm the file cache
    baseline = median_ms([py, "-c", "pass"], args.runs)
    version = median_ms([script, "--version"], args.runs)
    with tempfile.TemporaryDirectory() as tmp:
        packet = Path(tmp) / "p"
        (packet / "prompts").mkdir(parents=True)
        (packet / "prompt_runner_packet.md").write_text("---\nname: p\n---\n")
        status = median_ms([script, "status", str(packet), "--json"], args.runs)
    print(f"python -c pass           median {baseline:7.1f} ms")
    print(f"prompt-runner --version  median {version:7.1f} ms")
    print(f"prompt-runner status     median {status:7.1f} ms")
    print(f"ratio_version {version / baseline:.2f} (target <= 4)")
    print(f"ratio_status {status / baseline:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
