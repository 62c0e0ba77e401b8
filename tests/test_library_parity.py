"""Library parity (issue 14): every CLI command is one library call, exported from
``prompt_runner`` with a typed result, and the CLI prints that call's result.

Each public name is imported from the package and called twice in one process
on real packets (a second call finds the state the first one left: module
state, caches, a name replaced by a submodule...).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import inspect
import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.cli.main import main
from prompt_runner.cli.parser import build_parser
from prompt_runner.errors import ArgumentError, UserError
from tests.helpers.packets import make_packet

WRITE = {
    "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "a"}]}]},
    "verify": {
        "files_exist": ["a.txt"],
        "contains": [{"path": "a.txt", "text": "a"}],
        "files_absent": ["gone.txt"],
    },
}
NEVER = {"verify": {"files_exist": ["never.txt"]}, "recovery": {"repair": {"enabled": False}}}

COMMANDS = {
    # CLI command -> the library call its handler makes
    "plan": "plan",
    "run": "run",
    "verify": "verify",
    "repair": "repair",
    "status": "status",
    "list": "list_prompts",
    "watch": "watch_samples",
    "capabilities": "capabilities",
    "init": "init",
    "profile new": "new_profile",
    "profile list": "list_profiles",
    "template list": "list_templates",
    "packet new": "new_packet",
    "packet add-repo": "add_repo",
    "repo add": "add_repo",
    "packet explain": "explain",
    "packet lint": "lint",
    "packet doctor": "doctor",
    "packet preflight": "preflight",
    "packet migrate-contracts": "migrate_contracts",
    "prompt new": "new_prompt",
    "checklist sync": "checklist_sync",
    "schema": "schema",
    "control status": "control_status",
    "control events": "control_events",
    "control log": "control_log",
    "control view": "control_view",
    "control steer": "control_steer",
    "control wake": "control_wake",
    "control contract": "control_contract",
    "control amend": "control_amend",
    "control relax": "control_relax",
    "dashboard": "serve_dashboard",
    "start": "start",
    "stop": "stop",
    "workspace plan": "plan_workspace",
    "workspace prepare": "prepare_workspace",
    "workspace doctor": "doctor_workspace",
    "workspace import-state": "import_workspace_state",
    "workspace status": "workspace_status",
    "fleet plan": "plan_fleet",
    "fleet submit": "submit_fleet",
    "fleet status": "fleet_status",
    "fleet stop": "stop_fleet",
    "fleet watch": "watch_fleet",
    "fleet worker": "run_fleet_worker",
}
NOT_LIBRARY = {
    "version": "prompt_runner.__version__",
    "demo": "sets up an example packet and calls run",
    "agent-control progress": "the agent's side of a session, authenticated by its environment",
    "agent-control continue": "ditto",
    "agent-control repeat": "ditto",
    "agent-control finish": "ditto",
    "agent-control blocked": "ditto",
}


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf command of the CLI as ``("packet lint", its parser)``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                full = f"{prefix} {name}".strip()
                leaves = list(_commands(sub, full))
                yield from leaves or [(full, sub)]


def test_every_cli_command_is_one_exported_library_call() -> None:
    found = dict(_commands(build_parser()))
    assert set(found) == set(COMMANDS) | set(NOT_LIBRARY)
    for command, name in COMMANDS.items():
        assert name in prompt_runner.__all__ and name in dir(prompt_runner), name
        assert callable(getattr(prompt_runner, name)), name
        # the handler calls that function (thin CLI): its source names it
        module_name, func_name = found[command].get_default("handler").split(":")
        handler = getattr(importlib.import_module(f"prompt_runner.cli.{module_name}"), func_name)
        assert f"{name}(" in inspect.getsource(handler), (command, name)
        assert inspect.getdoc(getattr(prompt_runner, name)), name


def _frozen(result: Any) -> None:
    """A typed result cannot be changed after the call."""
    field = (
        dataclasses.fields(result)[0].name
        if dataclasses.is_dataclass(result)
        else result._fields[0]
    )
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError)):
        setattr(result, field, None)


def _twice(call: Callable[[int], Any]) -> list[Any]:
    return [call(0), call(1)]


def test_each_call_works_twice_in_one_process(tmp_path: Path) -> None:
    pr = prompt_runner
    packet = make_packet(tmp_path, {"01": WRITE, "02": {}})
    failing = make_packet(tmp_path / "f", {"01": NEVER}, name="failing")

    # running
    for p in _twice(lambda i: pr.plan(packet)):
        assert isinstance(p, pr.Plan) and p.selected == ("01", "02")
    for result in _twice(lambda i: pr.run(packet, runtime_store="file", all=True)):
        assert isinstance(result, pr.RunResult) and result.exit_code == 0
    for result in _twice(lambda i: pr.repair(packet, "01", runtime_store="file")):
        assert result.prompts == {"01": "completed"}
    for doc in _twice(lambda i: pr.verify(packet)):
        assert doc["pass"] is True
    for state in _twice(lambda i: pr.status(packet)):
        assert state["prompts"]["01"]["status"] == "completed"
        assert state["runner"] == {"alive": False}
    for sample in _twice(lambda i: pr.watch_sample(packet)):
        assert isinstance(sample, pr.WatchSample) and sample.runner == "down"
        assert sample.line.startswith("WATCH ") and sample.to_dict()["schema"]
        _frozen(sample)
    for samples in _twice(lambda i: list(pr.watch_samples(packet, once=True))):
        assert len(samples) == 1 and samples[0].repos == 1
    assert pr.RunResult and pr.RunOptions

    # inspecting
    for listing in _twice(lambda i: pr.list_prompts(packet)):
        assert isinstance(listing, pr.PromptList)
        assert [(p.id, p.status) for p in listing.prompts] == [
            ("01", "completed"),
            ("02", "completed"),
        ]
        _frozen(listing)
    for explained in _twice(lambda i: pr.explain(packet)):
        assert isinstance(explained, pr.PacketExplanation) and explained.packet == "demo"
        assert "files_exist" in explained.prompts[0].verify
        _frozen(explained)
    reports = _twice(lambda i: pr.lint(packet, strict=i == 1))
    assert all(isinstance(r, pr.LintReport) for r in reports)
    assert [r.strict for r in reports] == [False, True]
    for doctor in _twice(lambda i: pr.doctor(packet)):
        assert isinstance(doctor, pr.DoctorReport) and doctor.runtime_ready
        assert not doctor.authoring_ready  # 02 has no verify items
        _frozen(doctor)
    for pre in _twice(lambda i: pr.preflight(pr.load_packet(packet) if i else packet)):
        assert isinstance(pre, pr.PreflightReport) and pre.runtime_ready
        _frozen(pre)
    for sync in _twice(lambda i: pr.checklist_sync(packet)):
        assert isinstance(sync, pr.ChecklistSync)
        assert [c.prompt_id for c in sync.unverified] == ["02"]
        assert all(path.is_file() for path in sync.written)
    for caps in _twice(lambda i: pr.capabilities()):
        assert isinstance(caps, pr.Capabilities) and "simulated" in caps.providers
    for doc in _twice(lambda i: pr.lint_packet(packet).to_dict()):
        assert doc["packet"] == "demo"
    for doc in _twice(lambda i: pr.doctor_report(packet)):
        assert doc["runtime_ready"] is True
    for doc in _twice(lambda i: pr.preflight_report(packet)):
        assert doc["runtime_ready"] is True
    for doc in _twice(lambda i: pr.sample(packet)):
        assert doc["runner"] == "down"
    for loaded in _twice(lambda i: pr.load_packet(packet)):
        assert isinstance(loaded, pr.Packet)

    # authoring
    first, second = _twice(lambda i: pr.init())
    assert isinstance(first, pr.InitResult) and first.created and not second.created
    assert second.default_profile == "simulated-default"
    for path in _twice(
        lambda i: pr.new_profile(f"fast-{i}", provider="simulated", retry_attempts=2)
    ):
        assert path.is_file() and "max_attempts: 2" in path.read_text()
    for profiles in _twice(lambda i: pr.list_profiles()):
        assert pr.ProfileEntry("fast-1", "home") in profiles
    for templates in _twice(lambda i: pr.list_templates(packet)):
        assert all(isinstance(t, pr.TemplateEntry) for t in templates)
        assert {"default", "from-adr"} <= {t.name for t in templates}
    made = _twice(
        lambda i: pr.new_packet(f"made{i}", root=tmp_path / "made", profile="simulated-default")
    )
    assert all((m / "prompt_runner_packet.md").is_file() for m in made)
    (tmp_path / "docs").mkdir()
    for manifest in _twice(lambda i: pr.add_repo(made[0], f"docs{i}", str(tmp_path / "docs"))):
        assert manifest.name == "prompt_runner_packet.md"
    for path in _twice(lambda i: pr.new_prompt(made[0], f"0{i + 1}", targets=["docs0"])):
        assert path.is_file()
    for migration in _twice(lambda i: pr.migrate_contracts(packet)):
        assert isinstance(migration, pr.MigrationReport) and migration.converted == 0
    for doc in _twice(lambda i: pr.schema(("manifest", "prompt")[i])):
        assert doc["$schema"].startswith("https://json-schema.org/")

    # watching and steering
    for snap in _twice(lambda i: pr.control_status(packet)):
        assert isinstance(snap, pr.ControlSnapshot) and snap.status == "completed"
        assert snap.to_dict()["run_id"] == snap.run_id
        _frozen(snap)
    for events in _twice(lambda i: list(pr.control_events(packet))):
        assert events[-1]["kind"] == "run_finished"
    for receipt in _twice(lambda i: pr.control_view(packet, diff=("stat", "full")[i])):
        assert isinstance(receipt, pr.ViewReceipt) and receipt.applies_to == "next_run"
    for entries in _twice(lambda i: list(pr.control_log(packet))):
        assert isinstance(entries, list)
    assert pr.run(failing, runtime_store="file").exit_code == 1
    for steer in _twice(lambda i: pr.control_steer(failing, f"try again {i}", author="ada")):
        assert isinstance(steer, pr.SteerReceipt) and steer.live is False
    for view in _twice(lambda i: pr.control_contract(packet, "01")):
        assert isinstance(view, pr.ContractView) and view.prompt_id == "01"
    for amendment in _twice(
        lambda i: pr.control_amend(
            packet, "01", add={"files_exist": [f"more{i}.txt"]}, reason="needed"
        )
    ):
        assert isinstance(amendment, pr.Amendment) and amendment.record["prompt"] == "01"
    for amendment in _twice(
        lambda i: pr.control_relax(
            packet, "01", drop=[("contains", "files_absent")[i]], reason="wrong", confirm=True
        )
    ):
        assert amendment.record["operation"] == "drop" and amendment.diff
    assert "contains" not in pr.control_contract(packet, "01").contract
    with pytest.raises(pr.UserError):
        pr.control_relax(packet, "01", drop=["files_exist"], reason="no confirm")
    assert "rejected" in {e.get("outcome") for e in pr.control_log(packet)}


def _cli_json(*args: object) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main([str(a) for a in args])
    return json.loads(out.getvalue())


def test_the_cli_prints_the_library_result(tmp_path: Path) -> None:
    pr = prompt_runner
    packet = make_packet(tmp_path, {"01": WRITE, "02": {}})
    assert pr.run(packet, runtime_store="file").exit_code == 0
    assert _cli_json("packet", "explain", packet) == pr.explain(packet).to_dict()
    assert _cli_json("packet", "lint", packet, "--json") == pr.lint(packet).to_dict()
    assert _cli_json("packet", "doctor", packet, "--json") == pr.doctor(packet).to_dict()
    assert _cli_json("packet", "preflight", packet) == pr.preflight(packet).to_dict()
    assert _cli_json("list", packet, "--json") == pr.list_prompts(packet).to_dict()
    assert _cli_json("capabilities", "--json") == pr.capabilities().to_dict()
    assert _cli_json("status", packet, "--json") == pr.status(packet)
    assert _cli_json("control", "status", packet, "--json") == pr.control_status(packet).to_dict()
    assert _cli_json("control", "contract", packet, "01", "--json") == (
        pr.control_contract(packet, "01").to_dict()
    )
    assert _cli_json("profile", "list", "--json") == [e._asdict() for e in pr.list_profiles()]
    assert _cli_json("checklist", "sync", packet, "--json") == pr.checklist_sync(packet).to_dict()
    watched = _cli_json("watch", packet, "--once", "--json")
    expected = pr.watch_sample(packet).to_dict()
    assert {k: v for k, v in watched.items() if k not in ("at", "quiet_minutes")} == {
        k: v for k, v in expected.items() if k not in ("at", "quiet_minutes")
    }


def test_bad_arguments_are_user_errors_naming_the_call(tmp_path: Path) -> None:
    for call in (prompt_runner.explain, prompt_runner.doctor, prompt_runner.status):
        with pytest.raises(UserError, match=r"\(packet=\.\.\.\): must be a packet directory"):
            call(3)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="not a packet"):
        prompt_runner.list_prompts(tmp_path)
    with pytest.raises(UserError, match="interval"):
        next(prompt_runner.watch_samples(tmp_path, interval_s=0))


def test_repair_reads_the_record_the_cli_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a CLI run, ``prompt-runner repair 01`` re-ran the completed prompt but
    ``prompt_runner.repair(packet, "01")`` (the memory store, empty) said it had
    "no recorded failure to repair"."""
    packet = make_packet(tmp_path, {"01": WRITE, "02": {}})
    assert main(["run", str(packet), "01", "--no-commit"]) == 0
    progress = (packet / ".prompt_runner" / "progress.log").read_text()
    result = prompt_runner.repair(packet, "01")
    assert (result.exit_code, result.prompts) == (0, {"01": "completed"})
    assert result.message == "Repair of 01: completed."
    # the memory store: the repair recorded nothing in the packet
    assert (packet / ".prompt_runner" / "progress.log").read_text() == progress
    assert main(["repair", "--packet", str(packet), "01", "--no-commit"]) == 0
    # a prompt never run: both refuse it with the same sentence
    with pytest.raises(UserError) as caught:
        prompt_runner.repair(packet, "02")
    assert "prompt 02 has no recorded failure to repair" in str(caught.value)
    capsys.readouterr()
    assert main(["repair", "--packet", str(packet), "02", "--no-commit"]) == 2
    assert capsys.readouterr().err == f"error: {caught.value}\n"


def _public_calls() -> dict[str, Callable[..., Any]]:
    return {
        name: getattr(prompt_runner, name)
        for name in prompt_runner.__all__
        if inspect.isfunction(getattr(prompt_runner, name))
    }


def _required(func: Callable[..., Any], packet: Path) -> list[Any]:
    """Positional values for ``func``'s required arguments (a packet, an id, text)."""
    fill = {"packet": packet, "path": packet, "prompt_id": "01"}
    return [
        fill.get(name, "x")
        for name, p in inspect.signature(func).parameters.items()
        if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD
    ]


def test_every_public_call_refuses_a_misspelt_keyword(tmp_path: Path) -> None:
    """``repair(P, ids="01")`` was a bare TypeError (missing prompt_id), and so was
    a misspelt keyword of every call but run/plan/repair's options."""
    packet = make_packet(tmp_path, {"01": WRITE})
    calls = _public_calls()
    assert len(calls) >= 35, sorted(calls)
    for name, func in calls.items():
        keywords = [
            n
            for n, p in inspect.signature(func).parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        wrong = f"{keywords[-1]}x" if keywords else "verbose"
        message = _refused(func, packet, wrong, True)
        called = func.__name__  # lint_packet is lint
        assert message.startswith(f"{called}(): unknown argument '{wrong}'"), (name, message)
        expected = f"did you mean {keywords[-1]}=...?" if keywords else "takes no arguments"
        assert expected in message, message
    with pytest.raises(ArgumentError) as caught:
        prompt_runner.repair(packet, ids="01")
    assert str(caught.value).startswith(
        "repair(prompt_id=...): missing argument 'prompt_id'; "
        "repair re-runs one prompt: pass its id as prompt_id"
    )
    with pytest.raises(ArgumentError, match=r"^status\(packet=\.\.\.\): missing argument"):
        prompt_runner.status()  # type: ignore[call-arg]
    with pytest.raises(ArgumentError, match=r"^lint\(\): takes at most 1 positional"):
        prompt_runner.lint(packet, True)  # type: ignore[misc]


SCALARS = {"bool", "int", "float", "None"}
SCALAR_ARGUMENTS = {
    # every bool, int or float argument of a public call (the audit: a new one
    # must be listed here, and is then checked like these)
    "lint": {"strict": bool},
    "lint_packet": {"strict": bool},
    "migrate_contracts": {"write": bool},
    "add_repo": {"default": bool},
    "preflight_report": {"needs_git": bool, "needs_identity": bool, "check_ignored": bool},
    "watch_sample": {"now": float},
    "sample": {"now": float},
    "watch_samples": {"interval_s": float, "once": bool},
    "watch_for": {"require_running": bool, "require_progress": bool},
    "control_events": {"from_current": bool, "follow": bool},
    "control_log": {"follow": bool},
    "control_amend": {"persist": bool},
    "control_relax": {"confirm": bool, "persist": bool},
    "control_wake": {"wait_s": float},
    "serve_dashboard": {"port": int, "open_browser": bool},
    "start": {"new_run": bool, "remaining": bool, "live_timeout_s": float},
    "stop": {"after_prompt": bool, "grace_s": float},
    "submit_fleet": {"poll_s": float},
    "stop_fleet": {"after_prompt": bool, "grace_s": float},
    "watch_fleet": {
        "for_s": float,
        "every_s": float,
        "require_running": bool,
        "require_progress": bool,
        "progress_timeout_s": float,
    },
    "fleet_steer": {"wait_s": float},
    "run_fleet_worker": {"slots": int, "tls": bool},
    **{
        name: {
            "resume_attempts": int,
            "retry_attempts": int,
            "retry_base_delay_ms": int,
            "retry_max_delay_ms": int,
            "repair_attempts": int,
            "retry_jitter": bool,
            "auto_repair": bool,
        }
        | ({"force": bool} if name == "new_profile" else {})
        for name in ("new_profile", "new_packet")
    },
}


def test_bool_and_number_arguments_take_nothing_else(tmp_path: Path) -> None:
    """``migrate_contracts(P, write="yes")`` took the string for True."""
    packet = make_packet(tmp_path, {"01": WRITE})
    calls = _public_calls()
    found = {
        name: {
            arg: p.annotation
            for arg, p in inspect.signature(func).parameters.items()
            if {part.strip() for part in str(p.annotation).split("|")} <= SCALARS
        }
        for name, func in calls.items()
    }
    assert {name: set(args) for name, args in found.items() if args} == {
        name: set(args) for name, args in SCALAR_ARGUMENTS.items()
    }
    for name, args in SCALAR_ARGUMENTS.items():
        for arg, kind in args.items():
            want = "True or False" if kind is bool else "(a number|an integer)"
            for wrong in ["yes", 1] if kind is bool else ["3", True]:
                message = _refused(calls[name], packet, arg, wrong)
                called = calls[name].__name__
                assert re.match(rf"{called}\({arg}=\.\.\.\): must be {want}", message), message
    # what they take still works: a whole number for a float, None where allowed
    assert prompt_runner.watch_sample(packet, now=0).runner == "down"
    assert prompt_runner.migrate_contracts(packet, write=False).written is False
    assert prompt_runner.sample(packet, now=None)["runner"] == "down"


def _refused(func: Callable[..., Any], packet: Path, arg: str, wrong: Any) -> str:
    """The ArgumentError's sentence for ``func(..., arg=wrong)`` (the first item of
    a generator taken too)."""
    with pytest.raises(ArgumentError) as caught:
        result = func(*_required(func, packet), **{arg: wrong})
        if inspect.isgenerator(result):
            next(result)
    assert isinstance(caught.value, TypeError) and caught.value.exit_code == 2
    return str(caught.value)
