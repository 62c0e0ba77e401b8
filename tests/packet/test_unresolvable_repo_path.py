"""A repo ``path`` that cannot be made absolute -- ``~nosuchuser/...``, a
symlink loop -- is bad input naming the manifest and the key (exit 2; lint an
``invalid_manifest`` error), not "internal error: RuntimeError" (pathlib raises
RuntimeError for both; a new user's finding)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _with_repo_path(tmp_path: Path, path_text: str) -> Path:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["README.md"]}}})
    manifest = packet / "prompt_runner_packet.md"
    text = manifest.read_text(encoding="utf-8")
    start = text.index("path:", text.index("repos:"))
    end = text.index("\n", start)
    manifest.write_text(text[:start] + f'path: "{path_text}"' + text[end:], encoding="utf-8")
    return packet


@pytest.mark.parametrize("kind", ["unknown_user", "symlink_loop"])
def test_every_command_says_which_path_cannot_be_resolved(tmp_path: Path, kind: str) -> None:
    if kind == "unknown_user":
        packet = _with_repo_path(tmp_path, "~no-such-user-here/repo")
        said = "'~no-such-user-here/repo' cannot be resolved"
    else:
        packet = _with_repo_path(tmp_path, "./loop1")
        (packet / "loop1").symlink_to("loop2")
        (packet / "loop2").symlink_to("loop1")
        said = "'./loop1' cannot be resolved (Symlink loop"
    for argv in (["plan"], ["run"], ["list"], ["watch", "--once"], ["watch", "--once", "--json"]):
        res = cli(*argv, packet)
        out = res.stdout + res.stderr
        assert res.returncode == 2, (argv, out)
        assert "internal error" not in out and "Traceback" not in out, (argv, out)
        assert "repos.app.path" in out and said in out, (argv, out)
    lint = cli("packet", "lint", packet, "--json")
    assert lint.returncode == 1, lint.stderr
    found = [f for f in json.loads(lint.stdout)["findings"] if f["kind"] == "invalid_manifest"]
    assert found and said in found[0]["message"], found
