"""``verify``, ``watch`` and ``control`` with ``--workspace W`` on a workspace
never prepared say so and how to prepare it (new user s13: they said
"REPOS/app/p: is not a directory; pass the packet directory", a packet the
user never passed); ``status`` still answers for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace


@pytest.mark.parametrize(
    "argv",
    [("verify",), ("watch", "--once"), ("control", "status"), ("control", "events")],
)
def test_a_command_on_an_unprepared_workspace_says_to_prepare_it(
    tmp_path: Path, argv: tuple[str, ...]
) -> None:
    manifest = make_workspace(tmp_path)
    done = cli(*argv, "--workspace", manifest)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "workspace demo-ws is not prepared: the clones of" in done.stderr, done.stderr
    assert f"(`prompt-runner workspace prepare {manifest}`), then run this command again" in (
        done.stderr
    )
    assert "pass the packet directory" not in done.stderr


def test_status_still_answers_for_an_unprepared_workspace(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    done = cli("status", "--workspace", manifest)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not prepared" in done.stdout, done.stdout
