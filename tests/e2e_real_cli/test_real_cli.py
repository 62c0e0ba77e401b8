"""``prompt-runner run`` drives the REAL Claude Code and Codex CLIs against our mock.

Each test runs :mod:`tests.e2e_real_cli.netns_case` under ``unshare -n`` (or
``unshare -rn`` for a non-root user; then ``ip link set lo up``): the mock
model server, the runner and the CLI live in a network namespace whose only
interface is loopback, so the CLI can reach
nothing but 127.0.0.1. The CLI's own tools write the files (Claude's
``Write``/``Bash``, Codex's shell and ``apply_patch``), the verifier checks
them and the git committer commits them.

Deselect with ``-m "not real_cli"``. Skips (with the reason) when npm cannot
install the pinned CLIs, or a private network namespace cannot be made.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e_real_cli.conftest import REPO

pytestmark = pytest.mark.real_cli

CASE_TIMEOUT_S = 400


def run_case(
    tmp_path: Path,
    netns: list[str],
    bin_dir: Path,
    provider: str,
    steps: list[dict[str, Any]],
    prompts: dict[str, dict[str, Any]],
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    case = tmp_path / "case.json"
    work = tmp_path / "work"
    work.mkdir()
    case.write_text(
        json.dumps(
            {
                "provider": provider,
                "bin_dir": str(bin_dir),
                "tmp": str(work),
                "steps": steps,
                "prompts": prompts,
                "env": env or {},
            }
        ),
        encoding="utf-8",
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO), str(REPO / "src"), env.get("PYTHONPATH", "")) if p
    )
    inner = 'ip link set lo up && exec "$0" -m tests.e2e_real_cli.netns_case "$1"'
    proc = subprocess.run(
        [*netns, "sh", "-c", inner, sys.executable, str(case)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=CASE_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["interfaces"] == ["lo"]
    return out


def explain(out: dict[str, Any]) -> str:
    return json.dumps({k: out[k] for k in ("exit_code", "attempts", "stdout", "requests")})[-6000:]


def write(path: str, text: str) -> dict[str, Any]:
    return {"tool": {"name": "Write", "input": {"file_path": path, "content": text}}}


def bash(command: str) -> dict[str, Any]:
    return {"tool": {"name": "Bash", "input": {"command": command, "description": "write"}}}


CLAUDE_PROMPTS = {
    "01": {
        "verify": {"contains": [{"path": "hello.txt", "text": "hello from claude"}]},
        "commit": "feat: hello from claude",
    },
    "02": {
        "verify": {"contains": [{"path": "second.txt", "text": "second step"}]},
        "commit": "feat: second step",
    },
}
CLAUDE_SECOND = [bash("echo 'second step' > {repo}/second.txt"), {"text": "second done"}]

CODEX_PROMPTS = {
    "01": {
        "verify": {"contains": [{"path": "one.txt", "text": "one from codex"}]},
        "commit": "feat: one from codex",
    },
    "02": {
        "verify": {"contains": [{"path": "two.txt", "text": "two from a patch"}]},
        "commit": "feat: two from a patch",
    },
}
CODEX_SECOND = [
    {"patch": "*** Begin Patch\n*** Add File: two.txt\n+two from a patch\n*** End Patch\n"},
    {"text": "second done"},
]


def assert_both_committed(out: dict[str, Any], messages: list[str], files: list[str]) -> None:
    assert out["exit_code"] == 0, explain(out)
    assert out["commits"][: len(messages)] == list(reversed(messages)), out["commits"]
    assert set(files) <= set(out["files"])
    for attempts in out["attempts"].values():
        assert attempts[-1]["status"] == "completed", explain(out)


def test_claude_runs_a_two_prompt_packet(
    tmp_path: Path, agent_clis: Path, netns: list[str]
) -> None:
    steps = [
        write("{repo}/hello.txt", "hello from claude\n"),
        {"text": "first done"},
        *CLAUDE_SECOND,
    ]
    out = run_case(tmp_path, netns, agent_clis, "claude", steps, CLAUDE_PROMPTS)
    assert_both_committed(
        out, ["feat: hello from claude", "feat: second step"], ["hello.txt", "second.txt"]
    )
    assert [len(a) for a in out["attempts"].values()] == [1, 1], explain(out)
    agent = [r for r in out["requests"] if r["kind"] == "agent"]
    assert len(agent) == 4 and all(r["path"].startswith("/v1/messages") for r in agent)
    # Each prompt is a fresh session: two different Claude session ids.
    ids = [a[0]["session_id"] for a in out["attempts"].values()]
    assert all(ids) and ids[0] != ids[1]


def test_codex_runs_a_two_prompt_packet(tmp_path: Path, agent_clis: Path, netns: list[str]) -> None:
    steps = [{"shell": "echo 'one from codex' > one.txt"}, {"text": "first done"}, *CODEX_SECOND]
    out = run_case(tmp_path, netns, agent_clis, "codex", steps, CODEX_PROMPTS)
    assert_both_committed(
        out, ["feat: one from codex", "feat: two from a patch"], ["one.txt", "two.txt"]
    )
    assert [len(a) for a in out["attempts"].values()] == [1, 1], explain(out)
    assert all(r["path"] == "/v1/responses" for r in out["requests"])


@pytest.mark.parametrize("provider", ["claude", "codex"])
def test_rate_limit_then_success_is_retried(
    tmp_path: Path, agent_clis: Path, netns: list[str], provider: str
) -> None:
    limited = {"status": 429, "message": "slow down", "retry_after": "0"}
    if provider == "claude":
        steps = [limited, write("{repo}/hello.txt", "hello from claude\n"), {"text": "ok"}]
        steps += CLAUDE_SECOND
        prompts, files = CLAUDE_PROMPTS, ["hello.txt", "second.txt"]
    else:
        limited["code"] = "rate_limit_exceeded"
        steps = [limited, {"shell": "echo 'one from codex' > one.txt"}, {"text": "ok"}]
        steps += CODEX_SECOND
        prompts, files = CODEX_PROMPTS, ["one.txt", "two.txt"]
    out = run_case(tmp_path, netns, agent_clis, provider, steps, prompts)
    first = out["attempts"]["01"]
    assert [a["mode"] for a in first] == ["run", "retry"], explain(out)
    assert first[0]["failure_class"] == "provider_rate_limit"
    assert first[0]["decision"] == "retry"
    assert first[1]["status"] == "completed"
    assert out["exit_code"] == 0, explain(out)
    assert set(files) <= set(out["files"])
    assert len(out["commits"]) == 3  # the initial commit + one per prompt


def with_extra_file(prompts: dict[str, dict[str, Any]], name: str) -> dict[str, dict[str, Any]]:
    """``prompts`` where prompt 01 also needs ``name`` (written only after the resume)."""
    first = dict(prompts["01"])
    first["verify"] = {**first["verify"], "files_exist": [name]}
    return {**prompts, "01": first}


@pytest.mark.parametrize("provider", ["claude", "codex"])
def test_mid_stream_failure_resumes_the_same_session(
    tmp_path: Path, agent_clis: Path, netns: list[str], provider: str
) -> None:
    # The first tool call runs, then the next model stream breaks before the
    # task is done (the contract also needs resumed.txt): the runner must
    # resume the very same session, whose next request finishes the work.
    if provider == "claude":
        # Claude Code follows a broken stream with one non-streaming request;
        # it is reset too (repeat 2), so the CLI gives up with ECONNRESET.
        steps = [
            write("{repo}/hello.txt", "hello from claude\n"),
            {"fail": "drop", "repeat": 2},
            write("{repo}/resumed.txt", "resumed\n"),
            {"text": "resumed and done"},
            *CLAUDE_SECOND,
        ]
        prompts, resumable = CLAUDE_PROMPTS, "transport_disconnect"
    else:
        steps = [
            {"shell": "echo 'one from codex' > one.txt"},
            {"fail": "drop"},
            {"shell": "echo resumed > resumed.txt"},
            {"text": "resumed and done"},
            *CODEX_SECOND,
        ]
        prompts, resumable = CODEX_PROMPTS, "protocol_error"
    out = run_case(
        tmp_path, netns, agent_clis, provider, steps, with_extra_file(prompts, "resumed.txt")
    )
    first = out["attempts"]["01"]
    assert [a["mode"] for a in first] == ["run", "resume"], explain(out)
    assert first[0]["failure_class"] == resumable
    assert first[0]["decision"] == "resume"
    assert first[0]["session_id"] and first[0]["session_id"] == first[1]["session_id"]
    assert first[1]["status"] == "completed"
    assert out["exit_code"] == 0, explain(out)
    assert "resumed.txt" in out["files"]
    agent = [r for r in out["requests"] if r["kind"] == "agent"]
    resumed = agent[3 if provider == "claude" else 2]
    # The resumed request carries the same session and replays its history
    # (the first request held only the prompt; the resumed one also the tool turn).
    assert resumed["messages"] > agent[0]["messages"], explain(out)
    assert resumed["session_header"] == first[0]["session_id"], explain(out)


def gateway_token() -> str:
    """An unsigned JWT whose audience is ``claude-gateway``: Claude Code 2.1.332 then
    reads the unified rate-limit headers, as it does for a subscription login
    (with a plain API key it ignores them). It is never checked by anyone."""
    import base64

    def part(doc: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(doc).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part({'aud': 'claude-gateway'})}.sig"


@pytest.mark.parametrize("provider", ["claude", "codex"])
def test_a_usage_limit_refusal_waits_for_the_reset_and_resumes(
    tmp_path: Path, agent_clis: Path, netns: list[str], provider: str
) -> None:
    """The real CLI is refused for an exhausted five-hour window that resets a few
    seconds later: the run waits for it (no retry spent), resumes the same session
    and completes both prompts."""
    reset = str(int(time.time()) + 8)
    env: dict[str, str] = {}
    if provider == "claude":
        headers = {
            "anthropic-ratelimit-unified-status": "rejected",
            "anthropic-ratelimit-unified-reset": reset,
            "anthropic-ratelimit-unified-representative-claim": "five_hour",
            "anthropic-ratelimit-unified-5h-utilization": "1.0",
            "anthropic-ratelimit-unified-5h-reset": reset,
            "anthropic-ratelimit-unified-5h-status": "rejected",
        }
        refused = {"status": 429, "message": "This request would exceed your rate limit."}
        steps = [{**refused, "headers": headers}, write("{repo}/hello.txt", "hello from claude\n")]
        steps += [{"text": "ok"}, *CLAUDE_SECOND]
        prompts = CLAUDE_PROMPTS
        env["ANTHROPIC_AUTH_TOKEN"] = gateway_token()
    else:
        headers = {
            "x-codex-primary-used-percent": "100",
            "x-codex-primary-window-minutes": "300",
            "x-codex-primary-reset-at": reset,
        }
        refused = {
            "status": 429,
            "code": "usage_limit_reached",
            "error_type": "usage_limit_reached",
            "message": "The usage limit has been reached",
            "error_fields": {"plan_type": "plus", "resets_at": int(reset)},
            "headers": headers,
        }
        steps = [refused, {"shell": "echo 'one from codex' > one.txt"}, {"text": "ok"}]
        steps += CODEX_SECOND
        prompts = CODEX_PROMPTS
    started = time.monotonic()
    out = run_case(tmp_path, netns, agent_clis, provider, steps, prompts, env=env)
    assert out["exit_code"] == 0, explain(out)
    first = out["attempts"]["01"]
    assert [a["mode"] for a in first] == ["run", "resume"], explain(out)
    assert first[0]["failure_class"] == "provider_rate_limit"
    assert first[0]["decision"] == "wait"
    assert first[0]["session_id"] == first[1]["session_id"]
    assert time.monotonic() - started >= 5
    assert len(out["commits"]) == 3
