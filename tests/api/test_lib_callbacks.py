"""The library's callbacks at run()'s boundary (new-user findings t7 #3, #8).

* ``commit_callback`` must return a :class:`prompt_runner.CommitResult`; one
  that returned ``None`` (the natural way to write one), ``True`` or a dict, or
  that raised, crashed run() with a bare ``AttributeError`` after its commit and
  left the prompt ``interrupted``. Now the prompt is recorded ``commit_failed``
  with a reason naming commit_callback, and run() returns its result.
* an ``async def`` callback was accepted and silently never ran (the run calls
  callbacks on its thread and never awaits them): it is refused up front.

Real runs of the simulated provider in a real git repo.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

import pytest

import prompt_runner
from prompt_runner.errors import ArgumentError
from tests.helpers.packets import make_packet

WRITE = {
    "commit": "feat: a",
    "verify": {"files_exist": ["a.txt"]},
    "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "hi"}]}]},
}


def _commit_then(result: Any) -> Any:
    def commit(prompt_id: str, message: str, repos: Any) -> Any:
        for path in repos.values():
            subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
            subprocess.run(["git", "-C", str(path), "commit", "-qm", message], check=True)
        if isinstance(result, BaseException):
            raise result
        return result

    return commit


@pytest.mark.parametrize(
    ("returned", "said"),
    [
        (None, "commit_callback returned NoneType, not a prompt_runner.CommitResult"),
        (True, "commit_callback returned bool, not a prompt_runner.CommitResult"),
        ({"app": "f" * 40}, "commit_callback returned dict, not a prompt_runner.CommitResult"),
        (RuntimeError("disk on fire"), "commit_callback raised RuntimeError: disk on fire"),
        # t8 #3: a short sha broke progress.log (a bare ValueError) and the state
        (prompt_runner.CommitResult({"app": "9f6264d"}), "not a full commit id"),
        (prompt_runner.CommitResult({"app": 5}), "not a full commit id"),  # type: ignore[dict-item]
        (prompt_runner.CommitResult({"nosuch": "f" * 40}), "not a target repo of the prompt"),
    ],
)
def test_a_commit_callback_that_misbehaves_is_the_prompt_s_commit_failure(
    tmp_path: Path, returned: Any, said: str
) -> None:
    packet = make_packet(tmp_path, {"01": WRITE, "02": WRITE})
    result = prompt_runner.run(packet, runtime_store="file", commit_callback=_commit_then(returned))
    state = prompt_runner.status(packet)
    assert state["prompts"]["01"]["status"] == "commit_failed", state["prompts"]
    assert "02" not in state["prompts"] or state["prompts"]["02"]["status"] != "completed"
    assert (result.status, result.exit_code) == ("halted", 3), result  # as any refused commit
    doc = str(state["prompts"]["01"]) + str(result.message)
    assert said in doc, doc


def test_a_commit_callback_returning_a_commit_result_still_commits(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    repo = tmp_path / "repo"

    def commit(prompt_id: str, message: str, repos: Any) -> prompt_runner.CommitResult:
        _commit_then(None)(prompt_id, message, repos)
        sha = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        return prompt_runner.CommitResult({"app": sha})

    assert prompt_runner.run(packet, commit_callback=commit).exit_code == 0


async def _async_observer(*_: Any) -> None:
    raise AssertionError("never called")


class _AsyncCallable:
    async def __call__(self, *_: Any) -> None:
        raise AssertionError("never called")


@pytest.mark.parametrize(
    "callback",
    [_async_observer, _AsyncCallable(), functools.partial(_async_observer, "x")],
    ids=["async-def", "async-__call__", "partial"],
)
@pytest.mark.parametrize("name", ["on_prompt_completed", "on_event", "commit_callback"])
def test_an_async_callback_is_refused_before_the_run(
    tmp_path: Path, callback: Any, name: str
) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    with pytest.raises(ArgumentError, match=rf"run\({name}=\.\.\.\).*async function"):
        prompt_runner.run(packet, runtime_store="file", **{name: callback})
    assert not (packet / ".prompt_runner" / "runs").exists()  # nothing ran


def test_a_plain_callable_object_is_still_accepted(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": WRITE})
    seen: list[str] = []

    class Observer:
        def __call__(self, prompt_id: str, record: Any) -> None:
            seen.append(prompt_id)

    assert prompt_runner.run(packet, on_prompt_completed=Observer()).exit_code == 0
    assert seen == ["01"]
