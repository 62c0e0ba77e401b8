"""Plan resolution: the five precedence levels, recovery deep merge, time bounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from prompt_runner.packet.profiles import new_profile
from tests.helpers.packets import make_packet


def _plan(packet: Path, **options: object):  # type: ignore[no-untyped-def]
    return api.plan(packet, **options).prompt("01")


@pytest.mark.parametrize("key", ["model", "reasoning_effort", "permission_mode", "timeout"])
def test_each_level_overrides_the_one_below(tmp_path: Path, key: str) -> None:
    values = {
        "model": ["m-profile", "m-packet", "m-prompt", "m-option"],
        "reasoning_effort": ["low", "medium", "high", "xhigh"],
        "permission_mode": ["auto", "plan", "bypass", "default"],
        "timeout": [1000, 2000, 3000, 4000],
    }[key]
    new_profile("levels", provider="simulated")
    profile_file = (
        Path(__import__("os").environ["XDG_CONFIG_HOME"]) / "prompt_runner/profiles/levels.md"
    )
    text = profile_file.read_text().replace("---\n# levels", f"{key}: {values[0]!r}\n---\n# levels")
    profile_file.write_text(text.replace("'", '"'))

    def build(levels: int, where: Path) -> Path:
        manifest: dict[str, object] = {"profile": "levels", "model": None, "provider": None}
        prompt: dict[str, object] = {}
        if levels >= 2:
            manifest[key] = values[1]
        if levels >= 3:
            prompt[key] = values[2]
        packet = make_packet(where, {"01": prompt}, manifest=manifest)
        return packet

    field = "timeout_ms" if key == "timeout" else key
    assert getattr(_plan(build(1, tmp_path / "a")), field) == values[0]
    assert getattr(_plan(build(2, tmp_path / "b")), field) == values[1]
    assert getattr(_plan(build(3, tmp_path / "c")), field) == values[2]
    resolved = _plan(build(3, tmp_path / "d"), **{key: values[3]})
    assert getattr(resolved, field) == values[3]
    assert resolved.sources[key] == "option"


def test_builtin_defaults_apply_without_profile(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {}}, manifest={"profile": None, "provider": None, "model": None}
    )
    pp = _plan(packet)
    assert pp.provider == "simulated" and pp.sources["provider"] == "built-in"
    assert pp.permission_mode == "default"
    assert pp.timeout_ms is None
    assert pp.bounds.run_deadline_ms == 7 * 24 * 3600 * 1000


def test_time_bounds_derive_from_timeout(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"timeout": 60_000}})
    pp = _plan(packet)
    assert (pp.bounds.stream_ms, pp.bounds.transport_ms, pp.bounds.run_deadline_ms) == (60_000,) * 3
    assert pp.bounds.idle_ms == 120_000
    packet2 = make_packet(tmp_path / "b", {"01": {"timeout": 600_000}})
    assert _plan(packet2).bounds.idle_ms == 630_000
    packet3 = make_packet(tmp_path / "c", {"01": {"timeout": "unbounded"}})
    assert _plan(packet3).timeout_ms is None


def test_recovery_deep_merges_prompt_onto_packet(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"recovery": {"retry": {"class_attempts": {"provider_runtime_claim": 1}}}}},
        manifest={
            "recovery": {"resume_attempts": "5", "retry": {"base_delay_ms": 7, "jitter": "false"}}
        },
    )
    r = _plan(packet).recovery
    assert r.resume_attempts == 5
    assert r.retry.base_delay_ms == 7 and r.retry.jitter is False
    assert r.retry.max_delay_ms == 0  # from the simulated-default profile, as the reference's
    assert r.retry.class_attempts["provider_runtime_claim"] == 1
    assert r.retry.class_attempts["provider_capacity"] == 5


def test_unknown_failure_class_in_budget_is_an_error(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"recovery": {"retry": {"class_attempts": {"capcity": 2}}}}}
    )
    with pytest.raises(
        UserError, match=r"recovery\.retry\.class_attempts\.capcity: unknown failure class"
    ):
        _plan(packet)


def test_unknown_profile(tmp_path: Path) -> None:
    """Asked for (``--profile``), an unknown profile is an error; named by the manifest, the
    packet runs without it and the plan says so (as the reference system, whose own
    claude_packet names a profile its init never writes)."""
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": "ghost"})
    plan = api.plan(packet)
    assert plan.profile is None and "profile 'ghost'" in plan.notes[0]
    with pytest.raises(UserError, match="unknown profile 'ghost'"):
        api.plan(packet, profile="ghost")


def test_selection_ids_phase_bounds_and_dependencies(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {}, "02": {"depends_on": ["01"]}, "03": {"phase": 2}},
    )
    assert api.plan(packet).selected == ("01", "02", "03")
    assert api.plan(packet, ids=("03", "02", "01")).selected == ("03", "01", "02")
    assert api.plan(packet, ids=("3",)).selected == ("03",)
    assert api.plan(packet, phase="2").selected == ("03",)
    assert api.plan(packet, from_id="2", through_id="3").selected == ("02", "03")
    with pytest.raises(UserError, match="unknown prompt id '99'"):
        api.plan(packet, through_id="99")
    with pytest.raises(UserError, match="invalid prompt bounds"):
        api.plan(packet, from_id="03", through_id="01")
    with pytest.raises(UserError, match=r"unknown prompt id '99'.*01, 02, 03"):
        api.plan(packet, ids=("01", "99"))


def test_dependency_cycle_is_an_error(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"depends_on": ["02"]}, "02": {"depends_on": ["01"]}})
    with pytest.raises(UserError, match=r"dependency cycle \[01, 02\]"):
        api.plan(packet)


def test_unsupported_provider_option_fails_at_plan_time(tmp_path: Path) -> None:
    from tests.helpers.cli import cli

    packet = make_packet(tmp_path, {"01": {"provider": "claude", "reasoning_effort": "ultra"}})
    proc = cli("plan", packet)
    assert proc.returncode == 2
    assert "prompts/01_step.prompt.md: reasoning_effort:" in proc.stderr
    assert "not supported by claude" in proc.stderr


def test_explicit_max_attempts_is_the_budget_of_classes_not_set_explicitly(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {}},
        manifest={
            "recovery": {"retry": {"max_attempts": 1, "class_attempts": {"provider_rate_limit": 4}}}
        },
    )
    classes = _plan(packet).recovery.retry.class_attempts
    assert classes["provider_capacity"] == 1 and classes["transport_timeout"] == 1
    assert classes["provider_rate_limit"] == 4
    untouched = make_packet(tmp_path / "b", {"01": {}})
    assert _plan(untouched).recovery.retry.class_attempts["provider_capacity"] == 5
