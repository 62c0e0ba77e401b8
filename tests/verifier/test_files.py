"""files_exist, files_absent, contains, matches against real files."""

from __future__ import annotations

import os
from pathlib import Path

from prompt_runner.verifier import parse_contract
from tests.verifier.conftest import Check


def test_basic_clauses_pass_on_fx_repo(check: Check) -> None:
    report = check(
        {
            "files_exist": ["README.md"],
            "files_absent": ["missing.txt"],
            "contains": [{"path": "README.md", "text": "# Repo"}],
            "matches": [{"path": "README.md", "pattern": r"^# \w+$"}],
        }
    )
    assert report.passed and report.fault is None
    assert [i.kind for i in report.items] == ["files_exist", "files_absent", "contains", "matches"]
    assert [i.details for i in report.items] == [
        "exists (file): README.md",
        "absent: missing.txt",
        "README.md contains '# Repo'",
        r"README.md matches /^# \w+$/ at line 1",
    ]
    assert all(i.repo == "app" and i.path for i in report.items)


def test_failures_name_the_path_and_what_to_do(check: Check, git_repo: Path) -> None:
    (git_repo / "old.txt").write_text("x", encoding="utf-8")
    report = check(
        {
            "files_exist": ["hello.txt"],
            "files_absent": ["old.txt"],
            "contains": [{"path": "README.md", "text": "Hello"}, {"path": "nope.md", "text": "x"}],
            "matches": [{"path": "README.md", "pattern": "^Hello"}],
        }
    )
    assert not report.passed and report.fault is None
    details = [i.details for i in report.failures()]
    assert details == [
        f"missing: hello.txt does not exist in repo 'app' ({git_repo}); create it",
        "present but must be absent: old.txt in repo 'app'; delete it",
        "text not found: README.md does not contain 'Hello'; add it verbatim",
        "missing: nope.md does not exist in repo 'app'; create it",
        "pattern not found: README.md has no match for /^Hello/",
    ]
    assert all(i.verdict == "failure" for i in report.items)


def test_entry_repo_scopes_the_path(check: Check, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "NOTES.md").write_text("notes", encoding="utf-8")
    report = check(
        {"files_exist": [{"repo": "docs", "path": "NOTES.md"}, "NOTES.md"]},
        repos={"docs": other},
    )
    assert [(i.repo, i.passed) for i in report.items] == [("docs", True), ("app", False)]


def test_packet_alias_is_the_packet_dir(check: Check, tmp_path: Path) -> None:
    (tmp_path / "packet").mkdir()
    (tmp_path / "packet" / "notes.md").write_text("n", encoding="utf-8")
    report = check({"files_exist": [{"repo": "packet", "path": "notes.md"}]})
    assert report.passed and report.items[0].repo == "packet"


def test_unknown_repo_at_verify_time_is_a_failure(check: Check) -> None:
    report = check({"files_exist": [{"repo": "nope", "path": "a.txt"}]})
    item = report.items[0]
    assert not item.passed and item.verdict == "failure"
    assert item.details.startswith("missing_repo: unknown repo 'nope'")
    assert item.extra["missing_repo"] is True


def test_symlink_escape_created_by_a_session_fails_and_is_not_read(
    check: Check, git_repo: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    os.symlink(secret, git_repo / "link.txt")
    os.symlink(tmp_path, git_repo / "outdir")
    report = check(
        {
            "files_exist": ["link.txt", "outdir/secret.txt"],
            "files_absent": ["link.txt"],
            "contains": [{"path": "link.txt", "text": "TOP SECRET"}],
        }
    )
    assert [i.passed for i in report.items] == [False, False, False, False]
    for i in report.items:
        assert "escapes repo 'app' through a symlink" in i.details
        assert "it was not read" in i.details
        assert i.extra["escapes_repo"] is True
    assert "TOP SECRET" not in str(report.to_dict())


def test_a_session_s_symlink_into_git_is_not_read(check: Check, git_repo: Path) -> None:
    os.symlink(git_repo / ".git" / "HEAD", git_repo / "head.txt")
    (item,) = check({"contains": [{"path": "head.txt", "text": "ref:"}]}).items
    assert not item.passed and item.extra["escapes_repo"] is True
    assert "head.txt is inside a git directory (.git)" in item.details
    assert "it was not read" in item.details


def test_symlink_inside_the_repo_is_fine(check: Check, git_repo: Path) -> None:
    os.symlink(git_repo / "README.md", git_repo / "alias.md")
    report = check({"contains": [{"path": "alias.md", "text": "# Repo"}]})
    assert report.passed


def test_directory_for_contains_is_a_failure(check: Check, git_repo: Path) -> None:
    (git_repo / "d").mkdir()
    report = check({"contains": [{"path": "d", "text": "x"}], "files_exist": ["d"]})
    assert report.items[0].details == "exists (directory): d"
    assert report.items[1].details == "d is not a regular file"


def test_a_repo_directory_that_is_a_file_is_said_to_be_a_file(check: Check, tmp_path: Path) -> None:
    (tmp_path / "docs.txt").write_text("x", encoding="utf-8")
    report = check(
        {"files_exist": [{"repo": "docs", "path": "a.txt"}]}, repos={"docs": tmp_path / "docs.txt"}
    )
    assert report.items[0].details == (
        f"missing_repo: repo 'docs' directory {tmp_path / 'docs.txt'} is a file, not a directory"
    )


def test_a_trailing_slash_names_a_directory(check: Check, git_repo: Path) -> None:
    # A regular file "build" is not the directory "build/": files_exist fails
    # (naming the fix), files_absent is not broken by it, as the OS reads it.
    (git_repo / "build").write_text("not a dir\n", encoding="utf-8")
    (git_repo / "out").mkdir()
    report = check(
        {
            "files_exist": ["build/", {"path": "out/"}, "build", "missing/"],
            "files_absent": ["build/", "out/"],
        }
    )
    by = [(i.kind, i.path, i.passed) for i in report.items]
    assert by == [
        ("files_exist", "build", False),
        ("files_exist", "out", True),
        ("files_exist", "build", True),
        ("files_exist", "missing", False),
        ("files_absent", "build", True),
        ("files_absent", "out", False),
    ]
    assert report.items[0].details.startswith("not a directory: build/ is a file in repo 'app'")
    assert report.items[3].details.startswith("missing: missing/ does not exist")
    # the contract as written round-trips with its slash
    contract = parse_contract({"files_exist": ["build/", "x"]}, file="p.md")
    assert [e.to_raw()["path"] for e in contract.entries["files_exist"]] == ["build/", "x"]


def test_a_dangling_link_is_named_as_one_by_both_clauses(check: Check, git_repo: Path) -> None:
    # new user s12 #8: "does not exist" and "present" for the same path read as
    # a contradiction; each now says it is a link whose target is missing.
    os.symlink("nowhere", git_repo / "dangling")
    report = check({"files_exist": ["dangling"], "files_absent": ["dangling"]})
    exists, absent = report.items
    assert not exists.passed and not absent.passed
    assert "is a symbolic link whose target does not exist" in exists.details
    assert "is a symbolic link (to a missing target); delete the link" in absent.details


def test_report_lines_name_a_command_as_typed_and_a_repo_check_by_its_repo(
    git_repo: Path, tmp_path: Path
) -> None:
    # new user s12 #8: `repos_clean : ...` lost the repo, and a command showed as
    # a Python list (`commands ['false', 'a b']`) in `verify` and `run` output.
    from tests.helpers.cli import cli
    from tests.helpers.packets import make_packet

    packet = make_packet(
        tmp_path,
        {
            "01": {
                "verify": {"commands": [{"exec": "false", "args": ["a b"]}], "repos_clean": ["app"]}
            }
        },
    )
    (tmp_path / "repo" / "stray.txt").write_text("x\n", encoding="utf-8")
    done = cli("verify", packet)
    assert "failure: commands false 'a b': " in done.stdout, done.stdout
    assert "failure: repos_clean app: uncommitted changes" in done.stdout, done.stdout
    ran = cli("run", packet)
    assert "unmet: commands false 'a b': " in ran.stdout, ran.stdout
    assert "['false'" not in done.stdout + ran.stdout and "('false'" not in ran.stdout


def test_a_path_with_an_edge_space_or_a_line_break_is_shown_quoted() -> None:
    # new user s13: `failure: files_exist doc.md : missing ...` hid the space
    # that made the check fail, and a path with a line break split the line
    from prompt_runner.verifier.model import subject

    assert subject("doc.md ", None, "app") == '"doc.md "'
    assert subject("a\nb", None, "app") == '"a\\nb"'
    assert subject("dir/ok.txt", None, "app") == "dir/ok.txt"
