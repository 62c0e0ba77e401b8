"""An amendment is held to the packet loader's rules before anything is written.

`control amend` once accepted contract paths the loader refuses (one in
``.git/``, ``REPO:PATH``): with ``--persist`` it wrote them into the prompt
file, so the packet no longer loaded (and during a live run it said it failed
after writing); without it the next run spent every repair on an item that
could never be met. A persist that fails once the file is written puts the
file's old bytes back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner import api
from tests.control._helpers import FAST, NOREPAIR, Gate, make_packet
from tests.helpers.cli import cli

QUIET = {"recovery": {**FAST, **NOREPAIR}}


def _packet(tmp_path: Path) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {"attempts": [{"writes": [{"path": "f1.txt", "text": "x"}]}]},
                "verify": {"files_exist": ["f1.txt"]},
            }
        },
        manifest=QUIET,
    )


def _records(packet: Path, prompt_id: str) -> list[dict[str, Any]]:
    path = packet / ".prompt_runner" / "amendments" / f"{prompt_id}.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _one_sentence(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize("persist", [True, False], ids=["persist", "run-local"])
@pytest.mark.parametrize(
    ("path", "words"),
    [
        (".git/config", "inside a git directory"),
        ("app:x.txt", "write it as {path: x.txt, repo: app}"),
    ],
    ids=["git-dir", "repo-colon-path"],
)
def test_a_path_the_loader_refuses_is_refused_and_nothing_is_written(
    tmp_path: Path, persist: bool, path: str, words: str
) -> None:
    packet = _packet(tmp_path)
    prompt_file = packet / "prompts" / "01_step.prompt.md"
    before = prompt_file.read_bytes()
    flags = ["--persist"] if persist else []
    proc = cli("control", "amend", packet, "01", "--add-file", path, "--reason", "r", *flags)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    sentence = _one_sentence(proc)
    assert "01_step.prompt.md: verify.files_exist[1]:" in sentence
    assert repr(path) in sentence and words in sentence
    assert "the amendment is refused" in sentence
    assert prompt_file.read_bytes() == before
    assert _records(packet, "01") == []
    assert cli("list", packet).returncode == 0
    ran = cli("run", packet, "--no-commit")  # the file's contract, nothing pending
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_the_form_the_refusal_names_is_accepted(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    result = prompt_runner.control_amend(
        packet, "01", add={"files_exist": [{"path": "f1.txt", "repo": "app"}]}, reason="r"
    )
    assert result.to_dict()["record"]["add"] == {"files_exist": [{"path": "f1.txt", "repo": "app"}]}


@pytest.mark.parametrize("flag", ["--add-file", "--add-absent"])
def test_a_path_with_a_newline_is_refused_shown_escaped(tmp_path: Path, flag: str) -> None:
    packet = _packet(tmp_path)
    proc = cli("control", "amend", packet, "01", flag, "a\nb", "--reason", "r")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    sentence = _one_sentence(proc)
    assert '"a\\nb"' in sentence and "control character" in sentence
    assert _records(packet, "01") == []


@pytest.mark.parametrize("command", ["amend", "relax"])
def test_a_persist_that_fails_after_writing_puts_the_file_back(
    tmp_path: Path, command: str
) -> None:
    packet = _packet(tmp_path)
    prompt_file = packet / "prompts" / "01_step.prompt.md"
    before = prompt_file.read_bytes()
    # the record of prompt-runner's own packet edits cannot be written: the
    # prompt file is replaced first, then that record fails
    (packet / ".prompt_runner" / "packet-edits.jsonl").mkdir(parents=True)
    if command == "amend":
        args = ["--add-file", "more.txt"]
    else:
        args = ["--drop", "files_exist", "--confirm"]
    proc = cli("control", command, packet, "01", *args, "--reason", "r", "--persist")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "packet-edits.jsonl" in _one_sentence(proc)
    assert prompt_file.read_bytes() == before
    assert _records(packet, "01") == []


def test_a_persist_during_a_live_run_is_refused_before_the_file_is_touched(
    tmp_path: Path,
) -> None:
    gate = Gate(tmp_path)
    prompts: dict[str, Any] = {
        f"0{i}": {
            "simulate": {"attempts": [{"writes": [{"path": f"p0{i}.txt", "text": "x"}]}]},
            "verify": {"files_exist": [f"p0{i}.txt"]},
        }
        for i in (1, 2)
    }
    prompts["01"]["verify"]["commands"] = [gate.command()]
    packet = make_packet(tmp_path, prompts, manifest=QUIET)
    prompt_file = packet / "prompts" / "02_step.prompt.md"
    before = prompt_file.read_bytes()
    with subprocess.Popen(
        [sys.executable, "-m", "prompt_runner", "run", str(packet), "--no-commit"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as runner:
        try:
            try:
                gate.wait_started(runner)  # 01 verifies: the run is live, 02 not started
                proc = cli(
                    "control", "amend", packet, "02", "--add-file", "app:x.txt",
                    "--reason", "r", "--persist",
                )  # fmt: skip
                assert proc.returncode == 2, proc.stdout + proc.stderr
                assert "'app:x.txt'" in _one_sentence(proc)
                assert prompt_file.read_bytes() == before
                local = cli(
                    "control", "amend", packet, "02", "--add-file", ".git/config", "--reason", "r"
                )
                assert local.returncode == 2, local.stdout + local.stderr
            finally:
                gate.open()
            out, _ = runner.communicate(timeout=60)
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
    assert runner.returncode == 0, out
    assert prompt_file.read_bytes() == before
    assert _records(packet, "02") == []
    assert api.status(packet)["prompts"]["02"]["status"] == "completed"
    again = cli("run", packet, "--remaining", "--no-commit")
    assert again.returncode == 0, again.stdout + again.stderr


def test_an_amend_request_the_loader_would_refuse_is_rejected_by_the_run(
    tmp_path: Path,
) -> None:
    packet = _packet(tmp_path)
    requests = packet / ".prompt_runner" / "control" / "requests"
    requests.mkdir(parents=True)
    request = {
        "command": "amend",
        "params": {"prompt_id": "01", "reason": "r", "add": {"files_exist": [".git/config"]}},
    }
    (requests / "20260810-000000-000000-1.json").write_text(json.dumps(request))
    proc = cli("run", packet, "--no-commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = [
        json.loads(line)
        for line in (packet / ".prompt_runner" / "control" / "log.jsonl").read_text().splitlines()
    ]
    (entry,) = [e for e in entries if e.get("command") == "amend"]
    assert entry["outcome"] == "rejected", entry
    assert "inside a git directory" in entry["reason"], entry
    assert _records(packet, "01") == []


def test_a_valid_persist_still_reaches_the_file_and_loads(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    proc = cli(
        "control", "amend", packet, "01", "--add-file", "f2.txt", "--reason", "r", "--persist"
    )
    assert proc.returncode == 0, proc.stderr
    assert "f2.txt" in (packet / "prompts" / "01_step.prompt.md").read_text()
    assert cli("list", packet).returncode == 0
    assert [r["persist"] for r in _records(packet, "01")] == [True]
