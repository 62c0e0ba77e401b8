"""Request vocabulary: client-side refusal and consumer-side judgement (catalog G2, G3, G6, G7)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from prompt_runner.control.requests import (
    VIEW_SETTINGS,
    build_request,
    normalize_prompt_id,
    validate_params,
    validate_request,
)
from prompt_runner.errors import UserError

CLAUSES = ("files_exist", "contains", "commands")


def _refused(command: str, params: dict[str, Any], **kw: Any) -> UserError:
    with pytest.raises(UserError) as info:
        build_request(command, params, run_id="R1", author="ada", **kw)
    assert info.value.exit_code == 2
    return info.value


# -- set_view (G2) ----------------------------------------------------------------------


def test_set_view_builds_a_full_request() -> None:
    request = build_request("set_view", {"tool_output": "full"}, run_id="R1", author="ada")
    assert set(request) == {
        "schema_version",
        "id",
        "command",
        "params",
        "run_id",
        "author",
        "requested_at",
    }
    assert request["command"] == "set_view"
    assert request["params"] == {"tool_output": "full"}
    assert (request["run_id"], request["author"]) == ("R1", "ada")
    assert request["requested_at"].endswith("Z")
    at = datetime.fromisoformat(request["requested_at"].replace("Z", "+00:00"))
    assert at.utcoffset() == timedelta(0)
    assert abs((datetime.now(UTC) - at).total_seconds()) < 60
    other = build_request("set_view", {"tool_output": "full"}, run_id="R1", author="ada")
    assert other["id"] != request["id"]


def test_every_allowed_view_value_is_accepted() -> None:
    assert VIEW_SETTINGS == {
        "log_mode": ("compact", "verbose", "studio"),
        "tool_output": ("none", "summary", "preview", "full"),
        "thinking": ("show", "hide"),
        "diff": ("none", "stat", "full"),
    }
    for key, values in VIEW_SETTINGS.items():
        for value in values:
            assert validate_params("set_view", {key: value}) == {key: value}


def test_a_value_the_setting_does_not_take_is_refused_naming_both() -> None:
    err = _refused("set_view", {"tool_output": "everything"})
    assert err.key == "tool_output"
    assert "tool_output" in str(err) and "everything" in str(err)
    assert "none, summary, preview or full" in str(err)


def test_an_unknown_view_key_is_refused() -> None:
    err = _refused("set_view", {"colour": "green"})
    assert "unknown view setting `colour`" in str(err)


def test_a_non_string_view_value_is_refused() -> None:
    assert "thinking" in str(_refused("set_view", {"thinking": True}))


def test_set_view_with_no_setting_is_refused() -> None:
    assert "name at least one setting" in str(_refused("set_view", {}))


# -- steer (G6) -------------------------------------------------------------------------


def test_steer_text_must_say_something() -> None:
    for params in ({"text": "   "}, {"text": ""}, {}):
        assert "a steer needs something to say" in str(_refused("steer", params))
    for wrong in (3, ["hi"], True):
        error = _refused("steer", {"text": wrong})
        assert "a steer's text must be a string" in str(error) and error.key == "text"
    request = build_request("steer", {"text": "use the shared helper"}, run_id="R1", author="ada")
    assert request["params"] == {"text": "use the shared helper"}
    assert request["author"] == "ada"


def test_steer_refuses_unknown_params() -> None:
    assert "`colour`" in str(_refused("steer", {"text": "hi", "colour": "x"}))


# -- amend / relax (G3) ----------------------------------------------------------------


def test_amend_without_reason_is_refused_not_defaulted() -> None:
    err = _refused(
        "amend", {"prompt_id": "01", "add": {"files_exist": ["lib/foo.ex"]}}, known_clauses=CLAUSES
    )
    assert "--reason is mandatory" in str(err)
    blank = {"prompt_id": "01", "add": {"files_exist": ["x"]}, "reason": "  "}
    assert "--reason is mandatory" in str(_refused("amend", blank, known_clauses=CLAUSES))


def test_amend_with_nothing_to_add_is_refused() -> None:
    assert "name what to add" in str(_refused("amend", {"prompt_id": "01"}))


def test_relax_needs_confirm() -> None:
    params = {"prompt_id": "01", "drop": ["files_exist"], "reason": "was wrong"}
    assert "relax needs --confirm" in str(_refused("relax", params, known_clauses=CLAUSES))
    params["confirm"] = "yes"  # only a real true confirms
    assert "relax needs --confirm" in str(_refused("relax", params, known_clauses=CLAUSES))


def test_relax_with_confirm_is_accepted() -> None:
    params = {"prompt_id": "1", "drop": ["files_exist"], "reason": "was wrong", "confirm": True}
    request = build_request("relax", params, run_id=None, author=None, known_clauses=CLAUSES)
    assert request["params"] == {
        "prompt_id": "01",
        "drop": ["files_exist"],
        "reason": "was wrong",
        "confirm": True,
    }
    assert request["run_id"] is None


def test_an_unknown_clause_is_refused() -> None:
    params = {"prompt_id": "01", "drop": ["file_exists"], "reason": "typo", "confirm": True}
    assert "unknown clause `file_exists`" in str(_refused("relax", params, known_clauses=CLAUSES))
    add = {"prompt_id": "01", "add": {"nope": 1}, "reason": "r"}
    assert "unknown clause `nope`" in str(_refused("amend", add, known_clauses=CLAUSES))


def test_relax_with_nothing_named_and_amend_without_prompt_are_refused() -> None:
    relax = {"prompt_id": "01", "reason": "r", "confirm": True}
    assert "name what to relax" in str(_refused("relax", relax))
    assert "name the prompt to amend" in str(_refused("amend", {"add": {"files_exist": ["a"]}}))


def test_amend_keeps_persist_only_when_asked() -> None:
    params = {"prompt_id": " 3 ", "add": {"files_exist": ["a"]}, "reason": "r", "persist": True}
    clean = validate_params("amend", params, known_clauses=CLAUSES)
    assert clean == {
        "prompt_id": "03",
        "add": {"files_exist": ["a"]},
        "reason": "r",
        "persist": True,
    }
    assert "persist" in str(_refused("amend", {**params, "persist": "yes"}))


def test_prompt_ids_are_trimmed_and_padded() -> None:
    assert [normalize_prompt_id(x) for x in ("3", " 12 ", "100", "intro")] == [
        "03",
        "12",
        "100",
        "intro",
    ]


def test_an_unknown_command_is_refused_client_side() -> None:
    assert "unknown control command `self_destruct`" in str(_refused("self_destruct", {}))


# -- consumer side (G7) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (None, "unparseable"),
        ([1, 2], "unparseable"),
        ({"params": {}}, "no command"),
        ({"command": "  "}, "no command"),
        ({"command": "self_destruct", "params": {}}, "unknown command"),
        ({"command": 7}, "unknown command"),
        ({"command": "set_view", "params": []}, "params must be a JSON object"),
    ],
)
def test_consumer_reasons(payload: object, reason: str) -> None:
    assert validate_request(payload, current_run_id="R2") == (False, reason)


def test_a_request_for_another_run_is_refused_with_its_run_id() -> None:
    payload = {"command": "set_view", "params": {"tool_output": "full"}, "run_id": "R1"}
    ok, reason = validate_request(payload, current_run_id="R2")
    assert not ok and reason.startswith("targets run R1") and "R2" in reason
    ok, reason = validate_request(payload, current_run_id=None)
    assert not ok and "targets run R1" in reason and "no run is current" in reason
    assert validate_request(payload, current_run_id="R1") == (True, "")


def test_a_request_without_run_id_targets_the_current_run() -> None:
    payload = {"command": "set_view", "params": {"log_mode": "verbose"}, "author": "ada"}
    assert validate_request(payload, current_run_id="R9") == (True, "")


def test_bad_params_are_refused_with_the_client_sentence() -> None:
    ok, reason = validate_request(
        {"command": "set_view", "params": {"tool_output": "everything"}}, current_run_id=None
    )
    assert not ok and "tool_output" in reason and "everything" in reason
    ok, reason = validate_request(
        {"command": "relax", "params": {"prompt_id": "01", "drop": ["x"], "reason": "r"}},
        current_run_id=None,
        known_clauses=CLAUSES,
    )
    assert not ok and "unknown clause `x`" in reason


def test_a_built_request_passes_the_consumer() -> None:
    request = build_request("steer", {"text": "go"}, run_id="R1", author="ada")
    assert validate_request(request, current_run_id="R1") == (True, "")


def test_the_control_package_imports_nothing_heavy() -> None:
    code = (
        "import sys, prompt_runner; before = set(sys.modules); import prompt_runner.control; "
        "new = set(sys.modules) - before; "
        "print(sorted(m for m in new if m.split('.')[0] in "
        "('pydantic', 'typing', 'dataclasses', 'yaml', 'ruamel', 'psutil', 'inspect')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
