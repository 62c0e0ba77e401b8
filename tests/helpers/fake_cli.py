"""A fake agent CLI that replays a recorded transcript (stdout, stderr, exit code).

Install it on a temporary PATH under a real CLI's name (``claude``, ``codex``,
``gemini``...) with :func:`install_fake_cli`; the adapter under test then starts
it exactly as it would start the real binary. Each invocation appends one JSON
line to the record file: its argv, cwd, environment, stdin and pid, so tests
can assert the argv built from a request and that no secret reached argv;
``program`` is the script's own path as it was started (``$0``).

Behaviour per invocation comes from ``runs[i]`` of the JSON config named by
``FAKE_CLI_CONFIG`` (``i`` = invocation number, the last run repeats):

* ``case``: a directory holding ``stdout.jsonl``, ``stderr.txt``, ``exit_code``
  (a recorded transcript), or explicit ``stdout`` / ``stderr`` text and
  ``exit_code``;
* ``hang``: after the output, sleep forever (an idle CLI);
* ``ignore_sigterm``: ignore SIGTERM (only SIGKILL ends it);
* ``grandchild``: start a grandchild that also ignores SIGTERM and sleeps; its
  pid is recorded as ``grandchild_pid``;
* ``line_delay_ms``: pause between stdout lines;
* ``one_write``: write the whole stdout in one write (as a CLI that buffers its
  output does), instead of a flush per line;
* ``writes``: ``{relative path: text}`` files written in the cwd before any
  output (the agent's work, done through its tools);
* ``shell``: a ``sh -c`` command run in the cwd after the writes (the agent's
  shell tool: ``git switch``, ``git commit`` ...); it must succeed.

``{{epoch+N}}`` (or ``{{epoch-N}}``) anywhere in the replayed stdout, stderr or
a written file becomes the epoch second N seconds from when this invocation runs, so a
recorded usage-limit refusal can say "resets 3 s from now" (a ``resetsAt``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

CONFIG_ENV = "FAKE_CLI_CONFIG"


def install_fake_cli(bin_dir: Path, name: str) -> Path:
    """Write an executable ``bin_dir/name`` that runs this fake CLI; return its path."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / name
    script.write_text(
        '#!/bin/sh\nexport FAKE_CLI_PROGRAM="$0"\n'
        f'exec "{sys.executable}" "{Path(__file__).resolve()}" "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def write_config(path: Path, record: Path, runs: list[dict[str, Any]]) -> Path:
    """Write a fake-CLI config (``runs`` as described in the module docstring)."""
    path.write_text(json.dumps({"record": str(record), "runs": runs}), encoding="utf-8")
    return path


def read_records(record: Path) -> list[dict[str, Any]]:
    """Every invocation recorded so far, in order."""
    if not record.exists():
        return []
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line]


def _load_run(run: dict[str, Any]) -> tuple[str, str, int]:
    if "case" in run:
        case = Path(run["case"])
        stdout = (case / "stdout.jsonl").read_text(encoding="utf-8")
        stderr_file = case / "stderr.txt"
        stderr = stderr_file.read_text(encoding="utf-8") if stderr_file.exists() else ""
        code = int((case / "exit_code").read_text().strip())
        if code == 124:  # the capture was killed by `timeout`: replay as a hang
            run.setdefault("hang", True)
        return stdout, stderr, code
    return str(run.get("stdout", "")), str(run.get("stderr", "")), int(run.get("exit_code", 0))


_EPOCH = re.compile(r"\{\{epoch([+-]\d+)\}\}")


def _epochs(text: str) -> str:
    """``text`` with each ``{{epoch+N}}`` replaced by now + N (epoch seconds)."""
    now = int(time.time())
    return _EPOCH.sub(lambda found: str(now + int(found.group(1))), text)


def main() -> int:
    config = json.loads(Path(os.environ[CONFIG_ENV]).read_text(encoding="utf-8"))
    record = Path(config["record"])
    index = len(read_records(record))
    runs = config["runs"]
    run = dict(runs[min(index, len(runs) - 1)])
    if run.get("ignore_sigterm"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    entry: dict[str, Any] = {
        "argv": sys.argv[1:],
        "program": os.environ.pop("FAKE_CLI_PROGRAM", None),
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "stdin": stdin,
        "pid": os.getpid(),
        "pgid": os.getpgid(0),
    }
    if run.get("grandchild"):
        child = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import signal, time\n"
                "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                "time.sleep(300)",
            ]
        )
        entry["grandchild_pid"] = child.pid
    with record.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry) + "\n")
    for rel, text in dict(run.get("writes") or {}).items():
        target = Path(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_epochs(str(text)), encoding="utf-8")
    if run.get("shell"):
        subprocess.run(["sh", "-c", str(run["shell"])], check=True, stdout=sys.stderr)
    stdout, stderr, code = _load_run(run)
    stdout, stderr = _epochs(stdout), _epochs(stderr)
    delay = float(run.get("line_delay_ms", 0)) / 1000.0
    if run.get("one_write"):
        sys.stdout.write(stdout)
        sys.stdout.flush()
    for line in [] if run.get("one_write") else stdout.splitlines(keepends=True):
        sys.stdout.write(line)
        sys.stdout.flush()
        if delay:
            time.sleep(delay)
    sys.stderr.write(stderr)
    sys.stderr.flush()
    if run.get("hang"):
        while True:
            time.sleep(1)
    return code


if __name__ == "__main__":
    sys.exit(main())
