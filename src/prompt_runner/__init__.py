"""Prompt Runner: run packets of prompts through coding agents; a contract decides done.

Public API (imported lazily so ``prompt-runner --version`` stays fast)::

    import prompt_runner
    plan = prompt_runner.plan("path/to/packet", provider="simulated")
    result = prompt_runner.run("path/to/packet", remaining=True)
    state = prompt_runner.status("path/to/packet")
    report = prompt_runner.verify("path/to/packet", ids=["01"])
    result = prompt_runner.repair("path/to/packet", "02")
    findings = prompt_runner.lint_packet("path/to/packet").to_dict()
    line = prompt_runner.sample("path/to/packet")    # one watch sample

The names above are functions whatever was imported before: the execution
plan's module is ``prompt_runner.planning`` (a submodule named ``plan`` would
replace the ``plan`` function on the package the first time anything imported
it).
"""

from __future__ import annotations

__version__ = "0.1.0"

_API = {
    "run": "prompt_runner.api",
    "plan": "prompt_runner.api",
    "status": "prompt_runner.api",
    "verify": "prompt_runner.api",
    "repair": "prompt_runner.api",
    "load_packet": "prompt_runner.packet.loader",
    "lint_packet": "prompt_runner.packet.lint",
    "doctor_report": "prompt_runner.packet.doctor",
    "preflight_report": "prompt_runner.packet.preflight",
    "sample": "prompt_runner.watch",
    "RunOptions": "prompt_runner.planning",
    "RunResult": "prompt_runner.runner.engine",
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
