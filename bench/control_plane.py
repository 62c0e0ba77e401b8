"""Benchmark of the control plane's runner half and client (issue 5).

(a) 100,000 provider events, each a JSON line, through the plane with the
    JSONL sink on (``control/events.jsonl`` + snapshot): events/s, and the
    ratio to a baseline that only parses the same lines. Target ratio <= 3.
(b) request-to-outcome latency of 200 ``set_view`` requests written by another
    process, while the plane is busy (a provider thread emitting events as
    fast as it can, the runner thread ticking) and while the provider is
    silent (only the runner's 100 ms tick). Prints p50/p99; target p99 < 250 ms.
    The plane runs in this process exactly as the runner drives it (events
    on a provider thread, ``tick`` every 100 ms on another).
(c) ``prompt-runner control events --json`` over a 1 GB ``events.jsonl``
    (``--gb`` to change): prints ``peak_rss_mb N``; target < 100 (streamed).

Run: ``.venv/bin/python bench/control_plane.py [--skip-c] [--gb 1.0]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from prompt_runner.control.plane import ControlPlane, PromptInfo
from prompt_runner.control.requests import build_request
from prompt_runner.control.store import ControlStore
from prompt_runner.providers.events import Event
from prompt_runner.render.text import Console
from prompt_runner.runner.position import Position

EVENTS = 100_000
BATCH = 256  # about one 64 KB pipe read of stream-json lines
REQUESTS = 200


class _Handle:
    session_id = "bench"

    def interrupt(self) -> None:
        return None


def _lines(n: int) -> list[bytes]:
    out = []
    for i in range(n):
        if i % 10 == 0:
            doc = {"type": "tool_use", "tool": "Read", "input": {"file_path": f"src/m{i}.py"}}
        elif i % 10 == 1:
            doc = {"type": "usage", "input_tokens": 120, "output_tokens": 40}
        else:
            doc = {"type": "assistant_text", "text": f"working on step {i} of the plan"}
        out.append(json.dumps(doc).encode())
    return out


def _plane(root: Path) -> ControlPlane:
    view = {"log_mode": "compact", "tool_output": "summary", "thinking": "hide", "diff": "none"}
    plane = ControlPlane(
        root,
        run_id="bench",
        packet="bench",
        console=Console(None, view),
        prompts={"01": PromptInfo("Step 01", "simulated", "bench", 3)},
        position=Position("01", 1, "run"),
    )
    plane.start()
    return plane


def bench_events() -> None:
    lines = _lines(EVENTS)
    start = time.perf_counter()
    for line in lines:
        json.loads(line)
    baseline = time.perf_counter() - start
    start = time.perf_counter()
    for line in lines:
        doc = json.loads(line)
        Event(doc.pop("type"), doc)
    parser = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        plane = _plane(Path(tmp))
        start = time.perf_counter()
        for line in lines:
            doc = json.loads(line)
            kind = doc.pop("type")
            plane.on_event("01", Event(kind, doc))
        plane.finish("completed")
        elapsed = time.perf_counter() - start
        with open(plane.store.events_path, "rb") as f:
            written = sum(1 for _ in f)
    assert written == EVENTS + 1, written  # and the run_finished record
    # What the runner does for a CLI provider: parse a pipe read's lines, encode
    # each event once (shared with the transcript and JSONL log), hand the batch over.
    from prompt_runner.render.sinks import encode_body

    with tempfile.TemporaryDirectory() as tmp:
        plane = _plane(Path(tmp))
        start = time.perf_counter()
        for i in range(0, len(lines), BATCH):
            events = []
            for line in lines[i : i + BATCH]:
                doc = json.loads(line)
                events.append(Event(doc.pop("type"), doc))
            plane.on_events("01", events, [encode_body(e) for e in events])
        plane.finish("completed")
        batched = time.perf_counter() - start
    print(f"(a) events through the plane: {EVENTS / elapsed:,.0f} events/s ({elapsed:.2f} s)")
    print(f"    parse-only baseline: {EVENTS / baseline:,.0f} events/s ({baseline:.2f} s)")
    print(f"    parse + canonical Event baseline: {EVENTS / parser:,.0f} events/s ({parser:.2f} s)")
    print(f"    ratio {elapsed / baseline:.2f} vs parse-only (target <= 3)")
    print(f"    ratio {elapsed / parser:.2f} vs parse + Event (what a provider parser does)")
    print(
        f"    batched as the runner hands a pipe read over ({BATCH} events, shared encoding): "
        f"{EVENTS / batched:,.0f} events/s, ratio {batched / baseline:.2f} vs parse-only"
    )


def _writer(root: Path, count: int, out: Path) -> None:
    store = ControlStore(root)
    latencies = []
    for i in range(count):
        sent = time.perf_counter()
        name = store.write_request(
            build_request("set_view", {"diff": ("none", "stat")[i % 2]}, run_id=None, author="b")
        )
        receipt = store.request_outcome_path(name)
        while not receipt.exists():
            time.sleep(0.001)
        latencies.append(time.perf_counter() - sent)
    out.write_text(json.dumps(latencies))


def _latency(busy: bool) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        plane = _plane(root)
        stop = threading.Event()
        handle = _Handle()

        def provider() -> None:
            i = 0
            while not stop.is_set():
                plane.on_event("01", Event("assistant_text", {"text": f"token {i}"}))
                i += 1
                if i % 200 == 0:
                    time.sleep(0)  # a real stream arrives in chunks

        def runner() -> None:
            while not stop.wait(0.1):
                plane.tick("01", handle)  # type: ignore[arg-type]

        threads = [threading.Thread(target=runner)]
        if busy:
            threads.append(threading.Thread(target=provider))
        for t in threads:
            t.start()
        out = root / "latencies.json"
        try:
            subprocess.run(
                [sys.executable, __file__, "--writer", str(root), str(REQUESTS), str(out)],
                check=True,
            )
        finally:
            stop.set()
            for t in threads:
                t.join()
        plane.finish("completed")
        values: list[float] = json.loads(out.read_text())
        return values


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000


def bench_latency() -> None:
    for label, busy in (("busy", True), ("silent", False)):
        values = _latency(busy)
        print(
            f"(b) request-to-outcome, {label} run: p50 {_pct(values, 50):.1f} ms, "
            f"p99 {_pct(values, 99):.1f} ms over {len(values)} requests (target p99 < 250)"
        )


def bench_rss(gb: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        packet = Path(tmp) / "p"
        (packet / ".prompt_runner" / "control").mkdir(parents=True)
        (packet / "prompt_runner_packet.md").write_text("---\nname: p\n---\n")
        events = packet / ".prompt_runner" / "control" / "events.jsonl"
        line = (
            json.dumps({"kind": "assistant_text", "at_ms": 1, "prompt_id": "01", "text": "y" * 900})
            + "\n"
        ).encode()
        block = line * 1024
        target = int(gb * (1 << 30))
        with open(events, "wb") as f:
            size = 0
            while size < target:
                f.write(block)
                size += len(block)
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "prompt_runner", "control", "events", str(packet), "--json"],
            stdout=subprocess.DEVNULL,
            check=True,
        )
        elapsed = time.perf_counter() - start
        assert proc.returncode == 0
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"(c) control events --json over {size / (1 << 30):.2f} GB in {elapsed:.1f} s")
        print(f"peak_rss_mb {peak_kb / 1024:.0f} (target < 100)")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        _writer(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--gb", type=float, default=1.0)
    parser.add_argument("--skip-c", action="store_true")
    args = parser.parse_args()
    bench_events()
    bench_latency()
    if not args.skip_c:
        bench_rss(args.gb)
    os.sync()


if __name__ == "__main__":
    main()
