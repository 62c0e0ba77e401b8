"""A repo path that is a file is said to be a file, not "does not exist"."""

from __future__ import annotations

from pathlib import Path

from prompt_runner.packet.preflight import preflight_report
from prompt_runner.watch import sample
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def packet_on_a_file(tmp_path: Path) -> Path:
    (tmp_path / "app.txt").write_text("not a repo\n", encoding="utf-8")
    return make_packet(
        tmp_path, {"01": {}}, manifest={"repos": {"app": {"path": "../app.txt", "default": True}}}
    )


def test_preflight_and_run_say_the_repo_path_is_a_file(tmp_path: Path) -> None:
    packet = packet_on_a_file(tmp_path)
    report = preflight_report(packet)
    assert [e["kind"] for e in report["readiness_errors"]] == ["not_a_directory"]
    proc = cli("run", packet)
    assert proc.returncode == 2
    assert (
        f"preflight failed: repo 'app' ({tmp_path / 'app.txt'}) is a file, not a directory; "
        "point the repo's path at its work tree directory; or pass --skip-preflight."
    ) in proc.stderr, proc.stderr
    assert "does not exist" not in proc.stderr
    assert sample(packet)["repo_details"][0]["error"] == "not_a_directory"
