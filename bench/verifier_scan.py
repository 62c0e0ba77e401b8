#!/usr/bin/env python3
"""Verifier scan speed: `source_absent` and `glob` over a large tree vs `grep -rE` / `find`.

Generates a repo of N files (default 50,000, ~4 KB each, ~200 MB) in a temp dir,
then times, in interleaved rounds (each round: the baseline, then ours, for
every case), with a warm page cache:

* literal: `source_absent` with an absent pattern holding a literal
  (``def\\s+cancel\\(_ref.*:ok``; worst case: every byte read) vs `grep -rEq`;
* alternation: an absent ``cancel_ref|frobnicate_it`` (no literal common to
  every match) vs `grep -rEq`;
* casefold: an absent ``(?i)def\\s+cancel\\(_REF`` vs `grep -rEiq` with the
  pattern minus its ``(?i)``;
* glob: counting `**/*.py` matches vs `find TREE -name '*.py' | wc -l`.

Each ratio is the median of the rounds' ratios. Target: the three scans <= 3.
Also prints `rg` when installed (informative).

Last line: ``bench: verifier_scan literal_ratio=N alternation_ratio=N casefold_ratio=N
glob_ratio=N``.

Usage: .venv/bin/python bench/verifier_scan.py [--files 50000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from prompt_runner.verifier import VerifyContext, parse_contract, verify

LINE = "def handler(request, response):  return process(request.payload, retries=3)\n"
CASES = {
    # name: (our pattern, grep flags, grep's pattern)
    "literal": (r"def\s+cancel\(_ref.*:ok", "-rEq", r"def\s+cancel\(_ref.*:ok"),
    "alternation": ("cancel_ref|frobnicate_it", "-rEq", "cancel_ref|frobnicate_it"),
    "casefold": (r"(?i)def\s+cancel\(_REF", "-rEiq", r"def\s+cancel\(_REF"),
}


def generate(root: Path, files: int) -> None:
    body = LINE * 52  # ~4 KB
    per_dir = 500
    for i in range(files):
        d = root / f"pkg{i // per_dir:03d}"
        if i % per_dir == 0:
            d.mkdir(parents=True, exist_ok=True)
        ext = ".py" if i % 2 == 0 else ".txt"
        (d / f"mod{i:06d}{ext}").write_text(body)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ratios: dict[str, list[float]] = {name: [] for name in (*CASES, "glob")}
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        generate(repo, args.files)
        size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
        print(f"tree: {args.files} files, {size / 1e6:.0f} MB")
        ctx = VerifyContext(repos={"app": repo, "packet": repo}, default_repo="app")
        contracts = {
            name: parse_contract(
                {"source_absent": [{"path": ".", "pattern": pattern}]}, file="bench"
            )
            for name, (pattern, _, _) in CASES.items()
        }
        globbed = parse_contract({"glob": [{"pattern": "**/*.py", "min": 1}]}, file="bench")

        def ours(name: str) -> None:
            report = verify(contracts[name], ctx)
            assert report.passed, report.to_dict()

        def glob() -> None:
            assert verify(globbed, ctx).passed

        subprocess.run(["grep", "-rEq", "warm-the-cache", str(repo)], check=False)
        for n in range(args.rounds):
            row = []
            for name, (_, flags, grep_pattern) in CASES.items():
                grep_s = timed(
                    lambda f=flags, g=grep_pattern: subprocess.run(
                        ["grep", f, g, str(repo)], check=False
                    )
                )
                ours_s = timed(lambda name=name: ours(name))
                ratios[name].append(ours_s / grep_s)
                row.append(f"{name} {ours_s:.2f}/{grep_s:.2f} s")
            find_s = timed(
                lambda: subprocess.run(
                    f"find {repo} -name '*.py' | wc -l",
                    shell=True,
                    capture_output=True,
                    check=False,
                )
            )
            glob_s = timed(glob)
            ratios["glob"].append(glob_s / find_s)
            row.append(f"glob {glob_s:.3f}/{find_s:.3f} s")
            print(f"round {n + 1} (ours/baseline): " + "  ".join(row))
        if shutil.which("rg"):
            rg = ["rg", "-q", CASES["alternation"][0], str(repo)]
            rg_s = timed(lambda: subprocess.run(rg, check=False))
            print(f"rg alternation {rg_s:.2f} s")
    med = {name: statistics.median(values) for name, values in ratios.items()}
    for name, values in ratios.items():
        print(f"{name:12s} ratios {' '.join(f'{v:.2f}' for v in values)}  median {med[name]:.2f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"bench: verifier_scan literal_ratio={med['literal']:.2f} "
        f"alternation_ratio={med['alternation']:.2f} casefold_ratio={med['casefold']:.2f} "
        f"glob_ratio={med['glob']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
