"""A session's transcript opens with exactly what the session was sent.

Real runs on the simulated provider through the library (file store): the
prompt body, the repair prompt, a resume's message, each between the
``--- sent to the agent ---`` lines of its own attempt's ``.log``; the JSONL
events are unchanged by it.
"""

from __future__ import annotations

import json
from pathlib import Path

from prompt_runner import api
from prompt_runner.render.sinks import SENT_CLOSE, SENT_OPEN
from prompt_runner.runner.attempt_record import begin_attempt
from prompt_runner.runner.steering import run_with_steers
from prompt_runner.state.store import FileStore
from tests.helpers.packets import FAST, make_packet
from tests.runner._steps import RecordingControl, open_steps, steer, step_context
from tests.runner.test_steering import SCRIPT


def transcripts(packet: Path) -> list[str]:
    """The prompt's transcripts, by attempt number."""
    logs = packet / ".prompt_runner" / "logs"
    found = sorted(logs.glob("prompt-01-*.log"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    return [p.read_text(encoding="utf-8") for p in found]


def sent_blocks(log: str) -> list[tuple[str, str]]:
    """``(header, text)`` of each sent block of a transcript, in order."""
    out: list[tuple[str, str]] = []
    lines = log.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith(SENT_OPEN):
            end = lines.index(SENT_CLOSE, i + 1)
            out.append((lines[i], "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return out


def run(packet: Path) -> None:
    api.run(packet, runtime_store="file", committer="noop")


def test_the_prompt_body_and_the_repair_prompt_are_in_their_transcripts(tmp_path: Path) -> None:
    body = "# Step 01\n\nWrite the report.\nIt must say `done`.\n"
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [
                        {"writes": [{"path": "report.txt", "text": "draft"}]},
                        {"writes": [{"path": "report.txt", "text": "done"}]},
                    ]
                },
                "verify": {"contains": [{"path": "report.txt", "text": "done"}]},
            }
        },
        manifest={"recovery": {**FAST, "repair": {"max_attempts": 1}}},
        bodies={"01": body},
    )
    run(packet)
    first, second = transcripts(packet)
    [(head, text)] = sent_blocks(first)
    assert head.startswith(f"{SENT_OPEN} (run, ")
    assert text + "\n" == body  # verbatim
    assert first.index(SENT_OPEN) < first.index("[session_started]")
    [(head, text)] = sent_blocks(second)
    assert head.startswith(f"{SENT_OPEN} (repair, ")
    assert text.startswith(body.rstrip()) and "## Repair Instructions" in text
    assert "report.txt" in text.split("## Repair Instructions", 1)[1]
    events = sorted((packet / ".prompt_runner" / "logs").glob("prompt-01-*.events.jsonl"))
    for path in events:  # the events JSONL format is unchanged: no sent text in it
        for line in path.read_text(encoding="utf-8").splitlines():
            assert set(json.loads(line)) == {"e", "t"}
            assert "Write the report." not in line


def test_a_resume_transcript_holds_the_resume_message(tmp_path: Path) -> None:
    drop = {"kind": "transport_disconnect", "message": "Connection reset by peer."}
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [{"error": drop}],
                    "resume": {"writes": [{"path": "x.txt", "text": "ok"}]},
                },
                "verify": {"files_exist": ["x.txt"]},
            }
        },
    )
    run(packet)
    status = api.status(packet)["prompts"]["01"]
    assert [a["mode"] for a in status["attempts"]] == ["run", "resume"]
    [(head, text)] = sent_blocks(transcripts(packet)[1])
    assert head.startswith(f"{SENT_OPEN} (resume, ")
    assert "Continue the task exactly where you left off" in text
    assert "Connection reset by peer." in text


def test_steers_are_in_the_transcript_as_sent(tmp_path: Path) -> None:
    """A steer queued for the next session is in its prompt's block; a steer
    delivered into the running session gets a block of its own."""
    ctx = step_context(tmp_path, {"01": SCRIPT}, store=FileStore(tmp_path / "state"))
    ctx.control = RecordingControl(
        queued=[steer("use tabs", delivery="next_session")], live=[steer("add tests")]
    )
    loop = open_steps(ctx)
    attempt = begin_attempt(ctx, loop, 1)
    run_with_steers(ctx, loop, attempt)
    assert attempt.files is not None
    attempt.files.close()
    [(first, prompt), (second, resumed)] = sent_blocks(attempt.files.log_path.read_text())
    assert first.startswith(f"{SENT_OPEN} (run, ") and prompt + "\n" == attempt.request.prompt_text
    assert "## Operator Guidance" in prompt and "use tabs" in prompt
    assert second.startswith(f"{SENT_OPEN} (steer, ") and resumed.startswith("add tests\n")
