"""A prompt that targets the packet directory (``targets: [packet]``) needs it to
be a git work tree when the runner commits: ``packet preflight``, ``packet
doctor`` and ``run`` say so before any session (new user s12 #2: doctor and
preflight said ready, then ``run`` ran the agent and failed at the commit)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import git
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet


def _packet(tmp_path: Path) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {
                "targets": ["packet"],
                "simulate": {"attempts": [{"writes": [{"path": "notes.md", "text": "A\n"}]}]},
                "verify": {"contains": [{"path": "notes.md", "text": "A", "repo": "packet"}]},
            }
        },
    )


def test_preflight_doctor_and_run_refuse_a_packet_target_outside_git(tmp_path: Path) -> None:
    packet = _packet(tmp_path)  # tmp_path/demo: in no git repository
    report = json.loads(cli("packet", "preflight", packet).stdout)
    assert report["runtime_ready"] is False
    [error] = report["readiness_errors"]
    assert error["kind"] == "not_git_repo" and error["key"] == "targets"
    assert error["file"].endswith("01_step.prompt.md") and error["prompts"] == ["01"]
    doctor = cli("packet", "doctor", packet)
    assert doctor.returncode == 1 and "runtime NOT ready" in doctor.stdout, doctor.stdout
    ran = cli("run", packet)
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "targets: preflight failed: the packet directory" in ran.stderr, ran.stderr
    assert "take `packet` out of the prompt's targets" in ran.stderr
    assert not (packet / "notes.md").exists()  # no session ran
    # without a commit there is nothing to refuse
    assert cli("run", packet, "--no-commit").returncode == 0


def test_a_packet_inside_a_work_tree_is_a_ready_target(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    git(packet, "init", "-q", "-b", "main")
    git(packet, "config", "user.name", "t")
    git(packet, "config", "user.email", "t@example.invalid")
    git(packet, "add", "-A")
    git(packet, "commit", "-q", "-m", "packet")
    assert json.loads(cli("packet", "preflight", packet).stdout)["runtime_ready"] is True
    ran = cli("run", packet)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "notes.md" in git(packet, "show", "--name-only", "--format=", "HEAD")
