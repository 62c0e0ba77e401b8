"""The notify: key: one level checked alone, levels merged key by key, profile < manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import UserError
from prompt_runner.notify import EVENT_KINDS, check_level, parse_notify, resolve_notify
from prompt_runner.packet.loader import load_packet
from prompt_runner.planning import resolve_plan
from tests.helpers.packets import make_packet, write_front_matter


def test_defaults_every_kind_ten_seconds_two_retries() -> None:
    config = parse_notify({"urls": "json://h/x"}, file="m.md")
    assert config is not None
    assert config.urls == ("json://h/x",) and config.command is None
    assert config.on == frozenset(EVENT_KINDS)
    assert (config.timeout_s, config.retries, config.file) == (10.0, 2, "m.md")


@pytest.mark.parametrize(
    ("timeout", "seconds"),
    [(3, 3.0), (0.5, 0.5), ("500ms", 0.5), ("10s", 10.0), ("2m", 120.0), ("1m30s", 90.0)],
)
def test_timeout_takes_seconds_or_a_duration(timeout: Any, seconds: float) -> None:
    config = parse_notify({"command": ["true"], "timeout": timeout}, file="m.md")
    assert config is not None and config.timeout_s == seconds


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        (["json://h"], "notify", "must be a mapping"),
        ({"urls": [1]}, "notify.urls[0]", "not an Apprise URL"),
        ({"urls": ["json://h/{env:}"]}, "notify.urls[0]", "does not name an environment"),
        ({"urls": ["json://h/{env:A"]}, "notify.urls[0]", "unclosed"),
        ({"command": []}, "notify.command", "non-empty list"),
        ({"command": ["ok", 3]}, "notify.command", "non-empty list"),
        ({"urls": ["json://h"], "on": []}, "notify.on", "non-empty list"),
        ({"urls": ["json://h"], "timeout": 0}, "notify.timeout", "between 0 and 300"),
        ({"urls": ["json://h"], "timeout": "1h"}, "notify.timeout", "between 0 and 300"),
        ({"urls": ["json://h"], "timeout": True}, "notify.timeout", "not a duration"),
        ({"urls": ["json://h"], "timeout": "10 minutes"}, "notify.timeout", "not a duration"),
        ({"urls": ["json://h"], "retries": -1}, "notify.retries", "whole number"),
        ({"urls": ["json://h"], "retries": True}, "notify.retries", "whole number"),
        ({"urls": ["json://h"], "enabled": "no"}, "notify.enabled", "true or false"),
        ({"url": ["json://h"]}, "notify.url", "unknown key 'url'"),
    ],
)
def test_a_wrong_value_names_the_file_and_the_key(raw: Any, key: str, words: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_notify(raw, file="m.md")
    assert caught.value.file == "m.md" and caught.value.key == key
    assert words in str(caught.value) and caught.value.fix


def test_levels_merge_key_by_key_the_more_specific_winning() -> None:
    config = resolve_notify(
        [
            ("profile.md", {"urls": ["json://a/x"], "timeout": "3s"}),
            ("packet.md", None),
            ("ws.yaml", {"on": ["run_failed"]}),
        ]
    )
    assert config is not None
    assert config.urls == ("json://a/x",) and config.timeout_s == 3.0
    assert config.on == {"run_failed"} and config.file == "ws.yaml"


def test_enabled_false_turns_a_less_specific_level_off() -> None:
    assert resolve_notify([("p", {"urls": ["json://a/x"]}), ("m", {"enabled": False})]) is None
    assert resolve_notify([("p", None)]) is None


def test_a_level_alone_may_leave_the_targets_to_another() -> None:
    assert check_level({"on": ["blocked"]}, file="ws.yaml") == {"on": ["blocked"]}
    with pytest.raises(UserError, match="names no one to tell") as caught:
        resolve_notify([("ws.yaml", {"on": ["blocked"]})])
    assert caught.value.file == "ws.yaml" and caught.value.key == "notify"


def test_the_plan_carries_the_profile_and_manifest_notify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home-config"
    monkeypatch.setenv("PROMPT_RUNNER_CONFIG_HOME", str(home))
    write_front_matter(
        home / "profiles" / "told.md",
        {"provider": "simulated", "model": "simulated-demo", "notify": {"urls": ["json://p/x"]}},
        "",
    )
    packet = make_packet(
        tmp_path, {"01": {}}, manifest={"profile": "told", "notify": {"on": ["run_failed"]}}
    )
    plan = resolve_plan(load_packet(packet))
    assert plan.notify is not None
    assert plan.notify.urls == ("json://p/x",) and plan.notify.on == {"run_failed"}
    shown = plan.to_dict()["notify"]
    assert shown["urls"] == ["json://p/x"] and shown["on"] == ["run_failed"]


def test_a_bad_profile_notify_names_the_profile_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home-config"
    monkeypatch.setenv("PROMPT_RUNNER_CONFIG_HOME", str(home))
    write_front_matter(
        home / "profiles" / "told.md",
        {"provider": "simulated", "model": "simulated-demo", "notify": {"urls": ["nope"]}},
        "",
    )
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": "told"})
    with pytest.raises(UserError) as caught:
        resolve_plan(load_packet(packet))
    assert caught.value.file is not None and caught.value.file.endswith("profiles/told.md")
    assert caught.value.key == "notify.urls[0]"


def test_no_notify_plans_none(tmp_path: Path) -> None:
    plan = resolve_plan(load_packet(make_packet(tmp_path, {"01": {}})))
    assert plan.notify is None and plan.to_dict()["notify"] is None
