"""``packet lint``: one packet that triggers each finding, one that does not (SPEC 9, K1/K2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prompt_runner import lint_packet
from prompt_runner.errors import UserError
from prompt_runner.packet.lint import ERROR_KINDS, MESSAGES, WARNING_KINDS
from prompt_runner.verifier import contract_keys
from tests.packet._packets import cli, make_packet, prompt


def kinds(root: Path, strict: bool = False) -> list[str]:
    return [f.kind for f in lint_packet(root, strict=strict).findings]


def only(root: Path, kind: str) -> list[Any]:
    return [f for f in lint_packet(root).findings if f.kind == kind]


def test_a_well_formed_packet_has_no_findings(tmp_path: Path) -> None:
    root = make_packet(tmp_path / "p", prompts={"01_write.prompt.md": prompt()})
    report = lint_packet(root)
    assert report.findings == ()
    assert report.passed and report.errors == 0 and report.warnings == 0


def test_every_kind_has_a_message_and_a_severity() -> None:
    assert set(ERROR_KINDS) | set(WARNING_KINDS) == set(MESSAGES)
    assert not set(ERROR_KINDS) & set(WARNING_KINDS)
    for kind in (
        "prompt_id_filename_mismatch",
        "prompt_filename_without_prefix",
        "duplicate_prompt_id",
        "unknown_target_repo",
        "unknown_verify_repo",
        "repo_group_in_targets",
        "unknown_verify_clause",
        "invalid_execution_policy",
        "agent_owned_verify_commands",
        "agent_owned_structural_evidence_required",
    ):
        assert kind in ERROR_KINDS
    for kind in (
        "legacy_shell_command",
        "verify_command_without_timeout",
        "prompt_without_verify",
        "contract_without_commands",
        "changed_paths_only_vacuous",
        "repos_clean_before_commit",
        "inert_front_matter_key",
    ):
        assert kind in WARNING_KINDS


# --------------------------------------------------------------------------- errors


def test_prompt_id_filename_mismatch(tmp_path: Path) -> None:
    bad = make_packet(tmp_path / "bad", prompts={"01_write.prompt.md": prompt("02")})
    report = lint_packet(bad)
    [finding] = report.findings
    assert finding.kind == "prompt_id_filename_mismatch"
    assert finding.severity == "error"
    assert finding.to_dict()["file"] == "01_write.prompt.md"
    assert "02" in finding.message and "01" in finding.message
    assert finding.line == 2  # the `id:` line
    assert report.errors == 1 and not report.passed
    good = make_packet(tmp_path / "good", prompts={"01_write.prompt.md": prompt("01")})
    assert "prompt_id_filename_mismatch" not in kinds(good)


def test_integer_id_is_padded_before_comparing(tmp_path: Path) -> None:
    root = make_packet(tmp_path / "p", prompts={"03_x.prompt.md": prompt(pid=3)})  # type: ignore[arg-type]
    assert kinds(root) == []


def test_prompt_filename_without_prefix(tmp_path: Path) -> None:
    bad = make_packet(tmp_path / "bad", prompts={"write.prompt.md": prompt()})
    [finding] = only(bad, "prompt_filename_without_prefix")
    assert "numeric prefix" in finding.message and finding.severity == "error"
    assert "prompt_id_filename_mismatch" not in kinds(bad)
    good = make_packet(tmp_path / "good", prompts={"01_write.prompt.md": prompt()})
    assert "prompt_filename_without_prefix" not in kinds(good)


def test_duplicate_prompt_id_names_both_files(tmp_path: Path) -> None:
    bad = make_packet(
        tmp_path / "bad", prompts={"01_a.prompt.md": prompt("01"), "01_b.prompt.md": prompt("01")}
    )
    [finding] = only(bad, "duplicate_prompt_id")
    assert "01_a.prompt.md" in finding.message and "01_b.prompt.md" in finding.message
    good = make_packet(
        tmp_path / "good", prompts={"01_a.prompt.md": prompt("01"), "02_b.prompt.md": prompt("02")}
    )
    assert kinds(good) == []


def test_unknown_target_repo_names_the_target_and_the_known_repos(tmp_path: Path) -> None:
    bad = make_packet(tmp_path / "bad", prompts={"01_x.prompt.md": prompt(targets=["app", "nope"])})
    [finding] = only(bad, "unknown_target_repo")
    for word in ("nope", "app", "docs"):
        assert word in finding.message
    good = make_packet(
        tmp_path / "good", prompts={"01_x.prompt.md": prompt(targets=["app", "docs", "packet"])}
    )
    assert kinds(good) == []


def test_unknown_verify_repo_and_the_packet_alias(tmp_path: Path) -> None:
    bad = make_packet(
        tmp_path / "bad",
        prompts={
            "01_x.prompt.md": prompt(
                verify={
                    "files_exist": [{"repo": "ghost", "path": "NOTES.md"}],
                    "commands": [{"exec": "@repo:phantom/bin/check", "timeout_ms": 1000}],
                }
            )
        },
    )
    found = only(bad, "unknown_verify_repo")
    assert len(found) == 2
    assert "ghost" in found[0].message and "files_exist" in found[0].message
    assert "phantom" in found[1].message and "commands" in found[1].message
    good = make_packet(
        tmp_path / "good",
        prompts={
            "01_x.prompt.md": prompt(
                verify={
                    "contains": [{"repo": "packet", "path": "NOTES.md", "text": "x"}],
                    "commands": [{"exec": "true", "timeout_ms": 1000, "repo": "docs"}],
                }
            )
        },
    )
    assert kinds(good) == []


def test_repo_group_in_targets_is_not_also_an_unknown_target(tmp_path: Path) -> None:
    bad = make_packet(tmp_path / "bad", prompts={"01_x.prompt.md": prompt(targets=["@core"])})
    found = kinds(bad)
    assert "repo_group_in_targets" in found and "unknown_target_repo" not in found
    [finding] = only(bad, "repo_group_in_targets")
    assert "@core" in finding.message and "legacy" in finding.message


def test_unknown_verify_clause_suggests_the_real_one(tmp_path: Path) -> None:
    bad = make_packet(
        tmp_path / "bad",
        prompts={"01_x.prompt.md": prompt(verify={"file_exists": ["NOTES.md"]})},
    )
    [finding] = only(bad, "unknown_verify_clause")
    assert "file_exists" in finding.message and "`files_exist`" in finding.message
    lines = (bad / "prompts" / "01_x.prompt.md").read_text().splitlines()
    assert lines[finding.line - 1].strip() == "file_exists:"
    # an unknown clause is not also "no contract"
    assert "prompt_without_verify" not in kinds(bad)


@pytest.mark.parametrize("clause", contract_keys())
def test_every_clause_the_verifier_registers_is_known_to_lint(tmp_path: Path, clause: str) -> None:
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": prompt(verify={clause: []})})
    assert "unknown_verify_clause" not in kinds(root)


@pytest.mark.parametrize(
    "execution",
    [
        {"completion": "agent_owned"},
        {"completion": "agent_owned", "incomplete": "fail"},
        {"completion": "verifier_owned", "incomplete": "repeat"},
        {"completion": "whenever"},
        {"completion": "verifier_owned", "retries": 3},
        "agent_owned",
    ],
)
def test_invalid_execution_policy(tmp_path: Path, execution: Any) -> None:
    root = make_packet(
        tmp_path / "p",
        manifest={"name": "x", "execution": execution, "repos": {"app": {"path": "."}}},
        prompts={"01_x.prompt.md": prompt(verify={"files_exist": ["A"], "contains": []})},
    )
    found = kinds(root)
    assert found.count("invalid_execution_policy") == 1
    assert "invalid_manifest" not in found  # reported once, under its own kind


def test_a_valid_agent_owned_policy_is_accepted(tmp_path: Path) -> None:
    root = make_packet(
        tmp_path / "p",
        manifest={
            "name": "x",
            "execution": {"completion": "agent_owned", "incomplete": "repeat"},
            "repos": {"app": {"path": "."}},
        },
        prompts={
            "01_x.prompt.md": prompt(
                verify={"files_exist": ["A.md"], "contains": [{"path": "A.md", "text": "a"}]}
            )
        },
    )
    assert kinds(root) == []


def _agent_owned(tmp_path: Path, verify: dict[str, Any]) -> Path:
    return make_packet(
        tmp_path,
        manifest={
            "name": "x",
            "execution": {"completion": "agent_owned", "incomplete": "repeat"},
            "repos": {"app": {"path": "."}},
        },
        prompts={"01_x.prompt.md": prompt(verify=verify)},
    )


def test_agent_owned_verify_commands(tmp_path: Path) -> None:
    bad = _agent_owned(
        tmp_path / "bad",
        {"files_exist": ["A"], "commands": [{"exec": "true", "timeout_ms": 1000}]},
    )
    assert "agent_owned_verify_commands" in kinds(bad)
    good = _agent_owned(tmp_path / "good", {"files_exist": ["A"]})
    assert "agent_owned_verify_commands" not in kinds(good)


def test_agent_owned_structural_evidence_required(tmp_path: Path) -> None:
    bad = _agent_owned(tmp_path / "bad", {"changed_paths_only": ["A"]})
    assert "agent_owned_structural_evidence_required" in kinds(bad)
    empty = _agent_owned(tmp_path / "empty", {})
    assert "agent_owned_structural_evidence_required" in kinds(empty)
    good = _agent_owned(tmp_path / "good", {"changed_paths_only": ["A"], "files_exist": ["A"]})
    assert "agent_owned_structural_evidence_required" not in kinds(good)


def test_files_that_do_not_load_become_findings_and_lint_goes_on(tmp_path: Path) -> None:
    root = make_packet(
        tmp_path / "p",
        prompts={
            "01_a.prompt.md": "id: '01'\nverify: [oops\n",  # invalid YAML
            "02_b.prompt.md": prompt("02", permission_mode="sometimes"),
            "03_c.prompt.md": prompt("03", verify={"commands": [{"exec": "a b"}]}),
            "04_d.prompt.md": prompt("09"),
        },
    )
    found = kinds(root)
    assert "invalid_prompt" in found
    assert found.count("invalid_prompt") == 2
    assert "invalid_contract" in found
    assert "prompt_id_filename_mismatch" in found  # the good file after the bad ones


def test_an_invalid_manifest_is_a_finding(tmp_path: Path) -> None:
    root = make_packet(
        tmp_path / "p",
        manifest={"name": "x", "log_mode": "loud"},
        prompts={"01_x.prompt.md": prompt(targets=["packet"])},
    )
    [finding] = lint_packet(root).findings
    assert finding.kind == "invalid_manifest" and "log_mode" in finding.message
    assert finding.line == 3


def test_a_packet_that_still_does_not_load_is_a_load_error(tmp_path: Path) -> None:
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": prompt(depends_on=["77"])})
    [finding] = lint_packet(root).findings
    assert finding.kind == "packet_load_error" and "depends_on" in finding.message
    assert finding.path == "prompts/01_x.prompt.md"


def test_a_non_packet_directory_is_bad_input(tmp_path: Path) -> None:
    with pytest.raises(UserError):
        lint_packet(tmp_path)
    assert cli("packet", "lint", str(tmp_path)).returncode == 2


# --------------------------------------------------------------------------- warnings


def test_legacy_shell_command_with_a_gnu_timeout_wrapper(tmp_path: Path) -> None:
    bad = make_packet(
        tmp_path / "bad",
        prompts={
            "01_x.prompt.md": prompt(
                verify={"contains": [], "commands": ["timeout 60 test -f NOTES.md"]}
            )
        },
    )
    assert kinds(bad) == ["legacy_shell_command"]
    assert "sh -c" in only(bad, "legacy_shell_command")[0].message
    run_form = make_packet(
        tmp_path / "run",
        prompts={"01_x.prompt.md": prompt(verify={"commands": [{"run": "true", "timeout_ms": 5}]})},
    )
    assert kinds(run_form) == ["legacy_shell_command"]


def test_verify_command_without_timeout_names_only_the_unbounded_command(tmp_path: Path) -> None:
    bad = make_packet(
        tmp_path / "bad",
        prompts={
            "01_x.prompt.md": prompt(
                verify={"commands": ["mix test", {"run": "timeout 900 mix dialyzer"}]}
            )
        },
    )
    report = lint_packet(bad)
    [finding] = [f for f in report.findings if f.kind == "verify_command_without_timeout"]
    assert "mix test" in finding.message and "no timeout" in finding.message
    assert "dialyzer" not in finding.message
    assert finding.severity == "warning" and report.passed
    structured = make_packet(
        tmp_path / "structured",
        prompts={"01_x.prompt.md": prompt(verify={"commands": [{"exec": "make"}]})},
    )
    assert kinds(structured) == ["verify_command_without_timeout"]
    good = make_packet(tmp_path / "good", prompts={"01_x.prompt.md": prompt()})
    assert kinds(good) == []


def test_a_timeout_zero_wrapper_is_no_timeout(tmp_path: Path) -> None:
    # coreutils' `timeout 0` sets no limit: the command gets only the default deadline
    commands = ["timeout 0 mix test", "timeout 0.0s make", "timeout 1s make"]
    packet = make_packet(
        tmp_path / "zero", prompts={"01_x.prompt.md": prompt(verify={"commands": commands})}
    )
    found = only(packet, "verify_command_without_timeout")
    assert ["timeout 0 mix test" in f.message for f in found] == [True, False]
    assert "timeout 0.0s make" in found[1].message


def test_prompt_without_verify(tmp_path: Path) -> None:
    for name, verify in (("absent", None), ("empty", {}), ("empty_lists", {"files_exist": []})):
        root = make_packet(tmp_path / name, prompts={"01_x.prompt.md": prompt(verify=verify)})
        assert kinds(root) == ["prompt_without_verify"], name
        assert "provider" in only(root, "prompt_without_verify")[0].message


def test_contract_without_commands(tmp_path: Path) -> None:
    bad = make_packet(
        tmp_path / "bad", prompts={"01_x.prompt.md": prompt(verify={"files_exist": ["A"]})}
    )
    assert kinds(bad) == ["contract_without_commands"]
    assert "empty file" in only(bad, "contract_without_commands")[0].message
    for name, extra in (
        ("contains", {"contains": [{"path": "A", "text": "x"}]}),
        ("matches", {"matches": [{"path": "A", "pattern": "x+"}]}),
        ("commands", {"commands": [{"exec": "true", "timeout_ms": 100}]}),
    ):
        root = make_packet(
            tmp_path / name,
            prompts={"01_x.prompt.md": prompt(verify={"files_exist": ["A"], **extra})},
        )
        assert "contract_without_commands" not in kinds(root), name
    weak = make_packet(
        tmp_path / "weak",
        prompts={
            "01_x.prompt.md": prompt(verify={"files_exist": ["A"], "changed_paths_only": ["A"]})
        },
    )
    assert kinds(weak) == ["changed_paths_only_vacuous"]  # one warning per weak contract


def test_changed_paths_only_is_always_reported(tmp_path: Path) -> None:
    verify = {**prompt()["verify"], "changed_paths_only": ["NOTES.md"]}
    bad = make_packet(tmp_path / "bad", prompts={"01_x.prompt.md": prompt(verify=verify)})
    [finding] = only(bad, "changed_paths_only_vacuous")
    for phrase in (
        "git status --porcelain",
        "still uncommitted",
        "correct when the runner owns the commit",
        "--no-commit",
        "committer: noop",
        "repos_clean",
    ):
        assert phrase in finding.message
    assert finding.severity == "warning"
    strict = lint_packet(bad, strict=True)
    assert [f.severity for f in strict.findings] == ["error"] and not strict.passed
    good = make_packet(tmp_path / "good", prompts={"01_x.prompt.md": prompt()})
    assert "changed_paths_only_vacuous" not in kinds(good)


def _clean(tmp_path: Path, name: str, repos_clean: Any, **kw: Any) -> Path:
    verify = {**prompt()["verify"], "repos_clean": repos_clean}
    manifest = kw.pop("manifest", None)
    return make_packet(
        tmp_path / name,
        manifest=manifest,
        prompts={"01_x.prompt.md": prompt(verify=verify, **kw)},
    )


@pytest.mark.parametrize(
    "entry",
    ["app", {"repo": "app"}, {"pushed": True}, {"repo": "app", "pushed": True}],
    ids=["name", "mapping", "first-target", "pushed"],
)
def test_repos_clean_on_a_repo_the_git_committer_commits_is_a_warning(
    tmp_path: Path, entry: Any
) -> None:
    root = _clean(tmp_path, "p", [entry])
    assert kinds(root) == ["repos_clean_before_commit"]
    [finding] = only(root, "repos_clean_before_commit")
    assert finding.severity == "warning" and finding.prompt_id == "01"
    for phrase in (
        "`app`",
        "verifier runs before",
        "git committer",
        "uncommitted changes",
        "commits its own work",
        "--no-commit",
        "committer: noop",
        "Fix: drop `repos_clean`",
        "changed_paths_only",
    ):
        assert phrase in finding.message, phrase
    lines = (root / "prompts" / "01_x.prompt.md").read_text().splitlines()
    assert lines[finding.line - 1].lstrip().startswith(("- app", "- repo:", "- pushed:"))
    strict = lint_packet(root, strict=True)
    assert [f.severity for f in strict.findings] == ["error"] and not strict.passed


def test_repos_clean_names_each_committed_repo_once_at_its_first_entry(tmp_path: Path) -> None:
    root = _clean(
        tmp_path, "p", ["docs", "app", {"repo": "app", "pushed": True}], targets=["app", "docs"]
    )
    [finding] = only(root, "repos_clean_before_commit")
    assert "`docs`, `app` be fully committed" in finding.message
    lines = (root / "prompts" / "01_x.prompt.md").read_text().splitlines()
    assert lines[finding.line - 1].strip() == "- docs"


def test_repos_clean_without_targets_checks_the_default_repo(tmp_path: Path) -> None:
    verify = {**prompt()["verify"], "repos_clean": [{"pushed": True}]}
    front = {k: v for k, v in prompt(verify=verify).items() if k != "targets"}
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": front})
    assert kinds(root) == ["repos_clean_before_commit"]


def test_repos_clean_on_a_repo_sharing_a_targets_work_tree_is_a_warning(tmp_path: Path) -> None:
    (tmp_path / "p" / "app").mkdir(parents=True)
    manifest = {
        "name": "demo",
        "repos": {"app": {"path": "app", "default": True}, "same": {"path": "./app/"}},
    }
    root = _clean(tmp_path, "p", ["same"], manifest=manifest)
    [finding] = only(root, "repos_clean_before_commit")
    assert "`same`" in finding.message


def test_repos_clean_that_can_pass_is_not_warned_about(tmp_path: Path) -> None:
    # A repo the prompt does not target: the runner commits nothing there.
    other = _clean(tmp_path, "other", ["docs"])
    assert kinds(other) == []
    # The manifest turns the runner's commits off: the agent commits its own work.
    manifest = {
        "name": "demo",
        "committer": "noop",
        "repos": {"app": {"path": "app", "default": True}, "docs": {"path": "docs"}},
    }
    (tmp_path / "noop" / "app").mkdir(parents=True)
    (tmp_path / "noop" / "docs").mkdir(parents=True)
    noop = _clean(tmp_path, "noop", ["app"], manifest=manifest)
    assert kinds(noop) == []
    # committer: git spelled out is the default, and still warned about.
    (tmp_path / "git" / "app").mkdir(parents=True)
    (tmp_path / "git" / "docs").mkdir(parents=True)
    git = _clean(tmp_path, "git", ["app"], manifest={**manifest, "committer": "git"})
    assert kinds(git) == ["repos_clean_before_commit"]


def test_a_weak_contract_with_repos_clean_gets_that_one_warning(tmp_path: Path) -> None:
    verify = {"files_exist": ["A"], "repos_clean": ["app"]}
    weak = make_packet(tmp_path / "weak", prompts={"01_x.prompt.md": prompt(verify=verify)})
    assert kinds(weak) == ["repos_clean_before_commit"]  # one warning per weak contract
    both = {**verify, "changed_paths_only": ["A"]}
    root = make_packet(tmp_path / "both", prompts={"01_x.prompt.md": prompt(verify=both)})
    assert kinds(root) == ["changed_paths_only_vacuous", "repos_clean_before_commit"]
    elsewhere = {"files_exist": ["A"], "repos_clean": ["docs"]}
    other = make_packet(tmp_path / "other", prompts={"01_x.prompt.md": prompt(verify=elsewhere)})
    assert kinds(other) == ["contract_without_commands"]


def test_the_hazard_is_real_repos_clean_fails_a_runner_committed_prompt(tmp_path: Path) -> None:
    """Why the warning exists: the verifier sees the prompt's own work uncommitted."""
    from tests.helpers.packets import make_packet as make_run_packet

    write = {"path": "a.txt", "text": "hi\n"}
    packet = make_run_packet(
        tmp_path,
        {
            "01": {
                "verify": {"contains": [{"path": "a.txt", "text": "hi"}], "repos_clean": ["app"]},
                "simulate": {"attempts": [{"writes": [write]}] * 3},
            }
        },
    )
    assert kinds(packet) == ["repos_clean_before_commit"]
    res = cli("run", str(packet))
    assert res.returncode == 1, res.stdout + res.stderr
    assert "unmet: repos_clean" in res.stdout and "uncommitted changes" in res.stdout


def test_inert_front_matter_keys_one_each_and_depends_on_is_not_inert(tmp_path: Path) -> None:
    root = make_packet(
        tmp_path / "p",
        prompts={
            "01_a.prompt.md": prompt("01"),
            "02_x.prompt.md": prompt(
                "02",
                references=["docs/adr.md"],
                required_reading=["a.md"],
                context_files=["b.md"],
                depends_on=["01"],
            ),
        },
    )
    found = only(root, "inert_front_matter_key")
    assert len(found) == 3
    assert all("never sent to the provider" in f.message for f in found)
    assert kinds(root) == ["inert_front_matter_key"] * 3


def test_placeholder_markers_are_a_warning(tmp_path: Path) -> None:
    body = "# X\n\n<!-- prompt_runner:placeholder mission -->\nDescribe it.\n"
    bad = make_packet(
        tmp_path / "bad", prompts={"01_x.prompt.md": prompt()}, bodies={"01_x.prompt.md": body}
    )
    [finding] = only(bad, "placeholder_marker")
    assert "mission" in finding.message
    lines = (bad / "prompts" / "01_x.prompt.md").read_text().splitlines()
    assert "placeholder mission" in lines[finding.line - 1]
    good = make_packet(tmp_path / "good", prompts={"01_x.prompt.md": prompt()})
    assert kinds(good) == []


# --------------------------------------------------------------------------- CLI


def _lint_cli_packet(tmp_path: Path) -> Path:
    """Catalog K1: one inert key and one wrapped legacy command."""
    return make_packet(
        tmp_path / "lint-cli",
        manifest={"name": "lint-cli", "repos": {"app": {"path": ".", "default": True}}},
        prompts={
            "01_write.prompt.md": {
                "id": "01",
                "name": "Write",
                "references": ["docs/adr-001.md"],
                "verify": {
                    "files_exist": ["NOTES.md"],
                    "commands": ["timeout 60 test -f NOTES.md"],
                },
            }
        },
    )


def test_cli_warnings_exit_zero_and_strict_exits_one(tmp_path: Path) -> None:
    root = _lint_cli_packet(tmp_path)
    res = cli("packet", "lint", str(root))
    assert res.returncode == 0, res.stderr
    assert "WARNING" in res.stdout and "inert_front_matter_key" in res.stdout
    assert "2 warnings" in res.stdout

    res = cli("packet", "lint", str(root), "--json")
    assert res.returncode == 0
    doc = json.loads(res.stdout)
    assert doc["packet"] == "lint-cli" and doc["pass"] is True and doc["strict"] is False
    assert doc["root"] == str(root.resolve())
    assert doc["warnings"] == 2 and doc["errors"] == 0
    assert [f["kind"] for f in doc["findings"]] == [
        "inert_front_matter_key",
        "legacy_shell_command",
    ]
    assert set(doc["findings"][0]) >= {"kind", "severity", "prompt_id", "file", "line", "message"}
    assert doc["findings"][0]["prompt_id"] == "01"

    res = cli("packet", "lint", str(root), "--strict", "--json")
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    assert doc["errors"] == 2 and doc["warnings"] == 0 and doc["pass"] is False
    assert {f["severity"] for f in doc["findings"]} == {"error"}


def test_cli_errors_exit_one(tmp_path: Path) -> None:
    root = make_packet(tmp_path / "p", prompts={"01_write.prompt.md": prompt("02")})
    res = cli("packet", "lint", str(root))
    assert res.returncode == 1
    assert "ERROR prompt_id_filename_mismatch prompts/01_write.prompt.md:2" in res.stdout


def test_empty_front_matter_is_an_invalid_prompt(tmp_path: Path) -> None:
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": ""})
    finding = lint_packet(root).findings[0]
    assert finding.kind == "invalid_prompt" and "id: is required" in finding.message


def test_an_unparsable_manifest_does_not_turn_every_target_into_noise(tmp_path: Path) -> None:
    root = make_packet(tmp_path / "p", prompts={"01_x.prompt.md": prompt()})
    (root / "prompt_runner_packet.md").write_text("---\nname: [unclosed\n---\n")
    assert kinds(root) == ["invalid_manifest"]
    res = cli("packet", "lint", str(root), "--json")
    assert (
        res.returncode == 1 and json.loads(res.stdout)["findings"][0]["kind"] == "invalid_manifest"
    )


def test_depends_on_a_later_phase_is_a_warning_saying_it_reorders(tmp_path: Path) -> None:
    """A depends_on into a later phase silently ran that prompt ahead of its phase."""
    root = make_packet(
        tmp_path / "p",
        prompts={
            "01_a.prompt.md": prompt("01", depends_on=["03"]),
            "02_b.prompt.md": prompt("02"),
            "03_c.prompt.md": prompt("03", phase=2),
        },
    )
    [finding] = lint_packet(root).findings
    assert finding.kind == "depends_on_later_phase" and finding.severity == "warning"
    assert finding.path == "prompts/01_a.prompt.md" and finding.prompt_id == "01"
    text = (root / "prompts" / "01_a.prompt.md").read_text().splitlines()
    assert text[finding.line - 1].strip() == "- '03'"  # the depends_on entry
    assert finding.message.startswith(
        "prompt 01 (phase 1) depends on 03 (phase 2), which comes later: dependencies run "
        "first, so 03 is pulled ahead of its phase"
    )
    same_phase = make_packet(
        tmp_path / "q",
        prompts={
            "01_a.prompt.md": prompt("01", depends_on=["02"]),
            "02_b.prompt.md": prompt("02"),
        },
    )
    assert lint_packet(same_phase).findings == ()
