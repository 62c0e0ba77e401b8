"""Benchmark: bytes and seconds spent on state writes over a long run.

Writes 200 prompts x 3 attempts, each with a realistic verifier report, twice:

* ``FileStore`` -- the real store (per-prompt operation logs + a small
  ``state.json`` of summaries; see ``prompt_runner.state.store``);
* ``naive`` -- one ``state.json`` holding every attempt of every prompt,
  rewritten atomically after every change (what the store replaced).

Bytes are counted by wrapping ``os.write`` for the duration of each approach, so
they are exactly the bytes the process handed to the kernel. Prints one line per
approach and the naive/store ratios, then the last line ``bench: state_writes
store_bytes=N naive_bytes=N bytes_ratio=N time_ratio=N``. Usage::

    python bench/state_writes.py [--prompts 200] [--attempts 3]

The default size takes minutes, almost all of it in the naive half (it writes
gigabytes); ``--prompts 50`` gives the picture in seconds. A 2-core VM measured
200 x 3: store 17.3 MB / 8.9 s, naive 4.26 GB / 248 s (246x bytes, 28x time).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from prompt_runner.state.atomic import write_json_atomic
from prompt_runner.state.store import FileStore


def verifier_report(prompt: int, attempt: int) -> dict[str, Any]:
    """A verifier report of realistic size (~3 KB): 12 clause results with evidence."""
    items = [
        {
            "clause": clause,
            "target": f"src/module_{prompt}_{n}.py",
            "ok": n % 4 != 0 or attempt == 3,
            "detail": f"{clause} check {n} for prompt {prompt}: " + "evidence " * 12,
            "duration_ms": 10 + n,
        }
        for n, clause in enumerate(["files_exist", "contains", "commands", "doc"] * 3)
    ]
    return {"pass": attempt == 3, "fault": None, "items": items, "summary": f"{attempt}/3"}


def run_ops(
    prompts: int,
    attempts: int,
    start: Callable[[str, dict[str, Any]], int],
    finish: Callable[[str, int, dict[str, Any]], None],
    update: Callable[[str, dict[str, Any]], None],
) -> None:
    """Drive the same sequence of store calls a runner makes per attempt."""
    for p in range(prompts):
        prompt_id = f"{p:03d}"
        for a in range(1, attempts + 1):
            update(prompt_id, {"status": "running", "stage": "session"})
            mode = "run" if a == 1 else "retry"
            key = start(prompt_id, {"attempt": a, "mode": mode, "started_at": "t"})
            report = verifier_report(p, a)
            status = "completed" if report["pass"] else "verification_failed"
            finish(prompt_id, key, {"status": status, "completed_at": "t", "verifier": report})
            update(prompt_id, {"status": status, "last_verifier": report, "session_ran": True})


@contextmanager
def count_writes() -> Iterator[list[int]]:
    """Count bytes passed to ``os.write`` inside the block (``total[0]``)."""
    total = [0]
    real_write = os.write

    def counting(fd: int, data: Any) -> int:
        written = real_write(fd, data)
        total[0] += written
        return written

    os.write = counting
    try:
        yield total
    finally:
        os.write = real_write


def bench_store(root: Path, prompts: int, attempts: int) -> tuple[int, float]:
    """Bytes and seconds for the real FileStore."""
    store = FileStore(root)
    with count_writes() as total:
        began = time.perf_counter()
        run_ops(prompts, attempts, store.start_attempt, store.finish_attempt, store.update_prompt)
        store.close()
        seconds = time.perf_counter() - began
    return total[0], seconds


def bench_naive(root: Path, prompts: int, attempts: int) -> tuple[int, float]:
    """Bytes and seconds for rewriting one full state.json after every change."""
    doc: dict[str, Any] = {"schema_version": 1, "version": 1, "prompts": {}}
    path = root / "state.json"

    def record(prompt_id: str) -> dict[str, Any]:
        prompt: dict[str, Any] = doc["prompts"].setdefault(prompt_id, {"attempts": []})
        return prompt

    def start(prompt_id: str, attempt: dict[str, Any]) -> int:
        record(prompt_id)["attempts"].append({"status": "running", **attempt})
        write_json_atomic(path, doc)
        return len(record(prompt_id)["attempts"])

    def finish(prompt_id: str, key: int, fields: dict[str, Any]) -> None:
        record(prompt_id)["attempts"][key - 1].update(fields)
        write_json_atomic(path, doc)

    def update(prompt_id: str, fields: dict[str, Any]) -> None:
        record(prompt_id).update(fields)
        write_json_atomic(path, doc)

    with count_writes() as total:
        began = time.perf_counter()
        run_ops(prompts, attempts, start, finish, update)
        seconds = time.perf_counter() - began
    return total[0], seconds


def main() -> None:
    """Run both approaches in one process and print bytes, seconds and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument("--attempts", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store_bytes, store_s = bench_store(Path(tmp) / "store", args.prompts, args.attempts)
        naive_bytes, naive_s = bench_naive(Path(tmp) / "naive", args.prompts, args.attempts)
    print(f"{args.prompts} prompts x {args.attempts} attempts")
    print(f"store: {store_bytes:>14,} bytes  {store_s:8.2f} s")
    print(f"naive: {naive_bytes:>14,} bytes  {naive_s:8.2f} s")
    print(
        f"ratio naive/store: bytes {naive_bytes / store_bytes:.1f}x, time {naive_s / store_s:.1f}x"
    )
    print(
        f"bench: state_writes store_bytes={store_bytes} naive_bytes={naive_bytes} "
        f"bytes_ratio={naive_bytes / store_bytes:.1f} time_ratio={naive_s / store_s:.1f}"
    )


if __name__ == "__main__":
    main()
