"""The runtime stores: shared semantics, the file layout, the memory and no-op stores."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from prompt_runner.errors import LockHeldError, StateError
from prompt_runner.state.store import (
    FileStore,
    MemoryStore,
    NoopStore,
    NullLock,
    RuntimeStore,
    empty_state,
)

EMPTY = {"schema_version": 1, "version": 1, "prompts": {}}


@pytest.fixture(params=["file", "memory"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], RuntimeStore]:
    """A factory: file stores share one root (a new instance = a new invocation)."""
    if request.param == "file":
        return lambda: FileStore(tmp_path / ".prompt_runner")
    memory = MemoryStore()
    return lambda: memory


def _attempt(n: int, mode: str = "run") -> dict[str, object]:
    return {"attempt": n, "mode": mode, "started_at": "2025-01-02T03:04:05Z"}


def test_empty_before_any_run(make_store: Callable[[], RuntimeStore]) -> None:
    store = make_store()
    assert store.load_state() == EMPTY
    assert store.load_prompt("01") == {"attempts": []}
    assert store.read_progress() == {}
    assert store.read_current_run() is None


def test_update_merges_top_level_fields(make_store: Callable[[], RuntimeStore]) -> None:
    store = make_store()
    store.update_prompt("01", {"status": "running", "source": "run", "steered": False})
    store.update_prompt("01", {"status": "completed", "commit_info": {"app": "abc"}})
    prompt = store.load_state()["prompts"]["01"]
    assert prompt == {
        "status": "completed",
        "source": "run",
        "steered": False,
        "commit_info": {"app": "abc"},
        "attempts": [],
    }
    assert isinstance(store.load_state()["updated_at"], str)


def test_attempts_finish_updates_only_that_attempt(make_store: Callable[[], RuntimeStore]) -> None:
    store = make_store()
    first = store.start_attempt("01", _attempt(1))
    second = store.start_attempt("01", _attempt(2, "retry"))
    assert (first, second) == (1, 2)
    store.finish_attempt("01", second, {"status": "verification_failed", "reason": "x"})
    attempts = store.load_prompt("01")["attempts"]
    assert attempts[0]["status"] == "running"
    assert attempts[1]["status"] == "verification_failed"
    assert attempts[1]["reason"] == "x" and "reason" not in attempts[0]
    with pytest.raises(ValueError):
        store.finish_attempt("01", 3, {"status": "failed"})
    with pytest.raises(ValueError):
        store.finish_attempt("02", 1, {"status": "failed"})


def test_attempt_history_appends_across_invocations(
    make_store: Callable[[], RuntimeStore],
) -> None:
    """Catalog C5: numbers restart per invocation, the list is never reset."""
    for _invocation in range(2):
        store = make_store()
        key = store.start_attempt("01", _attempt(1))
        store.update_prompt("01", {"status": "verification_failed"})
        store.finish_attempt("01", key, {"status": "verification_failed"})
    attempts = make_store().load_state()["prompts"]["01"]["attempts"]
    assert [(a["attempt"], a["mode"], a["status"]) for a in attempts] == [
        (1, "run", "verification_failed"),
        (1, "run", "verification_failed"),
    ]


def test_run_meta_is_top_level(make_store: Callable[[], RuntimeStore]) -> None:
    store = make_store()
    store.set_run_meta({"run_id": "R1", "fingerprint": "f00", "started_at": "t"})
    doc = store.load_state()
    assert (doc["run_id"], doc["fingerprint"], doc["started_at"]) == ("R1", "f00", "t")
    assert (doc["schema_version"], doc["version"]) == (1, 1)
    with pytest.raises(ValueError):
        store.set_run_meta({"prompts": {}})


def test_values_are_copied_and_checked(make_store: Callable[[], RuntimeStore]) -> None:
    store = make_store()
    fields: dict[str, object] = {"status": "running", "last_verifier": {"items": [1]}}
    store.update_prompt("01", fields)
    fields["status"] = "mutated"
    loaded = store.load_state()
    loaded["prompts"]["01"]["last_verifier"]["items"].append(2)
    assert store.load_prompt("01") == {
        "status": "running",
        "last_verifier": {"items": [1]},
        "attempts": [],
    }
    with pytest.raises(ValueError):
        store.update_prompt("01", {"attempts": []})
    with pytest.raises((TypeError, ValueError)):
        store.update_prompt("01", {"bad": object()})
    with pytest.raises(ValueError):
        store.update_prompt("../escape", {"status": "x"})


def test_progress_and_current_run(make_store: Callable[[], RuntimeStore]) -> None:
    store = make_store()
    store.append_progress("01", "failed", at="2025-01-02T03:04:05Z")
    store.append_progress("01", "completed", "no_commit", at="2025-01-02T03:05:05Z")
    assert make_store().read_progress()["01"].suffix == "no_commit"
    store.write_current_run({"run_id": "R1", "targets": ["01"]})
    assert make_store().read_current_run() == {
        "schema_version": 1,
        "run_id": "R1",
        "targets": ["01"],
    }


def test_journal_through_store(make_store: Callable[[], RuntimeStore]) -> None:
    store = make_store()
    journal = store.journal("R1")
    journal.append("run_started", {})
    journal.close()
    again = make_store().journal("R1")
    assert again.append("run_resumed", {})["seq"] == 2
    assert [r["type"] for r in again.records()] == ["run_started", "run_resumed"]
    again.close()


# -- file store specifics -------------------------------------------------------------


def test_file_layout(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    store = FileStore(root)
    store.set_run_meta({"run_id": "R1"})
    key = store.start_attempt("01", _attempt(1))
    store.finish_attempt("01", key, {"status": "completed", "verifier": {"pass": True}})
    store.update_prompt("01", {"status": "completed"})
    store.append_progress("01", "completed", "noop")
    store.journal("R1").close()
    store.write_current_run({"run_id": "R1"})
    store.flush_summary()  # a status change right after a rewrite waits for this
    assert store.root == root
    assert store.logs_dir() == root / "logs"
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    assert files == [
        "progress.log",
        "prompts/01.jsonl",
        "runs/R1/journal.jsonl",
        "runs/current.json",
        "state.json",
    ]
    state = json.loads((root / "state.json").read_text())
    assert state["run_id"] == "R1" and state["schema_version"] == 1
    assert state["prompts"] == {"01": {"attempt_count": 1, "status": "completed"}}
    ops = [json.loads(line) for line in (root / "prompts" / "01.jsonl").read_text().splitlines()]
    assert [op["op"] for op in ops] == ["attempt_start", "attempt_finish", "update"]
    assert all(op["schema_version"] == 1 for op in ops)


def test_state_json_valid_after_many_updates_and_no_tmp_left(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    store = FileStore(root)
    for n in range(60):
        prompt_id = f"{n % 7:02d}"
        key = store.start_attempt(prompt_id, _attempt(1))
        store.update_prompt(prompt_id, {"status": "running" if n % 2 else "retry_scheduled"})
        store.finish_attempt(prompt_id, key, {"status": "failed"})
        json.loads((root / "state.json").read_text())  # always a complete document
    leftovers = [p for p in root.rglob("*") if ".tmp." in p.name]
    assert leftovers == []
    doc = FileStore(root).load_state()
    assert sum(len(p["attempts"]) for p in doc["prompts"].values()) == 60


def test_state_json_does_not_grow_with_attempts(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    store = FileStore(root)
    report = {"items": [{"clause": "files_exist", "detail": "x" * 500}] * 10}
    store.start_attempt("01", _attempt(1))
    store.update_prompt("01", {"status": "running"})
    size_after_one = (root / "state.json").stat().st_size
    for n in range(2, 40):
        key = store.start_attempt("01", _attempt(n))
        store.finish_attempt("01", key, {"status": "verification_failed", "verifier": report})
    assert (root / "state.json").stat().st_size <= size_after_one + 5
    assert len(store.load_prompt("01")["attempts"]) == 39


def test_summary_heals_after_crash_between_log_and_state(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    FileStore(root).start_attempt("01", _attempt(1))
    # Simulate a crash after the log append but before state.json was rewritten.
    log = root / "prompts" / "01.jsonl"
    with log.open("a") as fh:
        fh.write(
            json.dumps({"schema_version": 1, "op": "attempt_start", "key": 2, "attempt": {}}) + "\n"
        )
    store = FileStore(root)
    assert store.start_attempt("01", _attempt(3)) == 3
    store.update_prompt("01", {"status": "running"})
    assert json.loads((root / "state.json").read_text())["prompts"]["01"]["attempt_count"] == 3


def test_prompt_known_only_from_its_log_is_listed(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    FileStore(root).update_prompt("05", {"source": "run"})  # no status: no state rewrite
    assert not (root / "state.json").exists()
    assert FileStore(root).load_state()["prompts"] == {"05": {"source": "run", "attempts": []}}


def test_torn_prompt_log_is_repaired_on_next_write(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    FileStore(root).update_prompt("01", {"status": "running"})
    log = root / "prompts" / "01.jsonl"
    with log.open("ab") as fh:
        fh.write(b'{"schema_version":1,"op":"upd')
    assert FileStore(root).load_prompt("01")["status"] == "running"  # torn line ignored
    store = FileStore(root)
    store.update_prompt("01", {"status": "completed"})
    assert store.load_prompt("01")["status"] == "completed"
    assert len(list(log.parent.glob("01.jsonl.torn.*"))) == 1


def test_corrupt_files_raise_state_error(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    FileStore(root).update_prompt("01", {"status": "running"})
    # state.json is a derived summary: a corrupt one is rebuilt from the prompt logs.
    for bad in ("{not json", '{"schema_version": 1, "prompts": []}', ""):
        (root / "state.json").write_text(bad)
        assert FileStore(root).load_state()["prompts"]["01"]["status"] == "running"
        writer = FileStore(root)
        writer.update_prompt("01", {"status": "completed"})
        healed = json.loads((root / "state.json").read_text())
        assert healed["prompts"]["01"]["status"] == "completed"
        assert healed["recovered_from"].startswith("state.json.corrupt.")
        assert (root / healed["recovered_from"]).read_text() == bad
        writer.update_prompt("01", {"status": "running"})
    (root / "state.json").write_text('{"schema_version": 2, "prompts": {}}')
    with pytest.raises(StateError, match="schema_version"):
        FileStore(root).load_state()
    (root / "state.json").unlink()
    log = root / "prompts" / "01.jsonl"
    log.write_bytes(b"garbage\n" + log.read_bytes())
    with pytest.raises(StateError, match="line 1"):
        FileStore(root).load_state()
    (root / "runs").mkdir()
    (root / "runs" / "current.json").write_text("[1]")
    with pytest.raises(StateError):
        FileStore(root).read_current_run()


def test_file_store_lock_is_the_run_pid(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    store = FileStore(root)
    with store.lock():
        assert (root / "run.pid").read_text().split()[0] == str(os.getpid())
        with pytest.raises(LockHeldError):
            FileStore(root).lock().acquire()
    assert not (root / "run.pid").exists()


def test_group_commit_store_flushes(tmp_path: Path) -> None:
    store = FileStore(tmp_path, fsync_interval_ms=1000)
    store.start_attempt("01", _attempt(1))
    store.flush()
    store.close()
    store.update_prompt("01", {"status": "x"})  # reopens after close
    assert store.load_prompt("01")["status"] == "x"


# -- memory and no-op stores -----------------------------------------------------------


def _exercise(store: RuntimeStore) -> None:
    with store.lock():
        store.set_run_meta({"run_id": "R1"})
        key = store.start_attempt("01", _attempt(1))
        store.finish_attempt("01", key, {"status": "completed"})
        store.update_prompt("01", {"status": "completed"})
        store.append_progress("01", "completed", "noop")
        store.journal("R1").append("run_started", {})
        store.write_current_run({"run_id": "R1"})


@pytest.mark.parametrize("factory", [MemoryStore, NoopStore])
def test_in_memory_stores_never_touch_the_filesystem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factory: Callable[[], RuntimeStore]
) -> None:
    monkeypatch.chdir(tmp_path)
    opened: list[object] = []
    real_open = os.open
    monkeypatch.setattr(os, "open", lambda *a, **k: (opened.append(a[0]), real_open(*a, **k))[1])
    store = factory()
    _exercise(store)
    store.load_state()
    assert opened == []
    assert list(tmp_path.iterdir()) == []
    assert store.root is None and store.logs_dir() is None
    assert isinstance(store.lock(), NullLock)


def test_memory_store_keeps_everything() -> None:
    store = MemoryStore()
    _exercise(store)
    doc = store.load_state()
    assert doc["run_id"] == "R1"
    assert doc["prompts"]["01"]["attempts"][0]["status"] == "completed"
    assert store.read_progress()["01"].status == "completed"
    assert store.read_current_run() == {"schema_version": 1, "run_id": "R1"}
    assert [r["type"] for r in store.journal("R1").records()] == ["run_started"]


def test_noop_store_reads_empty() -> None:
    store = NoopStore()
    _exercise(store)
    assert store.load_state() == empty_state() == EMPTY
    assert store.read_progress() == {}
    assert store.read_current_run() is None
    assert store.start_attempt("01", {}) == 2  # keys still pair up
    with pytest.raises(ValueError):
        store.append_progress("0:1", "completed")


def test_read_only_file_store_sees_the_writers_updates(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    writer, reader = FileStore(root), FileStore(root)
    assert reader.load_state() == EMPTY
    writer.set_run_meta({"run_id": "R1"})
    writer.update_prompt("01", {"status": "running"})
    assert reader.load_state()["run_id"] == "R1"
    writer.set_run_meta({"run_id": "R2"})
    writer.update_prompt("01", {"status": "completed"})
    doc = reader.load_state()
    assert doc["run_id"] == "R2"
    assert doc["prompts"]["01"]["status"] == "completed"


def test_memory_finish_of_unknown_prompt_leaves_no_record() -> None:
    store = MemoryStore()
    with pytest.raises(ValueError):
        store.finish_attempt("09", 1, {"status": "failed"})
    assert store.load_state() == EMPTY


def test_state_json_status_rewrites_are_spaced_but_never_lost(tmp_path: Path) -> None:
    """A status change rewrites state.json at once when the last rewrite is older
    than STATE_WRITE_INTERVAL_S; otherwise it waits until that interval passed
    (flush() / the runner's tick), flush_summary() (before a sleep) or close()."""
    from prompt_runner.state import store as store_module

    root = tmp_path / ".prompt_runner"
    store = FileStore(root)

    def on_disk() -> dict[str, object]:
        doc = json.loads((root / "state.json").read_text())
        return {pid: rec["status"] for pid, rec in doc["prompts"].items()}

    store.update_prompt("01", {"status": "running"})
    assert on_disk() == {"01": "running"}  # first change: written at once
    store._summary.written_at = time.monotonic() + 3600  # as if rewritten just now
    store.update_prompt("01", {"status": "completed"})
    store.update_prompt("02", {"status": "running"})
    assert on_disk() == {"01": "running"}  # inside the interval: waiting
    assert store.load_state()["prompts"]["01"]["status"] == "completed"  # readers fold logs
    store.flush()
    assert on_disk() == {"01": "running"}  # flush() writes it only once due
    store.flush_summary()  # e.g. before a backoff sleep: written now
    assert on_disk() == {"01": "completed", "02": "running"}
    store._summary.written_at = time.monotonic() + 3600
    store.update_prompt("02", {"status": "completed"})
    store.flush_summary_due()
    assert on_disk()["02"] == "running"  # not due yet
    store._summary.written_at = time.monotonic() - store_module.STATE_WRITE_INTERVAL_S
    store.flush_summary_due()
    assert on_disk()["02"] == "completed"
    store._summary.written_at = time.monotonic() + 3600
    store.update_prompt("03", {"status": "running"})
    store.close()
    assert on_disk()["03"] == "running"


def test_a_writer_killed_before_its_spaced_rewrite_is_healed_by_the_next(tmp_path: Path) -> None:
    """The next writer re-derives every summary from the logs when it opens, also
    for prompts it will not touch (a resumed run skips completed ones)."""
    root = tmp_path / ".prompt_runner"
    dead = FileStore(root)
    dead.update_prompt("01", {"status": "running"})
    dead._summary.written_at = time.monotonic() + 3600  # the next rewrite is not due yet
    dead.update_prompt("01", {"status": "completed"})
    dead.flush()  # the log is durable; state.json still says running (then: kill -9)
    on_disk = json.loads((root / "state.json").read_text())
    assert on_disk["prompts"]["01"]["status"] == "running"
    FileStore(root).set_run_meta({"run_id": "R2"})
    on_disk = json.loads((root / "state.json").read_text())
    assert on_disk["prompts"]["01"]["status"] == "completed"


def test_the_writers_kept_record_equals_a_fold_of_its_log(tmp_path: Path) -> None:
    """The appending store keeps the running prompt's record instead of reading
    its log again; after every operation it equals what a reader's fold reads,
    for a new log, for one left by an earlier invocation, and across prompts."""
    root = tmp_path / ".prompt_runner"
    earlier = FileStore(root)
    earlier.update_prompt("01", {"status": "failed", "steered": True})
    earlier.close()
    store = FileStore(root)

    def check(prompt_id: str) -> None:
        mine = store.load_prompt(prompt_id)
        assert mine == FileStore(root).load_prompt(prompt_id)
        mine["attempts"].append({"mutated": True})  # a copy: the kept record is untouched
        mine["status"] = "mutated"
        assert store.load_prompt(prompt_id) == FileStore(root).load_prompt(prompt_id)

    for prompt_id in ("01", "02", "01"):
        store.update_prompt(prompt_id, {"status": "running", "run_id": "R2"})
        check(prompt_id)
        key = store.start_attempt(prompt_id, _attempt(1))
        check(prompt_id)
        store.finish_attempt(prompt_id, key, {"status": "passed", "report": {"ok": [1, 2]}})
        check(prompt_id)
        store.update_prompt(prompt_id, {"status": "completed", "commit": None})
        check(prompt_id)
    assert store.load_prompt("01")["steered"] is True  # from the earlier invocation's log
    assert len(store.load_prompt("01")["attempts"]) == 2
    store.close()


def test_a_store_that_does_not_append_reads_the_log_each_time(tmp_path: Path) -> None:
    root = tmp_path / ".prompt_runner"
    writer, reader = FileStore(root), FileStore(root)
    writer.update_prompt("01", {"status": "running"})
    assert reader.load_prompt("01")["status"] == "running"
    writer.update_prompt("01", {"status": "completed"})
    writer.flush()
    assert reader.load_prompt("01")["status"] == "completed"
    writer.close()
