"""Benchmark: the dashboard's live latency and its first page over a huge stream.

1. **Latency.** A real ``prompt-runner dashboard`` (a subprocess) serves a
   packet; this process follows the run page's server-sent event stream and
   appends events to ``control/events.jsonl`` one batch at a time, as the
   runner does. Each event's latency is from just before its append to its
   arrival at the SSE client. Baseline, timed in the same run: how long the
   file notification alone takes (``watchfiles`` with the dashboard's
   settings, in this process) -- the ratio is what the server adds on top.
   Target: p99 < 200 ms.
2. **First page of 1,000,000 events.** A fresh dashboard over a stream of a
   million events (~170 MB): the time to serve the run page, its data and the
   first page of events, and the server's peak RSS (``VmHWM``). Baseline:
   reading the stream whole (``state.jsonl.read_from(path, 0)``, what a page
   that loads everything would do), timed and measured in a child process.
   Targets: < 1 s, < 150 MB.

Run: ``.venv/bin/python bench/dashboard.py`` (about a minute). The last line is
``bench: dashboard p50_ms=N p99_ms=N first_page_s=N peak_rss_mb=N``.
"""

from __future__ import annotations

import json
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from prompt_runner.control.store import ControlStore

EVENTS = 300
GAP_S = 0.02
BIG = 1_000_000
RUN_ID = "20260101T000000Z-bench0"


def _packet(root: Path) -> Path:
    packet = root / "bench"
    packet.mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text("---\nname: bench\nrepos: {}\n---\n# bench\n")
    return packet


def _store(packet: Path) -> ControlStore:
    store = ControlStore(packet / ".prompt_runner", events_fsync_interval_s=1.0)
    store.init()
    store.prepare_event_stream(RUN_ID)
    store.write_snapshot({"run_id": RUN_ID, "packet": "bench", "status": "completed"})
    return store


def _serve(packet: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "dashboard", str(packet), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        found = re.match(r"Dashboard: (http://\S+?)/", line)
        if found:
            return proc, found.group(1)
    raise SystemExit("the dashboard did not start: " + proc.stdout.read())


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _event(i: int) -> dict[str, object]:
    return {"kind": "assistant_text", "at_ms": 0, "text": f"bench {i}", "prompt_id": "01"}


def latency(root: Path) -> tuple[list[float], list[float]]:
    """Per-event latencies in ms: ``(dashboard SSE arrival, file notification alone)``."""
    packet = _packet(root / "latency")
    store = _store(packet)
    store.append_events([_event(-1)])
    proc, base = _serve(packet)
    sent: dict[int, float] = {}
    arrived: dict[int, float] = {}
    ready = threading.Event()
    try:
        first = httpx.get(f"{base}/api/runs/bench/events").json()
        url = f"{base}/api/runs/bench/stream?events={first['end']}&log=0&stream={first['stream']}"

        def follow() -> None:
            with httpx.stream("GET", url, timeout=None) as response:
                ready.set()
                event = ""
                for line in response.iter_lines():
                    if line.startswith("event:"):
                        event = line[6:].strip()
                    elif line.startswith("data:") and event == "events":
                        now = time.perf_counter()
                        for item in json.loads(line[5:])["items"]:
                            arrived[int(item["line"].rsplit(" ", 1)[1])] = now
                        if len(arrived) >= EVENTS:
                            return

        reader = threading.Thread(target=follow, daemon=True)
        reader.start()
        ready.wait(10)
        time.sleep(0.5)  # the stream's first poll has run
        for i in range(EVENTS):
            sent[i] = time.perf_counter()
            store.append_events([_event(i)])
            time.sleep(GAP_S)
        reader.join(timeout=10)
    finally:
        _stop(proc)
        store.close()
    dashboard = [(arrived[i] - sent[i]) * 1000 for i in sent if i in arrived]
    if len(dashboard) < EVENTS:
        print(f"warning: {EVENTS - len(dashboard)} event(s) never arrived")
    return dashboard, _notification_baseline(packet)


def _notification_baseline(packet: Path) -> list[float]:
    from watchfiles import watch

    store = ControlStore(packet / ".prompt_runner")
    stop = threading.Event()
    seen: list[float] = []
    ready = threading.Event()

    def wait() -> None:
        for _ in watch(
            str(store.control_dir),
            debounce=50,
            step=5,
            stop_event=stop,
            yield_on_timeout=True,
            rust_timeout=100,
        ):
            ready.set()
            seen.append(time.perf_counter())

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    ready.wait(5)
    latencies = []
    for i in range(100):
        before = len(seen)
        start = time.perf_counter()
        store.append_events([_event(i)])
        deadline = start + 2
        while len(seen) == before and time.perf_counter() < deadline:
            time.sleep(0.0005)
        if len(seen) > before:
            latencies.append((seen[before] - start) * 1000)
        time.sleep(GAP_S)
    stop.set()
    thread.join(timeout=5)
    store.close()
    return latencies


def _write_big(store: ControlStore) -> int:
    template = (
        '{{"kind":"assistant_text","at_ms":{t},"text":"message {i}: the agent explains what it '
        'is doing next, in a line of ordinary length","prompt_id":"{p:02d}","run_id":"'
        + RUN_ID
        + '"}}\n'
    )
    with store.events_path.open("ab") as f:
        for base in range(0, BIG, 10_000):
            f.write(
                "".join(
                    template.format(t=1_760_000_000_000 + i, i=i, p=1 + i // 100_000)
                    for i in range(base, base + 10_000)
                ).encode()
            )
    return store.events_path.stat().st_size


def _peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


WHOLE = """
import sys, time
from pathlib import Path
from prompt_runner.state.jsonl import read_from
start = time.perf_counter()
records, _ = read_from(Path(sys.argv[1]), 0)
took = time.perf_counter() - start
rss = [l for l in Path("/proc/self/status").read_text().splitlines() if l.startswith("VmHWM:")]
print(len(records), took, int(rss[0].split()[1]) / 1024)
"""


def first_page(root: Path) -> tuple[float, float, float, float, int]:
    """``(first page s, server peak RSS MB, whole read s, whole read RSS MB, bytes)``."""
    packet = _packet(root / "big")
    store = _store(packet)
    size = _write_big(store)
    store.close()
    proc, base = _serve(packet)
    try:
        with httpx.Client(timeout=60) as client:
            start = time.perf_counter()
            assert client.get(f"{base}/runs/bench").status_code == 200
            run = client.get(f"{base}/api/runs/bench").json()
            page = client.get(f"{base}/api/runs/bench/events").json()
            took = time.perf_counter() - start
        assert run["row"]["key"] == "bench"
        assert len(page["items"]) == 200 and page["items"][-1]["line"].startswith(
            f"» message {BIG - 1}:"
        )
        rss = _peak_rss_mb(proc.pid)
    finally:
        _stop(proc)
    child = subprocess.run(
        [sys.executable, "-c", WHOLE, str(store.events_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    count, whole_s, whole_rss = child.stdout.split()
    assert int(count) == BIG
    return took, rss, float(whole_s), float(whole_rss), size


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        dashboard, notified = latency(root)
        p50, p99 = statistics.median(dashboard), _percentile(dashboard, 0.99)
        base50, base99 = statistics.median(notified), _percentile(notified, 0.99)
        print(f"event appended -> SSE client, {len(dashboard)} events:")
        print(f"  dashboard: p50 {p50:.1f} ms, p99 {p99:.1f} ms")
        print(f"  baseline, the file notification alone: p50 {base50:.1f} ms, p99 {base99:.1f} ms")
        print(f"  ratio (dashboard p50 / notification p50): {p50 / base50:.1f}x")
        took, rss, whole_s, whole_rss, size = first_page(root)
        print(f"first page of {BIG} events ({size / 1e6:.0f} MB):")
        print(f"  dashboard: {took * 1000:.0f} ms, server peak RSS {rss:.0f} MB")
        print(f"  baseline, reading the stream whole: {whole_s:.2f} s, peak RSS {whole_rss:.0f} MB")
        print(f"  ratio (whole read / first page): {whole_s / took:.0f}x the time,")
        print(f"  {whole_rss / rss:.1f}x the memory")
        print(
            f"targets: p99 < 200 ms ({_met(p99 < 200)}), first page < 1 s ({_met(took < 1)}), "
            f"peak RSS < 150 MB ({_met(rss < 150)})"
        )
        print(
            f"bench: dashboard p50_ms={p50:.1f} p99_ms={p99:.1f} "
            f"first_page_s={took:.3f} peak_rss_mb={rss:.0f}"
        )


if __name__ == "__main__":
    main()
