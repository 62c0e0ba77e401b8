#!/usr/bin/env python3
"""The agent's hot path: median wall time of `agent-control progress` vs `python -c pass`.

An agent under agent control may record progress many times per iteration, so
the command must start about as fast as the interpreter. Both are timed in the
same run with the venv's interpreter directly (no shell, no pyenv shim), the
command through the installed console script, inside a real private
invocation directory with the six PROMPT_RUNNER_* variables set. Also prints
the import time of the handler module (`python -X importtime`) so a heavy
import that sneaks in shows up by name. Target ratio: <= 3.

Last line: ``bench: agent_control_cli ratio=N ratio_cpu=N ratio_handler=N``.

Usage: .venv/bin/python bench/agent_control_cli.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import ensure_bytecode

# What `prompt-runner agent-control ...` costs when cli/main.py dispatches it before
# building the full parser: the handler module's own entry point.
DIRECT = "import sys; from prompt_runner.cli.agentctl import main; sys.exit(main(sys.argv[1:]))"


def median_ms(argv: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    return measure(argv, runs, env)[0]


def measure(argv: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Median wall and median CPU (user + system of the child) time, in ms.

    CPU time is printed too because a loaded machine inflates wall time.
    """
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, check=False
        )
        walls.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
        if proc.returncode != 0:
            raise SystemExit(f"{argv} failed: {proc.stderr.decode(errors='replace')}")
    return statistics.median(walls), statistics.median(cpus)


def medians(samples: list[tuple[float, float]]) -> tuple[float, float]:
    """Median wall and median CPU of ``(wall_ms, cpu_ms)`` samples."""
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def heaviest_imports(py: str, env: dict[str, str], top: int = 5) -> list[tuple[int, str]]:
    argv = [py, "-X", "importtime", "-m", "prompt_runner", "agent-control", "progress"]
    argv += ["--cursor", "bench", "--summary", "importtime"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    rows = []
    for line in proc.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if match and not match.group(3).strip(" ") and len(match.group(3)) <= 1:
            rows.append((int(match.group(2)), match.group(4)))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    py = sys.executable
    script = str(Path(py).with_name("prompt-runner"))  # the installed console script
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "agent-control"
        directory.mkdir(mode=0o700)
        env = {
            **os.environ,
            "PROMPT_RUNNER_AGENT_CONTROL_FILE": str(directory / "01-1-bench.json"),
            "PROMPT_RUNNER_AGENT_PROGRESS_FILE": str(directory / "01-1-bench.progress.json"),
            "PROMPT_RUNNER_AGENT_CONTROL_TOKEN": "bench-token",
            "PROMPT_RUNNER_RUN_ID": "bench-run",
            "PROMPT_RUNNER_PROMPT_ID": "01",
            "PROMPT_RUNNER_PROMPT_ITERATION": "1",
        }
        progress = [script, "agent-control", "progress", "--cursor", "B.1", "--unit", "u"]
        progress += ["--summary", "benchmarking the agent's hot path"]
        ensure_bytecode()  # as pip install does; see bench/_bytecode.py
        median_ms(progress, 3, env)  # warm the file cache
        median_ms([py, "-c", "pass"], 3)
        direct = [py, "-c", DIRECT, *progress[2:]]
        # Interleaved, one call of each per round, so a burst of load on this
        # shared machine lands on the baseline and the command alike.
        rounds = [
            (measure([py, "-c", "pass"], 1), measure(progress, 1, env), measure(direct, 1, env))
            for _ in range(args.runs)
        ]
        baseline, baseline_cpu = medians([r[0] for r in rounds])
        command, command_cpu = medians([r[1] for r in rounds])
        handler, handler_cpu = medians([r[2] for r in rounds])
        imports = heaviest_imports(py, env)
    print(f"python -c pass                  median {baseline:7.1f} ms (cpu {baseline_cpu:.1f})")
    print(
        f"prompt-runner agent-control     median {command:7.1f} ms (cpu {command_cpu:.1f}; "
        f"{args.runs} runs)"
    )
    print(
        f"  agentctl.main alone           median {handler:7.1f} ms (cpu {handler_cpu:.1f}; "
        "no top-level parser)"
    )
    heavy = ", ".join(f"{name} {us}" for us, name in imports)
    print(f"heaviest top-level imports (cumulative us): {heavy}")
    print(f"ratio {command / baseline:.2f} (target <= 3)")
    print(f"ratio_cpu {command_cpu / baseline_cpu:.2f}")
    print(f"ratio_handler {handler / baseline:.2f} (cpu {handler_cpu / baseline_cpu:.2f})")
    print(
        f"bench: agent_control_cli ratio={command / baseline:.2f} "
        f"ratio_cpu={command_cpu / baseline_cpu:.2f} ratio_handler={handler / baseline:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
