"""The library API: memory store by default, observer callbacks, session files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prompt_runner import api
from prompt_runner.committer import CommitResult
from prompt_runner.errors import ArgumentError, CallbackError, UserError
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

WRITE = {
    "simulate": {"attempts": [{"messages": ["hi"], "writes": [{"path": "a.txt", "text": "a"}]}]},
    "verify": {"files_exist": ["a.txt"]},
}


def test_api_run_defaults_to_memory_store_and_no_commit(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path / "repo", capture_output=True, text=True
    ).stdout
    result = api.run(packet)
    assert result.exit_code == 0 and result.prompts == {"01": "completed"}
    assert not (packet / ".prompt_runner").exists()
    after = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path / "repo", capture_output=True, text=True
    ).stdout
    assert head == after


def test_observer_callbacks_fire_in_order(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": WRITE,
            "02": {
                "verify": {"files_exist": ["never.txt"]},
                "recovery": {"repair": {"enabled": False}},
            },
        },
    )
    seen: list[tuple[str, Any]] = []
    result = api.run(
        packet,
        on_event=lambda pid, ev: seen.append(("event", (pid, ev["kind"]))),
        on_prompt_started=lambda pid: seen.append(("started", pid)),
        on_prompt_completed=lambda pid, rec: seen.append(("completed", (pid, rec["status"]))),
        on_prompt_failed=lambda pid, rec: seen.append(("failed", (pid, rec["status"]))),
        on_run_completed=lambda summary: seen.append(("run", summary["status"])),
    )
    assert result.exit_code == 1
    kinds = [k for k, _ in seen]
    assert kinds[0] == "started"
    assert ("completed", ("01", "completed")) in seen
    assert ("failed", ("02", "verification_failed")) in seen
    assert seen[-1] == ("run", "failed")
    assert ("event", ("01", "assistant_text")) in seen and ("event", ("01", "file_change")) in seen


def test_observer_that_raises_never_breaks_the_run(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})

    def boom(*_: Any) -> None:
        raise RuntimeError("observer bug")

    with pytest.raises(CallbackError) as caught:
        api.run(packet, on_event=boom, on_prompt_completed=boom)
    assert caught.value.result.exit_code == 0  # the run itself finished


def test_callback_committer(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {**WRITE, "commit": "feat: a"}})
    calls: list[tuple[str, str]] = []

    def commit(prompt_id: str, message: str, repos: Any) -> CommitResult:
        calls.append((prompt_id, message))
        return CommitResult({"app": "f" * 40})

    assert api.run(packet, commit_callback=commit).exit_code == 0
    assert calls == [("01", "feat: a")]


def test_api_options_are_validated(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    with pytest.raises(TypeError):
        api.run(packet, remainging=True)
    with pytest.raises(UserError, match="unknown provider"):
        api.run(packet, provider="nope")


def test_continue_names_what_it_skips(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}, "03": {}, "04": {}})
    progress = packet / ".prompt_runner" / "progress.log"
    progress.parent.mkdir()
    progress.write_text(
        "01:completed:2026-01-01T00:00:00Z\n02:failed:2026-01-01T00:00:00Z\n03:completed:2026-01-01T00:00:00Z\n"
    )
    p = api.plan(packet, continue_run=True)
    assert p.selected == ("04",)
    assert any("02" in n and "--remaining" in n for n in p.notes)


def test_session_logs_and_event_schemas(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    assert cli("run", packet, "--no-commit").returncode == 0
    logs = packet / ".prompt_runner" / "logs"
    events = sorted(logs.glob("prompt-01-*.events.jsonl"))
    transcripts = sorted(logs.glob("prompt-01-*.log"))
    assert len(events) == 1 and len(transcripts) == 1
    first = json.loads(events[0].read_text().splitlines()[0])
    assert set(first) == {"e", "t"} and first["e"]["kind"] == "session_started"
    assert "[assistant_text]" in transcripts[0].read_text()

    packet2 = make_packet(tmp_path / "b", {"01": WRITE})
    assert cli("run", packet2, "--no-commit", "--events-mode", "full").returncode == 0
    line = (
        (sorted((packet2 / ".prompt_runner" / "logs").glob("*.events.jsonl"))[0])
        .read_text()
        .splitlines()[0]
    )
    full = json.loads(line)
    assert set(full) == {"data", "ts"} and full["ts"].endswith("Z")


def test_noop_runtime_store_writes_nothing(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    proc = cli("run", packet, "--runtime-store", "noop", "--no-commit")
    assert proc.returncode == 0, proc.stderr
    assert not (packet / ".prompt_runner" / "progress.log").exists()


def test_public_names_stay_functions_whatever_was_imported_first() -> None:
    """``prompt_runner.plan`` was replaced by the ``prompt_runner.plan`` module as
    soon as anything imported it (``TypeError: 'module' object is not callable``),
    and the lazily imported names were missing from ``dir(prompt_runner)``."""
    code = (
        "import prompt_runner, prompt_runner.runner.engine\n"
        "from prompt_runner import api\n"
        "assert prompt_runner.plan is api.plan, prompt_runner.plan\n"
        "assert prompt_runner.run is api.run\n"
        "missing = set(prompt_runner.__all__) - set(dir(prompt_runner))\n"
        "assert not missing, missing\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import pkgutil

    import prompt_runner

    submodules = {m.name for m in pkgutil.iter_modules(prompt_runner.__path__)}
    assert not submodules & set(prompt_runner.__all__)


def test_ids_take_one_id_a_number_or_a_list(tmp_path: Path) -> None:
    """``ids="01"`` ran prompts "0" and "1" (unknown ids), ``ids=[1]`` raised AttributeError."""
    packet = make_packet(tmp_path, {"01": WRITE, "02": WRITE})
    assert api.plan(packet, ids="02").selected == ("02",)
    assert api.plan(packet, ids=[1]).selected == ("01",)
    assert api.plan(packet, ids=2).selected == ("02",)
    assert api.run(packet, ids="01").prompts == {"01": "completed"}
    assert api.verify(packet, ids="01")["prompts"] == 1
    for bad in (1.5, True, {"01": 1}, [None]):
        with pytest.raises(UserError, match=r"run\(ids=\.\.\.\): must be a prompt id or a list"):
            api.run(packet, ids=bad)


def test_all_is_the_cli_flag_name_of_select_all(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE, "02": WRITE})
    assert api.plan(packet, all=True).selected == ("01", "02")
    with pytest.raises(UserError, match="given twice"):
        api.plan(packet, all=True, select_all=True)


def test_bad_api_arguments_are_user_errors_naming_the_argument(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    cases: list[tuple[dict[str, Any], str]] = [
        ({"remainging": True}, r"run\(\): unknown argument 'remainging'; did you mean remaining="),
        ({"remaining": "yes"}, r"run\(remaining=\.\.\.\): must be True or False, not 'yes'"),
        ({"model": 3}, r"run\(model=\.\.\.\): must be text, not 3"),
        ({"timeout": True}, r"run\(timeout=\.\.\.\): must be an integer or text"),
        ({"on_event": "print"}, r"run\(on_event=\.\.\.\): must be a function or None"),
    ]
    for options, message in cases:
        with pytest.raises(ArgumentError, match=message) as caught:
            api.run(packet, **options)
        assert isinstance(caught.value, TypeError) and caught.value.exit_code == 2
    with pytest.raises(ArgumentError, match=r"run\(packet=\.\.\.\): must be a packet directory"):
        api.run(None)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=r"status\(packet=\.\.\.\): must be a packet directory"):
        api.status(3)  # type: ignore[arg-type]
    with pytest.raises(ArgumentError, match=r"repair\(ids=\.\.\.\)"):
        api.repair(packet, "01", ids=["01"])
    assert api.plan(packet, phase=1, max_run_cost_usd=2).max_run_cost_usd == 2.0


def test_a_raising_callback_is_logged_and_raised_when_the_run_has_finished(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Exceptions in callbacks vanished (the API's console goes nowhere by default)."""
    packet = make_packet(tmp_path, {"01": WRITE, "02": WRITE})
    completed: list[str] = []

    def boom(prompt_id: str, record: dict[str, Any]) -> None:
        completed.append(prompt_id)
        raise ValueError(f"observer bug at {prompt_id}")

    with pytest.raises(CallbackError) as caught:
        api.run(packet, runtime_store="file", on_prompt_completed=boom)
    error = caught.value
    assert completed == ["01", "02"]  # the run went on to its end
    assert error.callback == "on_prompt_completed" and len(error.errors) == 2
    assert isinstance(error.__cause__, ValueError) and "at 01" in str(error.__cause__)
    assert error.result.prompts == {"01": "completed", "02": "completed"}
    assert "observer on_prompt_completed raised ValueError('observer bug at 01')" in str(error)
    assert [r.exc_info[1] for r in caplog.records if r.exc_info] == [e for _, e in error.errors]
    assert not (packet / ".prompt_runner" / "run.pid").exists()  # raised after the locks


def test_preflight_report_takes_a_path_like_its_siblings(tmp_path: Path) -> None:
    import prompt_runner

    packet = make_packet(tmp_path, {"01": WRITE})
    for arg in (packet, str(packet)):
        assert prompt_runner.preflight_report(arg)["runtime_ready"] is True
        assert prompt_runner.doctor_report(arg)
        assert prompt_runner.lint_packet(arg).to_dict()


def test_the_readme_library_example_does_what_it_says(tmp_path: Path) -> None:
    """The example ran on the memory store and then read ``status`` from files:
    it printed ``dict_keys([])``."""
    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Library", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    make_packet(tmp_path, {"01": WRITE, "02": WRITE})
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "dict_keys(['01', '02'])" in proc.stdout, proc.stdout
