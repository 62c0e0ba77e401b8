#!/usr/bin/env python3
"""Verifier scan speed: `source_absent` and `glob` over a large tree vs `grep -rE`.

Generates a repo of N files (default 50,000, ~4 KB each, ~200 MB) in a temp dir,
then times, in the same run:

* `source_absent` with a pattern that is absent (worst case: every byte read),
  against `grep -rE PATTERN TREE` (and `rg` if installed);
* `glob` counting `**/*.py` matches, against `find TREE -name '*.py' | wc -l`.

Prints each time and the ratios. Target: source_absent / grep <= 3.

Usage: .venv/bin/python bench/verifier_scan.py [--files 50000] [--pattern REGEX]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from prompt_runner.verifier import VerifyContext, parse_contract, verify

LINE = "def handler(request, response):  return process(request.payload, retries=3)\n"


def generate(root: Path, files: int) -> None:
    body = LINE * 52  # ~4 KB
    per_dir = 500
    for i in range(files):
        d = root / f"pkg{i // per_dir:03d}"
        if i % per_dir == 0:
            d.mkdir(parents=True, exist_ok=True)
        ext = ".py" if i % 2 == 0 else ".txt"
        (d / f"mod{i:06d}{ext}").write_text(body)


def timed(fn) -> tuple[float, object]:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--pattern", default=r"def\s+cancel\(_ref.*:ok")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        generate(repo, args.files)
        size = sum(p.stat().st_size for p in repo.rglob("*") if p.is_file())
        ctx = VerifyContext(repos={"app": repo, "packet": repo}, default_repo="app")
        absent = parse_contract(
            {"source_absent": [{"path": ".", "pattern": args.pattern}]}, file="bench"
        )
        globbed = parse_contract({"glob": [{"pattern": "**/*.py", "min": 1}]}, file="bench")
        subprocess.run(
            ["cat", *map(str, list(repo.glob("pkg000/*"))[:10])],
            stdout=subprocess.DEVNULL,
            check=False,
        )  # warm nothing special
        grep_s, _ = timed(
            lambda: subprocess.run(["grep", "-rEq", args.pattern, str(repo)], check=False)
        )
        ours_s, report = timed(lambda: verify(absent, ctx))
        assert report.passed, report.to_dict()  # type: ignore[attr-defined]
        find_s, _ = timed(
            lambda: subprocess.run(
                f"find {repo} -name '*.py' | wc -l", shell=True, capture_output=True, check=False
            )
        )
        glob_s, greport = timed(lambda: verify(globbed, ctx))
        assert greport.passed  # type: ignore[attr-defined]
        print(f"tree: {args.files} files, {size / 1e6:.0f} MB")
        print(f"grep -rE        {grep_s:7.2f} s")
        print(
            f"source_absent   {ours_s:7.2f} s   ratio_vs_grep {ours_s / grep_s:.2f} (target <= 3)"
        )
        if shutil.which("rg"):
            rg_s, _ = timed(
                lambda: subprocess.run(["rg", "-q", args.pattern, str(repo)], check=False)
            )
            print(f"rg              {rg_s:7.2f} s   ratio_vs_rg {ours_s / rg_s:.2f}")
        print(f"find | wc -l    {find_s:7.2f} s")
        print(f"glob **/*.py    {glob_s:7.2f} s   ratio_vs_find {glob_s / find_s:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
