"""``packet doctor``: authoring gaps and runtime readiness (SPEC 9, catalog K3)."""

from __future__ import annotations

import json
from pathlib import Path

from prompt_runner.packet.doctor import doctor_report
from tests.helpers.gitrepo import make_git_repo
from tests.packet._packets import cli, make_packet, prompt


def gap_kinds(packet: Path) -> list[str]:
    return [g["kind"] for g in doctor_report(packet)["authoring_warnings"]]


def test_a_finished_packet_has_no_gaps(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "app")
    packet = make_packet(
        tmp_path / "p",
        manifest={"name": "ok", "repos": {"app": {"path": str(repo)}}},
        prompts={"01_x.prompt.md": prompt()},
    )
    report = doctor_report(packet)
    assert report["authoring_ready"] is True and report["authoring_warnings"] == []
    assert report["runtime_ready"] is True
    assert report["repos"][0]["name"] == "app" and report["repos"][0]["ready"] is True
    assert cli("packet", "doctor", str(packet)).returncode == 0


def test_no_prompts(tmp_path: Path) -> None:
    packet = make_packet(tmp_path / "p", manifest={"name": "x", "repos": {"a": {"path": "."}}})
    assert gap_kinds(packet) == ["no_prompts"]


def test_no_default_repo_and_prompt_without_targets(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path / "p",
        manifest={"name": "x", "repos": {"a": {"path": "."}, "b": {"path": "."}}},
        prompts={"01_x.prompt.md": prompt(targets=[])},
    )
    assert gap_kinds(packet) == ["no_default_repo", "prompt_no_targets"]
    # with a default repo, an empty `targets:` falls back to it
    fixed = make_packet(
        tmp_path / "q",
        manifest={"name": "x", "repos": {"a": {"path": ".", "default": True}, "b": {"path": "."}}},
        prompts={"01_x.prompt.md": prompt(targets=[])},
    )
    assert gap_kinds(fixed) == []


def test_empty_verify_and_placeholders(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path / "p",
        prompts={"01_x.prompt.md": prompt(verify={"files_exist": []})},
        bodies={"01_x.prompt.md": "# X\n<!-- prompt_runner:placeholder mission -->\n"},
    )
    report = doctor_report(packet)
    assert [g["kind"] for g in report["authoring_warnings"]] == [
        "prompt_empty_verify",
        "prompt_placeholder_body",
    ]
    assert report["authoring_warnings"][1]["prompt_id"] == "01"
    assert "mission" in report["authoring_warnings"][1]["message"]


def test_missing_and_non_git_repos_are_not_runtime_ready(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    packet = make_packet(
        tmp_path / "p",
        manifest={
            "name": "x",
            "repos": {"app": {"path": "../missing", "default": True}, "docs": {"path": "../plain"}},
        },
        prompts={"01_x.prompt.md": prompt()},
    )
    res = cli("packet", "doctor", str(packet), "--json")
    assert res.returncode == 1
    report = json.loads(res.stdout)
    assert report["authoring_ready"] is True and report["runtime_ready"] is False
    kinds = {(e["name"], e["kind"]) for e in report["readiness_errors"]}
    assert kinds == {("app", "path_not_found"), ("docs", "not_git_repo")}


def test_a_prompt_that_does_not_parse_is_a_gap_not_a_crash(tmp_path: Path) -> None:
    packet = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": "id: [unclosed\n"})
    report = doctor_report(packet)
    assert [g["kind"] for g in report["authoring_warnings"]] == ["prompt_unreadable"]
    assert report["runtime_ready"] is False and report["load_error"]
