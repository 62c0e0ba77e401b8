"""StateLayout names every path under .prompt_runner/, and nothing else spells one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.state.layout import STATE_DIR, StateLayout

SRC = Path(prompt_runner.__file__).parent

# The modules that name paths: a state root's, a workspace's, a fleet's.
LAYOUT_MODULES = ("layout.py", "layout_text.py", "workspace_layout.py", "fleet_layout.py")

# Path segments that exist only under a state root (a packet's own prompts/
# directory is the authoring layout, not state, and is not listed).
STATE_NAMES = {
    STATE_DIR,
    "run.pid",
    "progress.log",
    "state.json",
    "runs",
    "current.json",
    "journal.jsonl",
    "agent-control",
    "agents",
    "interventions",
    "amendments",
    "verifying.json",
    "control",
    "snapshot.json",
    "log.jsonl",
    "events.jsonl",
    "events.meta.json",
    "outcomes",
    "requests",
    "notifications.jsonl",
    "acceptance",
}


def test_the_layout_names_every_state_path(tmp_path: Path) -> None:
    layout = StateLayout.of_packet(tmp_path)
    root = tmp_path / ".prompt_runner"
    assert layout == StateLayout(root) and layout.root == root
    assert {
        layout.gitignore: ".gitignore",
        layout.run_pid: "run.pid",
        layout.progress_log: "progress.log",
        layout.state_json: "state.json",
        layout.prompts_dir: "prompts",
        layout.prompt_log("01"): "prompts/01.jsonl",
        layout.runs_dir: "runs",
        layout.current_run: "runs/current.json",
        layout.run_dir("R1"): "runs/R1",
        layout.journal("R1"): "runs/R1/journal.jsonl",
        layout.agent_control_dir("R1"): "runs/R1/agent-control",
        layout.logs_dir: "logs",
        layout.agents_dir: "agents",
        layout.notifications: "notifications.jsonl",
        layout.acceptance_dir: "acceptance",
        layout.watch_samples("S"): "acceptance/watch-S.jsonl",
        layout.watch_report("S"): "acceptance/watch-S.report.json",
        layout.interventions("01"): "interventions/01.jsonl",
        layout.amendments_dir: "amendments",
        layout.amendments("01"): "amendments/01.jsonl",
        layout.amendment_lock: "amendments/.lock",
        layout.verifying_marker: "amendments/verifying.json",
        layout.control_dir: "control",
        layout.control_tmp_dir: "control/tmp",
        layout.requests_dir: "control/requests",
        layout.outcomes_dir: "control/outcomes",
        layout.control_log: "control/log.jsonl",
        layout.snapshot: "control/snapshot.json",
        layout.events: "control/events.jsonl",
        layout.events_meta: "control/events.meta.json",
        layout.events_archive_dir: "control/events",
        layout.archived_events("R1"): "control/events/R1.jsonl",
    } == {root / rel: rel for rel in _relative_paths()}
    assert not root.exists()  # naming creates nothing


def _relative_paths() -> list[str]:
    return [
        ".gitignore",
        "run.pid",
        "progress.log",
        "state.json",
        "prompts",
        "prompts/01.jsonl",
        "runs",
        "runs/current.json",
        "runs/R1",
        "runs/R1/journal.jsonl",
        "runs/R1/agent-control",
        "logs",
        "agents",
        "notifications.jsonl",
        "acceptance",
        "acceptance/watch-S.jsonl",
        "acceptance/watch-S.report.json",
        "interventions/01.jsonl",
        "amendments",
        "amendments/01.jsonl",
        "amendments/.lock",
        "amendments/verifying.json",
        "control",
        "control/tmp",
        "control/requests",
        "control/outcomes",
        "control/log.jsonl",
        "control/snapshot.json",
        "control/events.jsonl",
        "control/events.meta.json",
        "control/events",
        "control/events/R1.jsonl",
    ]


def test_the_text_names_are_the_layouts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``layout_text`` (the hit paths' ``os.path`` names) names what the layout does."""
    from prompt_runner.state import layout_text

    monkeypatch.delenv("PROMPT_RUNNER_STATE_DIR", raising=False)
    layout = StateLayout.of_packet(tmp_path)
    root = layout_text.state_root(str(tmp_path))
    assert root == str(layout.root)
    for name in (
        "run_pid",
        "state_json",
        "current_run",
        "prompts_dir",
        "status_cache",
        "snapshot",
        "requests_dir",
    ):
        assert getattr(layout_text, name)(root) == str(getattr(layout, name)), name
    monkeypatch.setenv("PROMPT_RUNNER_STATE_DIR", str(tmp_path / "elsewhere"))
    assert layout_text.state_root(str(tmp_path)) == str(StateLayout.of_packet(tmp_path).root)
    monkeypatch.setenv("PROMPT_RUNNER_STATE_DIR", "relative/dir")
    assert layout_text.state_root(str(tmp_path)) is None  # of_packet raises UserError


def _spelled_state_paths(path: Path) -> list[str]:
    """``file:line: segment`` for each state path segment joined with ``/`` or kept
    in a module constant (or the state dir's name anywhere) in ``path``'s code --
    docstrings do not count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []
    for stmt in tree.body:
        value = stmt.value if isinstance(stmt, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Constant) and value.value in STATE_NAMES - {STATE_DIR}:
            found.append(f"{path.relative_to(SRC)}:{stmt.lineno}: {value.value}")
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            for side in (node.left, node.right):
                if isinstance(side, ast.Constant) and side.value in STATE_NAMES:
                    found.append(f"{path.relative_to(SRC)}:{node.lineno}: {side.value}")
        elif isinstance(node, ast.Constant) and node.value == STATE_DIR:
            found.append(f"{path.relative_to(SRC)}:{node.lineno}: {STATE_DIR}")
    return found


def test_no_module_but_the_layout_spells_a_state_path() -> None:
    layout_modules = {SRC / "state" / name for name in LAYOUT_MODULES}
    spelled = [
        hit
        for path in sorted(SRC.rglob("*.py"))
        if path not in layout_modules
        for hit in _spelled_state_paths(path)
    ]
    assert spelled == []
