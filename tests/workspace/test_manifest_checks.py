"""A workspace manifest is refused where it is read -- by plan, prepare and doctor,
not first by ``start`` -- with the sentence that fits: a ``notify:`` block as a
packet's is judged, a repository name by the characters it may use, a key YAML
did not read as a string by its words and the quoting fix (exit 2, one line)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.notify.config import check_level
from prompt_runner.workspace.load import load_workspace
from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace

BASE = """\
schema: prompt_runner.workspace/v1
id: demo
repositories:
  app: {remote: ../remotes/app.git}
packet: {repo: app, path: packets/demo}
"""


def _refused(tmp_path: Path, text: str) -> UserError:
    manifest = tmp_path / "workspace.yml"
    manifest.write_text(text, encoding="utf-8")
    with pytest.raises(UserError) as caught:
        load_workspace(manifest)
    return caught.value


@pytest.mark.parametrize(
    ("notify", "key"),
    [
        ({"bogus": 1, "on": ["run_done"], "urls": [5], "retries": -1}, "notify.bogus"),
        ({"on": ["run_done"]}, "notify.on[0]"),
        ({"urls": [5]}, "notify.urls[0]"),
        ({"retries": -1}, "notify.retries"),
        ({"timeout": "soon"}, "notify.timeout"),
    ],
)
def test_a_bad_notify_block_is_refused_by_plan_prepare_and_doctor(
    tmp_path: Path, notify: dict[str, object], key: str
) -> None:
    manifest = make_workspace(tmp_path, manifest={"notify": notify})
    with pytest.raises(UserError) as packet_level:  # what a packet's notify: is told
        check_level(notify, file=str(manifest), key="notify")
    for command in ("plan", "prepare", "doctor"):
        done = cli("workspace", command, manifest)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
        assert f": {key}: " in done.stderr
        assert packet_level.value.reason in done.stderr and str(packet_level.value.fix) in (
            done.stderr
        )
    assert not Path(os.environ["XDG_DATA_HOME"]).exists()  # prepare wrote nothing


def test_a_notify_block_may_leave_the_targets_to_the_packet(tmp_path: Path) -> None:
    manifest = tmp_path / "workspace.yml"
    manifest.write_text(BASE + "notify: {on: [run_failed], retries: 1}\n", encoding="utf-8")
    ws = load_workspace(manifest)
    assert ws.notify is not None and dict(ws.notify) == {"on": ["run_failed"], "retries": 1}


def test_a_repository_name_with_a_space_is_told_the_characters_not_to_quote(
    tmp_path: Path,
) -> None:
    error = _refused(
        tmp_path,
        BASE.replace("  app:", '  "a pp":').replace("repo: app", 'repo: "a pp"'),
    )
    assert error.key == "repositories"
    assert "repository name 'a pp' may only use letters, digits, '_', '.', '-'" in str(error)
    assert "quote" not in str(error) and error.fix is not None and "'a-pp'" in error.fix


@pytest.mark.parametrize(
    ("extra", "key", "words", "fix"),
    [
        (
            "on: 1\n",
            None,
            "key `on` (or `yes`, `true`) is not a string (YAML reads it unquoted as True)",
            'quote the key ("on":)',
        ),
        (
            "commits: {off: 1}\n",
            "commits",
            "key `off` (or `no`, `false`) is not a string",
            "`commits` takes no 'off' (its keys: branch, mode, push)",
        ),
        (
            "contracts: {artifacts: [{id: a, repo: app, build: [x], output: o, 3: x}]}\n",
            "contracts.artifacts[0]",
            "key `3` is not a string (YAML reads it as the int 3)",
            'quote the key ("3":)',
        ),
    ],
)
def test_a_key_yaml_reads_as_no_string_is_named_with_its_fix(
    tmp_path: Path, extra: str, key: str | None, words: str, fix: str
) -> None:
    error = _refused(tmp_path, BASE + extra)
    assert error.key == key, str(error)
    assert words in str(error) and error.fix is not None and fix in error.fix
    assert "Keys should be strings" not in str(error) and "[1]" not in str(error)


def test_a_top_level_on_is_pointed_at_notify(tmp_path: Path) -> None:
    manifest = tmp_path / "workspace.yml"
    manifest.write_text(BASE + "on: 1\n", encoding="utf-8")
    done = cli("workspace", "plan", manifest)
    assert done.returncode == 2 and done.stderr.startswith("error: "), done.stderr
    assert "workspace.yml: key `on`" in done.stderr
    assert "notify's `on` goes under `notify:`" in done.stderr
