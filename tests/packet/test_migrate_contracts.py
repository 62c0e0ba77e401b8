"""`packet migrate-contracts`: legacy shell-string commands become argv entries (issue 14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from prompt_runner import api, lint_packet
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.migrate import Argv, migrate_contracts, to_argv
from tests.helpers.gitrepo import make_git_repo
from tests.packet._packets import cli

PROMPT = """---
id: "01"
name: "Hello"
targets:
  - "app"
verify:
  files_exist:
    - "hello.txt"
  # the checks below predate argv commands
  commands:
    - "test -s hello.txt"
    - repo: "app"
      run: "GREETING=hi timeout 30 grep -q 'Hello there' hello.txt"
      fault_exit_codes: [2]
    - "cat hello.txt | grep Hello"
    - exec: "true"
      args: []
      timeout_ms: 1000
simulate:
  attempts:
    - writes:
        - path: "hello.txt"
          text: "Hello there"
---
# Hello

Write `hello.txt`.
"""

MANIFEST = """---
name: "demo"
profile: "simulated-default"
repos:
  app:
    path: "../app"
    default: true
agent_control:
  completion_verify:
    commands:
      - "test -f hello.txt"
---
# demo
"""


def packet_at(tmp_path: Path) -> Path:
    make_git_repo(tmp_path / "app")
    packet = tmp_path / "demo"
    (packet / "prompts").mkdir(parents=True)
    (packet / "prompt_runner_packet.md").write_text(MANIFEST)
    (packet / "prompts" / "01_hello.prompt.md").write_text(PROMPT)
    return packet


@pytest.mark.parametrize(
    ("text", "argv", "env", "timeout_ms"),
    [
        ("make test", ("make", "test"), {}, None),
        ("pytest -q 'tests/a b' \"x|y\" '$HOME'", ("pytest", "-q", "tests/a b", "x|y", "$HOME"),
         {}, None),
        ("CI=1 A=b c timeout 90 mix test", ("c", "timeout", "90", "mix", "test"), {"CI": "1",
         "A": "b"}, None),
        ("CI=1 timeout 2m mix test", ("mix", "test"), {"CI": "1"}, 120_000),
        ("exec timeout 1.5 ./bin/check", ("./bin/check",), {}, 1500),
        ("timeout 0 sleep 1", ("sleep", "1"), {}, None),  # coreutils: 0 = no limit
        ("timeout 0.0s make", ("make",), {}, None),
        ("timeout 10s make", ("make",), {}, 10_000),
        ("timeout 5m make", ("make",), {}, 300_000),
        ("timeout 1h make", ("make",), {}, 3_600_000),
        ("timeout .5 make", ("make",), {}, 500),
        ("timeout 1.0005 make", ("make",), {}, 1001),  # rounded up, never down to 0
        ("timeout -- 2 make", ("make",), {}, 2000),
        ("grep a\\|b f", ("grep", "a|b", "f"), {}, None),
    ],
)  # fmt: skip
def test_plain_command_lines_become_argv(
    text: str, argv: tuple[str, ...], env: dict[str, str], timeout_ms: int | None
) -> None:
    assert to_argv(text) == Argv(argv, env, timeout_ms)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("cat a | grep b", "pipe"),
        ("make && make test", "`&`"),
        ("make; make test", "`;`"),
        ("pytest > log.txt", "redirect `>`"),
        ("pytest 2>&1", "redirect `>`"),
        ("echo $HOME", "`$`"),
        ('echo "$(date)"', "`$`"),
        ("echo `date`", "backquotes"),
        ("ls *.py", "glob `*`"),
        ("ls file?.txt", "glob `?`"),
        ("cat ~/notes", "`~`"),
        ("make # build", "comment"),
        ("make\nmake test", "newline"),
        ("cd sub", "builtin"),
        ("sh -c 'make test'", "`sh -c`"),
        ("bash -lc make", "`bash -c`"),
        ("FOO=1", "no program"),
        ("echo 'open", "cannot split"),
        ("(make)", "subshell"),
    ],
)
def test_command_lines_the_shell_interprets_are_left(text: str, reason: str) -> None:
    result = to_argv(text)
    assert isinstance(result, str) and reason in result, result


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("timeout -k 5 60 make", "`timeout -k`"),
        ("timeout --signal=KILL 60 make", "`timeout --signal=KILL`"),
        ("timeout -s INT 60 make", "`timeout -s`"),
        ("timeout --preserve-status 60 make", "`timeout --preserve-status`"),
        ("timeout 1e3 make", "`timeout 1e3`"),
        ("timeout 10S make", "`timeout 10S`"),
        ("timeout inf make", "`timeout inf`"),
        ("timeout 60", "no program"),
    ],
)
def test_timeout_forms_not_understood_exactly_are_left(text: str, reason: str) -> None:
    result = to_argv(text)
    assert isinstance(result, str) and reason in result, result


def test_timeout_zero_keeps_the_default_deadline(tmp_path: Path) -> None:
    packet = packet_at(tmp_path)
    prompt = packet / "prompts" / "01_hello.prompt.md"
    prompt.write_text(
        '---\nid: "01"\ntargets: ["app"]\nverify:\n  commands:\n    - "timeout 0 sleep 0.2"\n'
        "simulate:\n  attempts:\n    - messages: [done]\n---\n# Hello\n"
    )
    (packet / "prompt_runner_packet.md").write_text(MANIFEST.split("agent_control")[0] + "---\n")
    assert migrate_contracts(packet, write=True).converted == 1
    front = yaml.safe_load(prompt.read_text().split("---\n")[1])
    assert front["verify"]["commands"] == [
        {"exec": "sleep", "args": ["0.2"], "timeout_ms": 300_000}
    ]
    assert api.verify(packet)["pass"] is True  # not a verifier_timeout after 1 ms


def test_dry_run_prints_a_diff_and_changes_nothing(tmp_path: Path) -> None:
    packet = packet_at(tmp_path)
    before = (packet / "prompts" / "01_hello.prompt.md").read_text()
    res = cli("packet", "migrate-contracts", str(packet))
    assert res.returncode == 1, res.stderr  # one entry needs a person
    assert (packet / "prompts" / "01_hello.prompt.md").read_text() == before
    assert '-    - "test -s hello.txt"\n+    - exec: "test"\n' in res.stdout
    assert '+      args: ["-s", "hello.txt"]\n+      timeout_ms: 300000\n' in res.stdout
    assert (
        "NOT CONVERTED prompts/01_hello.prompt.md verify.commands[2] "
        "('cat hello.txt | grep Hello'): a pipe `|` needs a shell"
    ) in res.stdout
    assert "would convert 3 commands in 2 files; 1 left for you to rewrite" in res.stdout


def test_write_keeps_comments_order_and_meaning(tmp_path: Path) -> None:
    packet = packet_at(tmp_path)
    report = migrate_contracts(packet, write=True)
    assert report.written and report.converted == 3
    assert report.changed_files == ("prompt_runner_packet.md", "prompts/01_hello.prompt.md")
    assert [u.key for u in report.unconverted] == ["verify.commands[2]"]
    text = (packet / "prompts" / "01_hello.prompt.md").read_text()
    assert "# the checks below predate argv commands\n" in text
    assert text.endswith("---\n# Hello\n\nWrite `hello.txt`.\n")
    front = yaml.safe_load(text.split("---\n")[1])
    assert list(front) == ["id", "name", "targets", "verify", "simulate"]
    commands = front["verify"]["commands"]
    assert commands[0] == {"exec": "test", "args": ["-s", "hello.txt"], "timeout_ms": 300000}
    assert commands[1] == {
        "repo": "app",
        "exec": "grep",
        "args": ["-q", "Hello there", "hello.txt"],
        "fault_exit_codes": [2],
        "env": {"GREETING": "hi"},
        "timeout_ms": 30000,
    }
    assert commands[2] == "cat hello.txt | grep Hello"
    assert commands[3] == {"exec": "true", "args": [], "timeout_ms": 1000}
    manifest = yaml.safe_load((packet / "prompt_runner_packet.md").read_text().split("---\n")[1])
    assert manifest["agent_control"]["completion_verify"]["commands"] == [
        {"exec": "test", "args": ["-f", "hello.txt"], "timeout_ms": 300000}
    ]
    kinds = [f.kind for f in lint_packet(packet).findings if f.kind == "legacy_shell_command"]
    assert kinds == ["legacy_shell_command"]  # only the pipe is left
    load_packet(packet)
    # a second run has nothing more to convert
    again = migrate_contracts(packet, write=True)
    assert again.converted == 0 and not again.written and len(again.unconverted) == 1


def test_converted_commands_still_pass_on_the_work(tmp_path: Path) -> None:
    packet = packet_at(tmp_path)
    prompt = packet / "prompts" / "01_hello.prompt.md"
    prompt.write_text(prompt.read_text().replace('    - "cat hello.txt | grep Hello"\n', ""))
    manifest = packet / "prompt_runner_packet.md"
    manifest.write_text(manifest.read_text().replace(
        'agent_control:\n  completion_verify:\n    commands:\n      - "test -f hello.txt"\n', ""
    ))  # fmt: skip
    res = cli("packet", "migrate-contracts", str(packet), "--write", "--json")
    assert res.returncode == 0, res.stdout + res.stderr
    doc = json.loads(res.stdout)
    assert doc["converted"] == 2 and doc["unconverted"] == [] and doc["written"] is True
    result = api.run(packet, committer="noop")
    assert result.exit_code == 0
    assert api.verify(packet)["pass"] is True


def test_a_packet_without_legacy_commands_is_left_alone(tmp_path: Path) -> None:
    packet = packet_at(tmp_path)
    (packet / "prompts" / "01_hello.prompt.md").write_text(
        PROMPT.split("  # the checks")[0] + "simulate: {}\n---\n# Hello\n"
    )
    (packet / "prompt_runner_packet.md").write_text(MANIFEST.split("agent_control")[0] + "---\n")
    res = cli("packet", "migrate-contracts", str(packet))
    assert res.returncode == 0 and res.stdout.endswith(
        "demo: would convert 0 commands in 0 files; 0 left for you to rewrite\n"
    )


def test_the_rewrite_keeps_the_file_layout(tmp_path: Path) -> None:
    packet = packet_at(tmp_path)
    flush = (
        '---\nid: "01"\ntargets:\n- app\nverify:\n    files_exist:\n    - hello.txt\n'
        "    commands:\n    - test -s hello.txt\n---\n# Hello\n"
    )
    (packet / "prompts" / "01_hello.prompt.md").write_text(flush)
    report = migrate_contracts(packet)
    prompt_diff = report.diff.split("+++ b/prompts/01_hello.prompt.md\n")[1]
    assert [ln for ln in prompt_diff.splitlines() if ln[:1] in "-+"] == [
        "-    - test -s hello.txt",
        '+    - exec: "test"',
        '+      args: ["-s", "hello.txt"]',
        "+      timeout_ms: 300000",
    ]
