"""Benchmark: following the event stream from an offset vs re-reading it whole.

Appends 200k canonical events to a fresh control store, then times
``read_events(offset)`` for the last 100 events against ``read_events(0)``
and prints both and their ratio. Run: ``.venv/bin/python bench/control_follow.py``.

Last line: ``bench: control_follow offset_ms=N whole_ms=N ratio=N``.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from prompt_runner.control.store import ControlStore

TOTAL = 200_000
TAIL = 100
BATCH = 1_000


def _event(i: int) -> dict[str, object]:
    return {"kind": "assistant_text", "at_ms": 1_754_000_000_000 + i, "text": f"message {i}"}


def _best_of(fn: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = ControlStore(Path(tmp), events_fsync_interval_s=1.0)
        store.init()
        store.prepare_event_stream("bench")
        start = time.perf_counter()
        for base in range(0, TOTAL - TAIL, BATCH):
            store.append_events([_event(i) for i in range(base, min(base + BATCH, TOTAL - TAIL))])
        offset = store.events_path.stat().st_size
        store.append_events([_event(i) for i in range(TOTAL - TAIL, TOTAL)])
        store.sync_events()
        append_s = time.perf_counter() - start

        tail, _ = store.read_events(offset)
        assert len(tail) == TAIL and tail[-1]["text"] == f"message {TOTAL - 1}"
        whole, _ = store.read_events(0)
        assert len(whole) == TOTAL

        follow_s = _best_of(lambda: store.read_events(offset), 50)
        reread_s = _best_of(lambda: store.read_events(0), 5)
        size_mb = store.events_path.stat().st_size / 1e6
        print(f"append {TOTAL} events in batches of {BATCH}: {append_s:.2f} s ({size_mb:.1f} MB)")
        print(f"read_events(offset) last {TAIL}: {follow_s * 1e3:.3f} ms")
        print(f"read_events(0) all {TOTAL}:     {reread_s * 1e3:.1f} ms")
        print(f"ratio (re-read / follow): {reread_s / follow_s:.0f}x")
        print(
            f"bench: control_follow offset_ms={follow_s * 1e3:.3f} "
            f"whole_ms={reread_s * 1e3:.1f} ratio={reread_s / follow_s:.0f}"
        )


if __name__ == "__main__":
    main()
