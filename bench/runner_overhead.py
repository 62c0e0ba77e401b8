#!/usr/bin/env python3
"""Runner overhead on a long simulated run, against a shell loop doing the same git work.

Builds an N-prompt packet (default 200) where each prompt's simulated session
writes one file and the git committer commits it; times `prompt-runner run`
end to end and a baseline shell loop that writes the same files and runs
`git add` + `git commit` for each, in the same run. Prints seconds per prompt,
the ratio (target <= 1.5), the runner's peak RSS as `peak_rss_mb N` (target <
150), and the bytes written under .prompt_runner/ per prompt at the start and
end of the run (flat = state writes do not grow with the run).

With ``--against SRC`` (the ``src`` directory of another tree, e.g. one
exported with ``git archive REV | tar -x -C /tmp/old``) each round also runs
that tree's runner on the same packet shape, alternating which runner goes
first, and prints its ratio too (``against_ratio=``): old and new compared in
the same rounds, under the same load.

Usage: .venv/bin/python bench/runner_overhead.py [--prompts 200] [--rounds 5] [--against SRC]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _bytecode import ensure_bytecode


def git_init(path: Path) -> None:
    path.mkdir(parents=True)
    env = {"-c": ""}
    del env
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "bench"],
        ["config", "user.email", "bench@example.invalid"],
    ):
        subprocess.run(["git", *args], cwd=path, check=True)
    (path / "README.md").write_text("# bench\n")
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=path, check=True)


def make_packet(root: Path, count: int) -> Path:
    packet = root / "packet"
    (packet / "prompts").mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text(
        "---\nname: bench\nprovider: simulated\nrepos:\n  app:\n    path: ../repo\n"
        "    default: true\n---\n# bench\n"
    )
    for i in range(1, count + 1):
        pid = f"{i:03d}"
        (packet / "prompts" / f"{pid}_p.prompt.md").write_text(
            f'---\nid: "{pid}"\nname: "p{pid}"\ntargets: [app]\ncommit: "bench: {pid}"\n'
            f"simulate:\n  attempts:\n    - writes:\n        - path: f{pid}.txt\n"
            f'          text: "file {pid}"\n'
            f"verify:\n  files_exist: [f{pid}.txt]\n  contains:\n"
            f'    - {{path: f{pid}.txt, text: "file {pid}"}}\n---\n# write f{pid}.txt\n'
        )
    return packet


def baseline(root: Path, count: int) -> float:
    repo = root / "baseline"
    git_init(repo)
    script = (
        f'for i in $(seq -w 1 {count}); do echo "file $i" > f$i.txt; git add -A; '
        'git commit -q -m "bench: $i"; done'
    )
    start = time.perf_counter()
    subprocess.run(["bash", "-c", script], cwd=repo, check=True)
    return time.perf_counter() - start


def run_runner(root: Path, count: int, script: str, src: str | None) -> tuple[float, Path]:
    """The runner (this tree's, or the one under ``src``) on a fresh repo and packet.

    Returns ``(seconds, packet dir)``.
    """
    root.mkdir(parents=True)
    git_init(root / "repo")
    packet = make_packet(root, count)
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = src
    start = time.perf_counter()
    proc = subprocess.run(
        [script, "run", str(packet)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    run_s = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return run_s, packet


def run_once(
    root: Path, count: int, script: str, against: str | None, flip: bool
) -> tuple[float, float, float | None, Path]:
    """One round: the shell loop, then the runner (and the ``against`` tree's,
    first when ``flip``), each on fresh repos.

    Returns ``(baseline seconds, runner seconds, against seconds or None, packet dir)``.
    """
    root.mkdir(parents=True)
    base_s = baseline(root, count)
    other_s = None
    if against is not None and flip:
        other_s, _ = run_runner(root / "against", count, script, against)
    run_s, packet = run_runner(root / "this", count, script, None)
    if against is not None and not flip:
        other_s, _ = run_runner(root / "against", count, script, against)
    return base_s, run_s, other_s, packet


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompts", type=int, default=200)
    parser.add_argument(
        "--rounds", type=int, default=5, help="baseline/runner pairs; the median pair is reported"
    )
    parser.add_argument(
        "--against", default=None, help="another tree's src directory, timed in the same rounds"
    )
    args = parser.parse_args()
    count = args.prompts
    script = str(Path(sys.executable).with_name("prompt-runner"))
    ensure_bytecode()
    if args.against is not None and not compileall.compile_dir(args.against, quiet=1):
        raise SystemExit(f"could not compile the bytecode of {args.against}")
    rounds = []
    others = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            root = Path(tmp) / f"round-{n}"
            base_s, run_s, other_s, packet = run_once(root, count, script, args.against, n % 2 == 1)
            rounds.append((run_s / base_s, base_s, run_s))
            if other_s is not None:
                others.append((other_s / base_s, base_s, other_s))
            state = packet / ".prompt_runner"
            total = sum(p.stat().st_size for p in state.rglob("*") if p.is_file())
            state_json = (state / "state.json").stat().st_size
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # Each round times the loop and the runner back to back, so a burst of load on
    # a shared machine hits one round; the median round is the figure.
    ratio, base_s, run_s = statistics.median_low(rounds)
    print(f"prompts {count}  rounds {args.rounds}")
    print("round_ratios " + " ".join(f"{r[0]:.2f}" for r in rounds))
    print(f"baseline_s {base_s:.2f}  ({base_s / count * 1000:.1f} ms per prompt)")
    print(f"runner_s {run_s:.2f}  ({run_s / count * 1000:.1f} ms per prompt)")
    print(f"seconds_per_prompt {run_s / count:.4f}")
    print(f"ratio {ratio:.2f} (target <= 1.5)")
    extra = ""
    if others:
        other_ratio, _base, other_s = statistics.median_low(others)
        print(f"against {args.against}")
        print("against_round_ratios " + " ".join(f"{r[0]:.2f}" for r in others))
        # The two runners ran back to back in each round: their quotient is the
        # comparison least touched by the load of the moment.
        paired = [r[2] / o[2] for r, o in zip(rounds, others, strict=True)]
        print("runner_over_against_by_round " + " ".join(f"{q:.2f}" for q in paired))
        print(f"runner_over_against_median {statistics.median(paired):.2f}")
        print(f"against_runner_s {other_s:.2f}  ({other_s / count * 1000:.1f} ms per prompt)")
        print(f"against_ratio {other_ratio:.2f}")
        extra = (
            f" against_ratio={other_ratio:.2f} runner_over_against={statistics.median(paired):.2f}"
        )
    print(f"peak_rss_mb {peak_kb / 1024:.1f} (target < 150)")
    print(f"state_dir_bytes {total}  state_json_bytes {state_json}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"bench: runner_overhead ratio={ratio:.2f} peak_rss_mb={peak_kb / 1024:.1f}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
