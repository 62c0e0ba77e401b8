"""A contract path written ``REPO:PATH`` (how a checklist item shows another
repo's path) is refused at load time, naming the ``{path, repo}`` form to write.

New user s12 #3: ``files_exist: ["beta:b.txt"]`` loaded, linted and planned
clean, then the run spent every repair on a check that could never pass:
``beta:b.txt does not exist in repo 'alpha'`` although ``beta/b.txt`` did.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet


def _packet(tmp_path: Path, verify: dict[str, object]) -> Path:
    make_git_repo(tmp_path / "beta")
    return make_packet(
        tmp_path,
        {"01": {"verify": verify}},
        manifest={
            "repos": {"app": {"path": "../repo", "default": True}, "beta": {"path": "../beta"}}
        },
    )


@pytest.mark.parametrize(
    "verify",
    [
        {"files_exist": ["beta:b.txt"]},
        {"files_absent": ["beta:old/b.txt"]},
        {"contains": [{"path": "packet:NOTES.md", "text": "x"}]},
        {"files_exist": [{"path": "app:b.txt", "repo": "beta"}]},
    ],
)
def test_a_repo_qualified_path_is_refused_naming_the_form_to_write(
    tmp_path: Path, verify: dict[str, object]
) -> None:
    packet = _packet(tmp_path, verify)
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    message = str(caught.value)
    assert "is read as a file named" in message and "REPO:PATH" in message, message
    assert "write it as {path: " in message, message
    assert "01_" in message and "verify." in message, message


def test_the_cli_exits_2_in_lint_plan_and_run(tmp_path: Path) -> None:
    packet = _packet(tmp_path, {"files_exist": ["beta:b.txt"]})
    for argv, code in (
        (("plan", packet), 2),
        (("run", packet), 2),
        (("packet", "lint", packet), 1),
    ):
        done = cli(*argv)
        said = done.stdout + done.stderr
        assert done.returncode == code, (argv, said)  # lint: 1 = findings, here an ERROR
        assert "write it as {path: b.txt, repo: beta}" in said, (argv, said)
        assert "Traceback" not in said
    assert "ERROR packet_load_error" in said


def test_a_real_file_of_that_name_and_unknown_prefixes_stay_paths(tmp_path: Path) -> None:
    packet = _packet(
        tmp_path,
        {"files_exist": ["beta:b.txt", "http://x", "notarepo:x", "sub/beta:x"]},
    )
    (tmp_path / "repo" / "beta:b.txt").write_text("a file with a colon\n", encoding="utf-8")
    assert list(load_packet(packet).ids()) == ["01"]


@pytest.mark.parametrize(
    ("verify", "fix"),
    [
        ({"glob": ["beta:*.txt"]}, 'write it as {pattern: "*.txt", repo: beta}'),
        (
            {"glob": [{"pattern": "beta:out/*.md", "min": 1}]},
            'write it as {pattern: "out/*.md", repo: beta}',
        ),
        (
            {"source_absent": [{"pattern": "TODO", "paths": ["beta:src/**"]}]},
            'write it as {path: "src/**", repo: beta}',
        ),
        ({"changed_paths_only": ["beta:*"]}, 'write it as {path: "*", repo: beta}'),
    ],
)
def test_a_qualified_glob_is_refused_with_a_fix_that_is_valid_yaml(
    tmp_path: Path, verify: dict[str, object], fix: str
) -> None:
    # new user s13: a glob with wildcards slipped past (only its literal prefix
    # was looked at), and the fix for `beta:*` was `{path: *, ...}`, which YAML
    # reads as an alias
    import yaml

    packet = _packet(tmp_path, verify)
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    assert fix in str(caught.value), str(caught.value)
    written = fix.removeprefix("write it as ")
    assert isinstance(yaml.safe_load(written), dict)
