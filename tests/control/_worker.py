"""Worker processes for the control-plane crash and stress tests.

Run as a script (``python _worker.py ROLE STATE_ROOT ...``) so every role is a
real, separately killable process that only imports the control package.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from prompt_runner.control.requests import build_request, validate_request
from prompt_runner.control.store import ControlStore
from prompt_runner.errors import StateError

RUN_ID = "R1"


def writer(root: Path, index: int, count: int, out: Path) -> None:
    """Submit ``count`` requests; record the names in submission order."""
    os.nice(5)  # on 2 cores, let the consumer keep up with eight writers
    store = ControlStore(root)
    names = []
    for i in range(count):
        request = build_request(
            "set_view", {"tool_output": "full"}, run_id=RUN_ID, author=f"w{index}"
        )
        request["id"] = f"w{index}-{i}"
        names.append(store.write_request(request))
    out.write_text(json.dumps(names), encoding="utf-8")


def consumer(root: Path, stop: Path, pad: int) -> None:
    """Decide every request once: log (commit point), receipt, snapshot; loop until ``stop``."""
    store = ControlStore(root)
    store.init()
    decided = 0
    while True:
        items = store.pending_requests()
        for item in items:
            if item.payload is None:
                ok, reason = False, item.error or "unparseable"
            else:
                ok, reason = validate_request(item.payload, current_run_id=RUN_ID)
            payload = item.payload or {}
            entry = {
                "request": item.name,
                "id": payload.get("id"),
                "command": payload.get("command"),
                "author": payload.get("author"),
                "outcome": "applied" if ok else "rejected",
                "reason": reason or None,
                "pid": os.getpid(),
            }
            store.append_log(entry)
            # Widen the crash window between the commit point (log) and the receipt,
            # so the SIGKILLs of the stress test land in it often.
            time.sleep(0.001)
            store.complete_request(item.name, entry)
            decided += 1
        if items:
            store.write_snapshot(
                {
                    "run_id": RUN_ID,
                    "status": "running",
                    "event_count": decided,
                    "pid": os.getpid(),
                    "pad": "x" * pad,
                }
            )
        if not items:
            if stop.exists():
                return
            time.sleep(0.001)


def reader(root: Path, stop: Path, out: Path) -> None:
    """Poll ``read_snapshot`` until ``stop``; count reads that fail to parse."""
    os.nice(10)  # a tight loop, but not at the consumer's expense
    store = ControlStore(root)
    reads = failures = 0
    seen = False
    examples: list[str] = []
    while not stop.exists():
        for _ in range(50):
            try:
                snapshot = store.read_snapshot()
            except StateError as exc:
                failures += 1
                examples.append(str(exc)[:200])
                continue
            reads += 1
            if snapshot is None:
                if seen:
                    failures += 1
                    examples.append("snapshot vanished")
            else:
                seen = True
                if snapshot.get("run_id") != RUN_ID:
                    failures += 1
                    examples.append(f"wrong body {snapshot!r}"[:200])
    out.write_text(
        json.dumps({"reads": reads, "failures": failures, "examples": examples[:5]}),
        encoding="utf-8",
    )


def big_requests(root: Path, size: int) -> None:
    """Write ever more requests of about ``size`` bytes until killed."""
    store = ControlStore(root)
    i = 0
    while True:
        store.write_request({"command": "steer", "params": {"text": "x" * size}, "id": i})
        i += 1


def log_appender(root: Path, size: int) -> None:
    """Append ever more log entries of about ``size`` bytes until killed."""
    store = ControlStore(root)
    i = 0
    while True:
        store.append_log({"n": i, "pad": "y" * size})
        i += 1


def main(argv: list[str]) -> None:
    role, root = argv[0], Path(argv[1])
    if role == "writer":
        writer(root, int(argv[2]), int(argv[3]), Path(argv[4]))
    elif role == "consumer":
        consumer(root, Path(argv[2]), int(argv[3]))
    elif role == "reader":
        reader(root, Path(argv[2]), Path(argv[3]))
    elif role == "big_requests":
        big_requests(root, int(argv[2]))
    elif role == "log_appender":
        log_appender(root, int(argv[2]))
    else:
        raise SystemExit(f"unknown role {role}")


if __name__ == "__main__":
    main(sys.argv[1:])
