"""Compat: the adapters drive the *real* ``claude`` / ``codex`` binaries against mocks.

Runs only inside a private network namespace (``unshare -n``, then ``ip link
set lo up``), exactly as ``../shared/agent-cli/README.md`` does, so the CLI can
reach nothing but loopback. Skips with a reason when the CLI, ``../shared`` or
``unshare -n`` is unavailable. Point ``PROMPT_RUNNER_COMPAT_BIN`` at a
directory holding the binaries (e.g. ``node_modules/.bin``) or put them on PATH;
the cache of ``scripts/install_agent_clis.sh`` is looked at too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.compat, pytest.mark.real_cli]

SHARED = Path(__file__).resolve().parents[3] / "shared" / "agent-cli"
REPO = Path(__file__).resolve().parents[2]

DRIVER = r'''
import json, os, subprocess, sys, time
from pathlib import Path
from prompt_runner.providers import claude, codex
from prompt_runner.providers.base import SessionRequest, TimeBounds

provider_name, scenario = sys.argv[1], sys.argv[2]
shared, tmp = Path(sys.argv[3]), Path(sys.argv[4])
work, home = tmp / "work", tmp / "home"
work.mkdir(); home.mkdir()
port_file = tmp / "port"
mock_py = "mock_anthropic.py" if provider_name == "claude" else "mock_openai_responses.py"
mock = subprocess.Popen([sys.executable, str(shared / mock_py), "--scenario", scenario,
                         "--log", str(tmp / "requests.jsonl"), "--port-file", str(port_file)],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    if port_file.exists() and port_file.read_text().strip():
        break
    time.sleep(0.05)
port = port_file.read_text().strip()
if provider_name == "claude":
    provider = claude.make_provider()
    env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-test",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1", "HOME": str(home)}
else:
    provider = codex.make_provider()
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(f"""
model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false
[model_providers.mock]
name = "Mock"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
[features]
plugins = false
remote_plugin = false
apps = false
[analytics]
enabled = false
[otel]
exporter = "none"
""")
    env = {"CODEX_HOME": str(codex_home), "MOCK_API_KEY": "sk-test", "HOME": str(home)}
req = SessionRequest(prompt_id="01", prompt_text="create hello.txt", cwd=work,
                     provider=provider_name, permission_mode="bypass", env=env,
                     model="gpt-5.5" if provider_name == "codex" else None,
                     bounds=TimeBounds(idle_ms=60_000, run_deadline_ms=120_000))
out = {}
events = []
first = provider.start(req, events.append).wait(150)
out["first"] = {"ok": first.ok, "session_id": first.session_id, "text": first.text,
                "failure": first.failure.to_dict() if first.failure else None,
                "cost": first.usage.cost_usd, "output_tokens": first.usage.output_tokens}
out["kinds"] = [e.kind for e in events]
out["files"] = sorted(p.name for p in work.iterdir())
if first.ok and first.session_id:
    second = provider.resume(req, first.session_id, "next", lambda e: None).wait(150)
    out["second"] = {"ok": second.ok, "session_id": second.session_id,
                     "failure": second.failure.to_dict() if second.failure else None}
mock.terminate()
print(json.dumps(out))
'''


# Read at import, before the autouse fixture points HOME at a scratch directory.
INSTALLED = (
    Path(
        os.environ.get("PROMPT_RUNNER_AGENT_CLI_CACHE")
        or Path.home() / ".cache" / "prompt-runner-agent-clis"
    )
    / "node_modules"
    / ".bin"
)


def _bin_dir() -> str:
    extra = os.environ.get("PROMPT_RUNNER_COMPAT_BIN")
    dirs = (extra, os.environ.get("PATH", ""), str(INSTALLED))
    return os.pathsep.join(p for p in dirs if p)


def _netns_ok() -> bool:
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, check=False
    )
    return probe.returncode == 0


def run_in_netns(provider: str, scenario: str, tmp_path: Path) -> dict[str, Any]:
    cli = shutil.which(provider, path=_bin_dir())
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent (the shared mock servers are needed)")
    if cli is None:
        pytest.skip(f"the real `{provider}` CLI is not on PATH or PROMPT_RUNNER_COMPAT_BIN")
    if not _netns_ok():
        pytest.skip("cannot create a private network namespace (unshare -n)")
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    env = dict(os.environ)
    env["PATH"] = f"{Path(cli).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(REPO / "src")
    inner = f'ip link set lo up && exec "{sys.executable}" "$@"'
    proc = subprocess.run(
        [
            "unshare",
            "-n",
            "sh",
            "-c",
            inner,
            "sh",
            str(driver),
            provider,
            scenario,
            str(SHARED),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=400,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_real_claude_writes_and_resumes(tmp_path: Path) -> None:
    out = run_in_netns("claude", "write", tmp_path)
    assert out["first"]["ok"], out
    assert "hello.txt" in out["files"]
    assert out["kinds"][0] == "session_started"
    assert out["first"]["cost"] and out["first"]["cost"] > 0
    assert out["second"]["ok"] and out["second"]["session_id"] == out["first"]["session_id"]


def test_real_claude_429_is_rate_limit(tmp_path: Path) -> None:
    out = run_in_netns("claude", "429", tmp_path)
    assert out["first"]["failure"]["class"] == "provider_rate_limit", out


def test_real_codex_runs_shell_and_resumes(tmp_path: Path) -> None:
    out = run_in_netns("codex", "shell", tmp_path)
    assert out["first"]["ok"], out
    assert "hello.txt" in out["files"]
    assert out["second"]["ok"] and out["second"]["session_id"] == out["first"]["session_id"]


def test_real_codex_quota_is_not_retryable(tmp_path: Path) -> None:
    out = run_in_netns("codex", "429_quota", tmp_path)
    failure = out["first"]["failure"]
    assert failure["class"] == "provider_rate_limit" and failure["retryable"] is False, out
