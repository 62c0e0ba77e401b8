"""One real-CLI end-to-end case, run INSIDE a private network namespace.

``python -m tests.e2e_real_cli.netns_case CASE.json`` -- started by the tests
as ``unshare -n sh -c 'ip link set lo up && exec python -m ...'``, so the mock
server, ``prompt-runner run`` and the real agent CLI share a network stack
holding nothing but loopback. It refuses to run when any interface other than
``lo`` exists, or when ``lo`` is down.

The case file (JSON) names ``provider`` (``claude`` | ``codex``), ``bin_dir``
(where the real binaries are), ``tmp`` (a scratch directory), ``steps`` (the
mock script, see :mod:`tests.helpers.mock_anthropic` / ``mock_openai``;
``{repo}`` in any string becomes the target repo path) and ``prompts``
(prompt id -> front-matter overrides), optionally ``env`` (more variables
for the runner and the agent). The helper starts our mock on
127.0.0.1, writes a two-prompt packet targeting a fresh git repo, runs
``python -m prompt_runner run PACKET`` with the environment that points the
CLI at the mock and turns off its telemetry, updates and error reporting,
then prints one JSON line: the runner's exit code and output, each prompt's
attempts (from ``prompt_runner.api.status``), the repo's commits and files,
and the requests the mock saw.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from prompt_runner import api
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.mock_anthropic import MockAnthropic
from tests.helpers.mock_common import MockServer
from tests.helpers.mock_openai import MockOpenAI, codex_config
from tests.helpers.packets import FAST, make_packet

RUN_TIMEOUT_S = 300


def loopback_only() -> list[str]:
    """The namespace's interfaces; raises unless only an up ``lo`` exists."""
    names = [name for _, name in socket.if_nameindex()]
    if names != ["lo"]:
        raise SystemExit(f"refusing to run: interfaces {names} (expected only lo)")
    flags = Path("/sys/class/net/lo/flags")
    if flags.exists() and not int(flags.read_text().strip(), 16) & 1:
        raise SystemExit("refusing to run: lo is down")
    return names


def fill(value: Any, repo: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{repo}", str(repo))
    if isinstance(value, list):
        return [fill(v, repo) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, repo) for k, v in value.items()}
    return value


def agent_env(provider: str, mock: MockServer, home: Path, bin_dir: str) -> dict[str, str]:
    """The runner's environment: the CLI talks to ``mock`` only, sends no telemetry."""
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(home)
    env.update({"NO_COLOR": "1", "DO_NOT_TRACK": "1"})
    if provider == "claude":
        env.update(
            {
                "ANTHROPIC_BASE_URL": mock.url,
                "ANTHROPIC_API_KEY": "sk-test-not-a-real-key",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_BUG_COMMAND": "1",
                "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            }
        )
    else:
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(codex_config(mock.url), encoding="utf-8")
        env.update({"CODEX_HOME": str(codex_home), "MOCK_API_KEY": "sk-test-not-a-real-key"})
    return env


def git_log(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout.splitlines()


def main(case_path: str) -> int:
    case = json.loads(Path(case_path).read_text(encoding="utf-8"))
    interfaces = loopback_only()
    provider = case["provider"]
    tmp = Path(case["tmp"])
    repo = make_git_repo(tmp / "repo")
    home = tmp / "home"
    home.mkdir()
    steps = fill(case["steps"], repo)
    server_cls = MockAnthropic if provider == "claude" else MockOpenAI
    with server_cls(steps, log_path=tmp / "requests.jsonl") as mock:
        manifest: dict[str, Any] = {
            "profile": None,
            "provider": provider,
            "model": "gpt-5.5" if provider == "codex" else None,
            "permission_mode": "bypass",
            "timeout": 120_000,
            "recovery": FAST,
        }
        if provider == "claude":
            manifest["claude_opts"] = {"max_retries": 0}
        packet = make_packet(tmp, fill(case["prompts"], repo), manifest=manifest)
        started = time.monotonic()
        proc = subprocess.run(
            [sys.executable, "-m", "prompt_runner", "run", str(packet)],
            env={**agent_env(provider, mock, home, case["bin_dir"]), **case.get("env", {})},
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        elapsed = time.monotonic() - started
        records = list(mock.records)
    prompts = api.status(packet)["prompts"]
    out = {
        "interfaces": interfaces,
        "exit_code": proc.returncode,
        "stdout": proc.stdout[-6000:],
        "stderr": proc.stderr[-3000:],
        "elapsed_s": round(elapsed, 2),
        "attempts": {
            pid: [
                {k: a.get(k) for k in ("mode", "status", "session_id", "failure_class", "decision")}
                for a in rec["attempts"]
            ]
            for pid, rec in prompts.items()
        },
        "commits": git_log(repo),
        "files": sorted(p.name for p in repo.iterdir() if p.name != ".git"),
        "requests": [
            {
                "kind": r.get("kind"),
                "path": r.get("path"),
                "stream": r["body"].get("stream"),
                "messages": r["body"].get("messages", r["body"].get("inputs")),
                "session_header": r["headers"].get("x-claude-code-session-id")
                or r["headers"].get("session_id")
                or r["headers"].get("session-id"),
                "step": r.get("step"),
            }
            for r in records
        ],
        "repo": str(repo),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
