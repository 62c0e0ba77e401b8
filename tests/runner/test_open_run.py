"""open_run: a run's identity decided, its start recorded, what it skips and adopts."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import PacketChangedError, UserError
from prompt_runner.runner.identity import fingerprint
from prompt_runner.runner.opening import OpenedRun, choose_run_id, completed_in_run, open_run
from prompt_runner.state.memstore import MemoryStore
from prompt_runner.state.store import FileStore
from tests.helpers.run_context import console, planned, said

PROMPTS: dict[str, dict[str, Any]] = {"01": {}, "02": {}, "03": {}}


def unfinished(store: MemoryStore, run_id: str, fp: str, targets: list[str]) -> None:
    store.write_current_run(
        {
            "run_id": run_id,
            "fingerprint": fp,
            "status": "running",
            "targets": targets,
            "packet": "demo",
            "started_at": "2026-01-01T00:00:00Z",
            "resumed_at": None,
        }
    )


def test_a_fresh_run_gets_a_new_id_and_records_its_start(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS)
    store, out = MemoryStore(), console()

    opened = open_run(p, store, out)

    assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{6}", opened.run_id)
    assert opened == OpenedRun(opened.run_id, resumed=False)
    current = store.read_current_run()
    assert current is not None
    assert current["run_id"] == opened.run_id and current["status"] == "running"
    assert current["targets"] == ["01", "02", "03"] and current["resumed_at"] is None
    assert current["fingerprint"] == fingerprint(p)
    [started] = store.journal(opened.run_id).records()
    assert started["type"] == "run_started" and started["data"]["targets"] == ["01", "02", "03"]
    assert store.load_state()["run_id"] == opened.run_id
    assert said(out) == f"Starting run {opened.run_id}: demo, prompts 01, 02, 03\n"


def test_an_unfinished_run_is_resumed_and_skips_what_it_completed(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS)
    store, out = MemoryStore(), console()
    unfinished(store, "R1", fingerprint(p), ["01", "02", "03"])
    store.append_progress("01", "completed")

    opened = open_run(p, store, out)

    assert (opened.run_id, opened.resumed, opened.skip) == ("R1", True, frozenset({"01"}))
    current = store.read_current_run()
    assert current is not None
    assert current["started_at"] == "2026-01-01T00:00:00Z" and current["resumed_at"]
    assert [r["type"] for r in store.journal("R1").records()] == ["run_resumed"]
    assert said(out) == (
        "Resuming run R1: demo, prompts 02, 03\n"
        "Skipping 01: already completed in this run (name their ids to run them again).\n"
    )


def test_naming_prompts_runs_them_again_in_a_resumed_run(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS, ids=("01",))
    store = MemoryStore()
    store.append_progress("01", "completed")
    assert completed_in_run(p, store, resumed=True) == []
    assert completed_in_run(planned(tmp_path / "b", PROMPTS), store, resumed=True) == ["01"]
    assert completed_in_run(planned(tmp_path / "c", PROMPTS), store, resumed=False) == []


def test_a_new_run_supersedes_the_unfinished_one_in_its_journal(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS, new_run=True)
    store, out = MemoryStore(), console()
    unfinished(store, "R1", "another fingerprint", ["01"])

    run_id, resumed = choose_run_id(p, store, out)

    assert run_id != "R1" and not resumed
    [record] = store.journal("R1").records()
    assert record["type"] == "run_superseded"
    assert record["data"]["new_run_id"] == run_id
    assert record["data"]["reason"] == "explicit_new_run"
    assert said(out) == f"Superseding unfinished run R1 with {run_id} (--new-run).\n"


def test_a_changed_packet_is_not_resumed(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS)
    store = MemoryStore()
    unfinished(store, "R1", "another fingerprint", ["01", "02", "03"])
    with pytest.raises(PacketChangedError, match="the packet changed since unfinished run R1"):
        open_run(p, store, console())
    current = store.read_current_run()
    assert current is not None and current["run_id"] == "R1"  # nothing recorded


def test_resuming_never_widens_the_fence(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS)
    store = MemoryStore()
    unfinished(store, "R1", fingerprint(p), ["01"])
    with pytest.raises(UserError, match="would widen its selection to 02, 03"):
        choose_run_id(p, store, console())


def test_a_completed_run_is_followed_by_a_new_generation(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS)
    store = MemoryStore()
    unfinished(store, "R1", fingerprint(p), ["01"])
    store.write_current_run({**(store.read_current_run() or {}), "status": "completed"})
    run_id, resumed = choose_run_id(p, store, console())
    assert run_id != "R1" and not resumed


def test_git_runs_name_the_changes_already_in_the_repo(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS, committer="git")
    (tmp_path / "repo" / "notes.txt").write_text("the user's\n")
    store, out = MemoryStore(), console()

    opened = open_run(p, store, out)

    assert opened.foreign_changes == {"app": {"notes.txt"}}
    assert opened.carry is not None and opened.carry.snapshot["app"] is not None
    assert "warning: repo 'app' already has uncommitted changes (notes.txt)" in said(out)


def test_a_resumed_run_adopts_the_work_an_interrupted_prompt_left(tmp_path: Path) -> None:
    p = planned(tmp_path, PROMPTS, committer="git", runtime_store="file")
    repo = tmp_path / "repo"
    (repo / "notes.txt").write_text("the user's\n")
    (repo / "a.txt").write_text("the prompt's\n")
    store = FileStore(p.packet.root / ".prompt_runner")
    unfinished_doc = {"run_id": "R1", "fingerprint": fingerprint(p), "status": "running"}
    store.write_current_run({**unfinished_doc, "targets": ["01", "02", "03"]})
    store.update_prompt(
        "01", {"status": "running", "run_id": "R1", "dirty_at_start": {"app": ["notes.txt"]}}
    )
    out = console()

    opened = open_run(p, store, out)
    store.close()

    assert opened.resumed
    assert opened.adopted == {"01": {"app": {"a.txt"}}}
    assert opened.foreign_changes == {"app": {"notes.txt"}}
    assert store.load_prompt("01")["status"] == "interrupted"
    assert "[01] its interrupted run left uncommitted work (a.txt)" in said(out)
    # the user's change is named, the prompt's own is not (it was, before adoption)
    assert "warning: repo 'app' already has uncommitted changes (notes.txt);" in said(out)


def test_a_prompt_a_stop_interrupted_gets_its_work_back_too(tmp_path: Path) -> None:
    # a new user's finding: a live runner records a stopped prompt `interrupted`
    # (not `running`), and the resumed run took its session's files for the user's
    p = planned(tmp_path, PROMPTS, committer="git", runtime_store="file")
    repo = tmp_path / "repo"
    (repo / "partial.txt").write_text("what the session wrote before the stop\n")
    store = FileStore(p.packet.root / ".prompt_runner")
    unfinished_doc = {"run_id": "R1", "fingerprint": fingerprint(p), "status": "interrupted"}
    store.write_current_run({**unfinished_doc, "targets": ["01", "02", "03"]})
    store.update_prompt(
        "01", {"status": "interrupted", "run_id": "R1", "dirty_at_start": {"app": []}}
    )
    out = console()

    opened = open_run(p, store, out)
    store.close()

    assert opened.resumed
    assert opened.adopted == {"01": {"app": {"partial.txt"}}}
    assert opened.foreign_changes == {"app": set()}
    assert "[01] its interrupted run left uncommitted work (partial.txt)" in said(out)
    assert "already has uncommitted changes" not in said(out)
    assert "when the previous runner died" not in said(out)  # it did not die
