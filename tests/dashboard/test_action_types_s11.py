"""The dashboard's actions take exactly their parameters, of their JSON types (new-user
tester nu11 r5): ``stop`` with ``{"after_prompt": true}`` was sent as a stop *now* (the
running prompt ended ``interrupted``), ``"yes"``, ``1`` and ``null`` too, and an
``author`` that was not a string was silently replaced. Now ``after_prompt: true``
stops once the current prompt has ended, and a parameter an action does not take or
of the wrong type is refused with 400 naming it and the fix, nothing sent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from prompt_runner.control.store import ControlStore
from tests.dashboard.conftest import Dashboard, make_packet, serve, start_run, wait_for


def _passes(name: str, delay_ms: int) -> dict[str, Any]:
    return {
        "simulate": {
            "attempts": [
                {
                    "delay_ms": delay_ms,
                    "messages": [f"writing {name}"],
                    "writes": [{"path": name, "text": "x\n"}],
                }
            ]
        },
        "verify": {"files_exist": [name]},
    }


def _post(dash: Dashboard, action: str, body: dict[str, Any]) -> httpx.Response:
    csrf = re.search(r'name="pr-csrf" content="([^"]+)"', httpx.get(dash.base + "/").text)
    assert csrf
    headers = {"Origin": f"http://127.0.0.1:{dash.port}", "X-CSRF-Token": csrf.group(1)}
    return httpx.post(f"{dash.base}/api/runs/demo/actions/{action}", json=body, headers=headers)


def _running(dash: Dashboard) -> bool:
    row = httpx.get(dash.base + "/api/overview").json()["runs"][0]
    return row["state"] == "running" and row["live"] is True


def _statuses(dash: Dashboard) -> dict[str, str]:
    return {p["id"]: p["status"] for p in httpx.get(dash.base + "/api/runs/demo").json()["prompts"]}


def _stops(packet: Path) -> list[dict[str, Any]]:
    log = ControlStore(packet / ".prompt_runner").read_log()
    return [e for e in log if e.get("command") == "stop"]


def test_stop_with_after_prompt_true_lets_the_running_prompt_complete(
    tmp_path: Path, stop_later: Any
) -> None:
    packet = make_packet(tmp_path, {"01": _passes("a.txt", 3000), "02": _passes("b.txt", 0)})
    with serve(packet) as dash:
        run = stop_later(start_run(packet, "--no-commit"))
        wait_for(lambda: _running(dash))
        sent = _post(dash, "stop", {"after_prompt": True, "author": "ops"})
        assert sent.status_code == 200, sent.text
        assert (sent.json()["action"], sent.json()["state"]) == ("stop", "pending")
        run.wait(timeout=60)
        statuses = _statuses(dash)
    (entry,) = _stops(packet)
    assert (entry["params"], entry["author"], entry["outcome"]) == (
        {"after_prompt": True},
        "ops",
        "applied",
    )
    assert statuses["01"] == "completed", statuses  # not interrupted
    assert statuses.get("02", "pending") == "pending"


REFUSED: list[tuple[str, dict[str, Any], str, str]] = [
    # (action, body, the parameter the answer names, a piece of the fix)
    ("stop", {"after_prompt": "yes"}, "after_prompt", '{"after_prompt": true}'),
    ("stop", {"after_prompt": 1}, "after_prompt", '{"after_prompt": true}'),
    ("stop", {"after_prompt": None}, "after_prompt", "not null"),
    ("stop", {"after_prompt": True, "author": {"not": "a string"}}, "author", '{"author": "..."}'),
    ("stop", {"after": True}, "after", "its parameters are after_prompt and author"),
    ("stop_after_prompt", {"after_prompt": False}, "after_prompt", "it takes only author"),
    ("wake", {"force": True}, "force", "it takes only author"),
    ("steer", {"text": "go on", "priority": 1}, "priority", "its parameters are text and author"),
    ("steer", {"text": "go on", "author": 7}, "author", '{"author": "..."}'),
    ("view", {"colour": "red"}, "colour", "its parameters are log_mode, tool_output"),
    ("view", {"diff": 5}, "diff", '{"diff": "..."}'),
    ("amend", {"prompt_id": "01", "add": "files_exist", "reason": "r"}, "add", "JSON object"),
    ("amend", {"prompt_id": "01", "add": {"files_exist": ["c"]}, "persist": True}, "persist", ""),
    ("relax", {"prompt_id": "01", "drop": ["files_exist"], "confirm": "yes"}, "confirm", "true"),
]


def test_a_parameter_an_action_does_not_take_or_of_the_wrong_type_is_refused_400(
    tmp_path: Path, stop_later: Any
) -> None:
    packet = make_packet(tmp_path, {"01": _passes("a.txt", 4000), "02": _passes("b.txt", 0)})
    prompts = {p: p.read_bytes() for p in (packet / "prompts").iterdir()}
    requests = packet / ".prompt_runner" / "control" / "requests"
    with serve(packet) as dash:
        run = stop_later(start_run(packet, "--no-commit"))
        wait_for(lambda: _running(dash))
        for action, body, key, fix in REFUSED:
            answer = _post(dash, action, body)
            assert answer.status_code == 400, (action, body, answer.text)
            doc = answer.json()
            assert (doc["action"], doc["state"], doc["request"]) == (action, "refused", None)
            assert doc["reason"].startswith(f"{key}: ") and fix in doc["reason"], (body, doc)
            assert "\n" not in doc["reason"] and doc["reason"].endswith("."), doc  # one sentence
            assert not requests.is_dir() or list(requests.iterdir()) == [], (action, body)
        assert _running(dash) and _statuses(dash)["01"] == "running"  # nothing stopped it
        # the page's own button still stops after the prompt
        sent = _post(dash, "stop_after_prompt", {"author": "ops"})
        assert sent.status_code == 200 and sent.json()["state"] == "pending", sent.text
        run.wait(timeout=60)
        statuses = _statuses(dash)
    log = ControlStore(packet / ".prompt_runner").read_log()
    assert [(e["command"], e["params"], e["author"], e["outcome"]) for e in log] == [
        ("stop", {"after_prompt": True}, "ops", "applied")
    ]
    assert statuses["01"] == "completed" and statuses.get("02", "pending") == "pending"
    assert {p: p.read_bytes() for p in (packet / "prompts").iterdir()} == prompts
    assert not (packet / ".prompt_runner" / "amendments").exists() or not any(
        (packet / ".prompt_runner" / "amendments").glob("*.jsonl")
    )


def test_every_action_names_its_parameters() -> None:
    """Each action has its table of parameters, so none takes a body unchecked."""
    from prompt_runner.dashboard.actions import ACTIONS, PARAMS

    assert set(PARAMS) == set(ACTIONS)
    assert PARAMS["stop"] == {"after_prompt": "bool"} and PARAMS["stop_after_prompt"] == {}


def test_a_stop_with_no_live_run_is_refused_at_once_and_logged(tmp_path: Path) -> None:
    """A stop sent after the run ended was queued for no run: "pending" on the page,
    "Pending requests" in ``control status``, until the next run refused it as stale
    (new-user re-test s11 #2). Now it is refused at once and logged, as ``wake``."""
    packet = make_packet(tmp_path, {"01": _passes("a.txt", 0)})
    done = start_run(packet, "--no-commit")
    assert done.wait(timeout=60) == 0
    with serve(packet) as dash:
        answers = [
            _post(dash, "stop", {}),
            _post(dash, "stop", {"after_prompt": True}),
            _post(dash, "stop_after_prompt", {}),
        ]
    for sent in answers:
        assert sent.status_code == 200, sent.text
        assert sent.json()["state"] == "refused", sent.json()
        assert "there is no live run to stop" in sent.json()["reason"], sent.json()
    requests = packet / ".prompt_runner" / "control" / "requests"
    assert not requests.is_dir() or list(requests.iterdir()) == []
    stops = _stops(packet)
    assert [e["outcome"] for e in stops] == ["rejected"] * 3, stops
