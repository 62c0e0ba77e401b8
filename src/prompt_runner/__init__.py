"""Prompt Runner: run packets of prompts through coding agents; a contract decides done.

Public API (imported lazily so ``prompt-runner --version`` stays fast). Every
CLI command is one of these calls (the CLI only parses and renders)::

    import prompt_runner
    plan = prompt_runner.plan("path/to/packet", provider="simulated")
    result = prompt_runner.run("path/to/packet", remaining=True)
    state = prompt_runner.status("path/to/packet")
    report = prompt_runner.verify("path/to/packet", ids=["01"])
    result = prompt_runner.repair("path/to/packet", "02")
    findings = prompt_runner.lint("path/to/packet").to_dict()
    line = prompt_runner.watch_sample("path/to/packet").line   # one watch sample
    snap = prompt_runner.control_status("path/to/packet")      # the live run

============================  =====================================================
CLI                           library (result)
============================  =====================================================
``plan``, ``run``, ``repair``  :func:`plan` (Plan), :func:`run`, :func:`repair` (RunResult)
``status``, ``verify``        :func:`status`, :func:`verify` (the JSON documents, dicts)
``list``                      :func:`list_prompts` (PromptList)
``watch``                     :func:`watch_sample`, :func:`watch_samples` (WatchSample)
``watch --for --every``       :func:`watch_for` (WatchReport)
``packet explain``            :func:`explain` (PacketExplanation)
``packet lint``               :func:`lint` (LintReport)
``packet doctor``             :func:`doctor` (DoctorReport)
``packet preflight``          :func:`preflight` (PreflightReport)
``checklist sync``            :func:`checklist_sync` (ChecklistSync)
``capabilities``              :func:`capabilities` (Capabilities)
``init``                      :func:`init` (InitResult)
``profile new`` / ``list``    :func:`new_profile` (Path), :func:`list_profiles` (ProfileEntry)
``template list``             :func:`list_templates` (TemplateEntry)
``packet new``, ``add-repo``  :func:`new_packet` (Path), :func:`add_repo` (Path)
``prompt new``                :func:`new_prompt` (Path)
``packet migrate-contracts``  :func:`migrate_contracts` (MigrationReport)
``schema``                    :func:`schema` (dict: a JSON Schema)
``control status``            :func:`control_status` (ControlSnapshot)
``control events`` / ``log``  :func:`control_events`, :func:`control_log` (records)
``control view`` / ``steer``  :func:`control_view` (ViewReceipt), :func:`control_steer`
                              (SteerReceipt)
``control wake``              :func:`control_wake` (WakeReceipt)
``control contract``          :func:`control_contract` (ContractView)
``control amend`` / ``relax``  :func:`control_amend`, :func:`control_relax` (Amendment)
``dashboard``                 :func:`serve_dashboard` (DashboardAddress), :func:`dashboard_app`
                              (an ASGI app)
``workspace plan|prepare``    :func:`plan_workspace` (WorkspacePlan), :func:`prepare_workspace`
                              (PrepareResult); :func:`load_workspace` (Workspace)
``workspace doctor``          :func:`doctor_workspace` (WorkspaceDoctorReport)
``workspace import-state``    :func:`import_workspace_state` (ImportReceipt)
``workspace status``,         :func:`workspace_status` (the status document, a dict)
``status --workspace``
``fleet plan|submit``         :func:`plan_fleet` (FleetPlan), :func:`submit_fleet`
                              (SubmitResult); :func:`load_fleet` (Fleet)
``fleet status|stop``         :func:`fleet_status` (FleetStatus), :func:`stop_fleet`
                              (FleetStopResult)
``fleet watch|worker``        :func:`watch_fleet` (the report, a dict),
                              :func:`run_fleet_worker` (Temporal; until interrupted)
``control steer --fleet``     :func:`fleet_steer` (FleetSteerReceipt)
``start``, ``stop``           :func:`start` (StartResult), :func:`stop` (StopReport): a
                              detached, supervised run of a workspace or a packet
============================  =====================================================

Every call checks its arguments first: an unknown or misspelt keyword, a
missing argument, or a value of the wrong type (``write="yes"`` for a bool) is
an :class:`ArgumentError` naming the argument and the fix
(:mod:`prompt_runner.api_calls`).

Each typed result is immutable and has ``to_dict()``, the document the CLI
prints with ``--json``. The names above are functions whatever was imported
before: no submodule shares a public name (a submodule named ``plan`` would
replace the ``plan`` function on the package the first time anything imported
it, so the execution plan's module is ``prompt_runner.planning``).
"""

from __future__ import annotations

__version__ = "0.1.0"

_API = {
    # running
    "run": "prompt_runner.api",
    "plan": "prompt_runner.api",
    "verify": "prompt_runner.api",
    "repair": "prompt_runner.api",
    "status": "prompt_runner.api_status",
    "watch_sample": "prompt_runner.api_watch",
    "watch_samples": "prompt_runner.api_watch",
    "watch_for": "prompt_runner.api_watch",
    "RunOptions": "prompt_runner.planning",
    "Plan": "prompt_runner.planning",
    "RunResult": "prompt_runner.runner.result",
    "CommitResult": "prompt_runner.committer",
    "WatchSample": "prompt_runner.api_watch",
    "WatchReport": "prompt_runner.api_watch",
    # inspecting a packet
    "load_packet": "prompt_runner.api_packet",
    "Packet": "prompt_runner.packet.loader",
    "list_prompts": "prompt_runner.api_prompts",
    "explain": "prompt_runner.api_packet",
    "lint": "prompt_runner.api_packet",
    "doctor": "prompt_runner.api_packet",
    "preflight": "prompt_runner.api_packet",
    "checklist_sync": "prompt_runner.api_prompts",
    "capabilities": "prompt_runner.api_prompts",
    "PromptList": "prompt_runner.api_prompts",
    "PacketExplanation": "prompt_runner.api_packet",
    "LintReport": "prompt_runner.packet.lint",
    "DoctorReport": "prompt_runner.api_packet",
    "PreflightReport": "prompt_runner.api_packet",
    "ChecklistSync": "prompt_runner.api_prompts",
    "Capabilities": "prompt_runner.api_prompts",
    # the dict-returning forms of lint, doctor, preflight and watch (kept)
    "lint_packet": "prompt_runner.api_packet",
    "doctor_report": "prompt_runner.api_packet",
    "preflight_report": "prompt_runner.api_packet",
    "sample": "prompt_runner.api_packet",
    # authoring
    "init": "prompt_runner.api_authoring",
    "new_profile": "prompt_runner.api_authoring",
    "list_profiles": "prompt_runner.api_authoring",
    "list_templates": "prompt_runner.api_authoring",
    "new_packet": "prompt_runner.api_authoring",
    "add_repo": "prompt_runner.api_authoring",
    "new_prompt": "prompt_runner.api_authoring",
    "migrate_contracts": "prompt_runner.api_authoring",
    "schema": "prompt_runner.api_authoring",
    "InitResult": "prompt_runner.api_authoring",
    "ProfileEntry": "prompt_runner.api_authoring",
    "TemplateEntry": "prompt_runner.api_authoring",
    "MigrationReport": "prompt_runner.packet.migrate",
    # watching and steering a live run
    "control_status": "prompt_runner.api_control",
    "control_events": "prompt_runner.api_control",
    "control_log": "prompt_runner.api_control",
    "control_view": "prompt_runner.api_control",
    "control_steer": "prompt_runner.api_control",
    "control_wake": "prompt_runner.api_control",
    "control_contract": "prompt_runner.api_contract",
    "control_amend": "prompt_runner.api_contract",
    "control_relax": "prompt_runner.api_contract",
    "ControlSnapshot": "prompt_runner.api_control",
    "ViewReceipt": "prompt_runner.api_control",
    "SteerReceipt": "prompt_runner.api_control",
    "WakeReceipt": "prompt_runner.api_control",
    "ContractView": "prompt_runner.api_contract",
    "Amendment": "prompt_runner.api_contract",
    # the live web dashboard (the `dashboard` extra)
    "serve_dashboard": "prompt_runner.api_dashboard",
    "dashboard_app": "prompt_runner.api_dashboard",
    "DashboardAddress": "prompt_runner.api_dashboard",
    # operator workspaces (docs/workspaces.md)
    "load_workspace": "prompt_runner.api_workspace",
    "resolve_workspace": "prompt_runner.api_workspace",
    "plan_workspace": "prompt_runner.api_workspace",
    "prepare_workspace": "prompt_runner.api_workspace",
    "doctor_workspace": "prompt_runner.api_workspace",
    "import_workspace_state": "prompt_runner.api_workspace",
    "workspace_status": "prompt_runner.api_workspace",
    "Workspace": "prompt_runner.api_workspace",
    "WorkspacePlan": "prompt_runner.api_workspace",
    "PrepareResult": "prompt_runner.api_workspace",
    "WorkspaceDoctorReport": "prompt_runner.api_workspace",
    "ImportReceipt": "prompt_runner.api_workspace",
    # detached, supervised runs (docs/workspaces.md, "Detached runs")
    "start": "prompt_runner.api_supervise",
    "stop": "prompt_runner.api_supervise",
    "StartResult": "prompt_runner.api_supervise",
    "StopReport": "prompt_runner.api_supervise",
    # fleets: many workspaces at once, here or on Temporal (docs/fleet.md)
    "load_fleet": "prompt_runner.api_fleet",
    "plan_fleet": "prompt_runner.api_fleet",
    "submit_fleet": "prompt_runner.api_fleet",
    "fleet_status": "prompt_runner.api_fleet",
    "stop_fleet": "prompt_runner.api_fleet",
    "watch_fleet": "prompt_runner.api_fleet",
    "fleet_steer": "prompt_runner.api_fleet",
    "run_fleet_worker": "prompt_runner.api_fleet",
    "Fleet": "prompt_runner.api_fleet",
    "FleetPlan": "prompt_runner.api_fleet",
    "FleetStatus": "prompt_runner.api_fleet",
    "SubmitResult": "prompt_runner.api_fleet",
    "FleetStopResult": "prompt_runner.api_fleet",
    "FleetSteerReceipt": "prompt_runner.api_fleet",
    # errors
    "PromptRunnerError": "prompt_runner.errors",
    "UserError": "prompt_runner.errors",
    "ArgumentError": "prompt_runner.errors",
    "CallbackError": "prompt_runner.errors",
}

__all__ = ["__version__", *_API]


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})


def __getattr__(name: str) -> object:
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'prompt_runner' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
