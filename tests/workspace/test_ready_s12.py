"""A workspace that cannot run is told as the manifest's bad input -- by plan, prepare,
doctor, start and status alike -- never as a raw OS error (nu12 finding 05).

Each case goes through the real CLI on real clones of bare remotes on disk.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.helpers.cli import cli
from tests.helpers.workspaces import make_workspace


def _one_sentence(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def _edit(manifest: Path, **keys: object) -> None:
    doc = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    for dotted, value in keys.items():
        section, key = dotted.split("__")
        doc.setdefault(section, {})[key] = value
    manifest.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


def test_start_of_a_workspace_never_prepared_says_to_prepare_it(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    done = cli("start", manifest, "--timeout", "20", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_sentence(done.stderr)
    assert "ops/workspace.yml" in line and "not prepared" in line, line
    assert "`prompt-runner workspace prepare ops/workspace.yml`" in line, line
    assert "No such file or directory" not in line
    # the command it names works, typed where the user is
    assert cli("workspace", "prepare", "ops/workspace.yml", cwd=tmp_path).returncode == 0


def test_a_packet_path_missing_in_the_clone_is_refused_by_every_command(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    _edit(manifest, packet__path="nope")
    prepared = cli("workspace", "prepare", manifest, cwd=tmp_path)
    assert prepared.returncode == 2, prepared.stdout + prepared.stderr
    line = _one_sentence(prepared.stderr)
    assert "ops/workspace.yml: packet.path: 'nope' is not a directory" in line, line
    assert "set packet.path" in line and "prepared." not in prepared.stdout
    planned = cli("workspace", "plan", manifest, cwd=tmp_path)
    assert planned.returncode == 2, planned.stdout + planned.stderr
    assert "packet.path: 'nope'" in planned.stdout
    doctor = cli("workspace", "doctor", manifest, cwd=tmp_path)
    assert doctor.returncode == 1 and "packet.path: 'nope'" in doctor.stdout, doctor.stdout
    started = cli("start", manifest, "--timeout", "20", cwd=tmp_path)
    assert started.returncode == 2, started.stdout + started.stderr
    line = _one_sentence(started.stderr)
    assert "packet.path: 'nope' is not a directory" in line and "set packet.path" in line
    assert "No such file or directory" not in line


def test_a_directory_that_is_no_packet_is_named_by_packet_path(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    _edit(manifest, packet__path="packets")  # exists, but holds the packet one level down
    prepared = cli("workspace", "prepare", manifest, cwd=tmp_path)
    assert prepared.returncode == 2, prepared.stdout + prepared.stderr
    assert "packet.path: 'packets' holds no prompt_runner_packet.md" in prepared.stderr
    started = cli("start", manifest, "--timeout", "20", cwd=tmp_path)
    assert started.returncode == 2 and "packet.path: 'packets'" in started.stderr


def test_a_workspace_root_that_is_a_file_is_one_sentence_everywhere(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    _edit(manifest, operator__workspace_root=str(afile))
    expected = f"operator.workspace_root: {afile} is a file"
    planned = cli("workspace", "plan", manifest, cwd=tmp_path)
    assert planned.returncode == 2 and expected in planned.stdout, planned.stdout
    for argv in (("workspace", "prepare", manifest), ("start", manifest, "--timeout", "20")):
        done = cli(*argv, cwd=tmp_path)
        assert done.returncode == 2, done.stdout + done.stderr
        line = _one_sentence(done.stderr)
        assert line.startswith("error: ops/workspace.yml: ") and expected in line, line
        assert "set operator.workspace_root to a directory" in line
        assert "python" not in line and "permissions" not in line, line
    doctor = cli("workspace", "doctor", manifest, cwd=tmp_path)
    assert doctor.returncode == 1 and expected in doctor.stdout, doctor.stdout


def test_a_runtime_root_under_a_file_is_named(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    (tmp_path / "afile").write_text("x\n")
    _edit(manifest, operator__runtime_root=str(tmp_path / "afile" / "rt"))
    done = cli("start", manifest, "--timeout", "20", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_sentence(done.stderr)
    assert f"operator.runtime_root: {tmp_path / 'afile' / 'rt'} lies under" in line, line


def test_status_of_a_workspace_never_prepared_shows_no_python_none(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    done = cli("status", "--workspace", manifest, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "None" not in done.stdout, done.stdout
    assert "app          not prepared (no clone at " in done.stdout, done.stdout
    assert "`prompt-runner workspace prepare ops/workspace.yml`" in done.stdout


def test_a_root_where_the_file_system_makes_no_directory_is_the_manifests_bad_input(
    tmp_path: Path,
) -> None:
    for key, kept in (("workspace_root", "clones"), ("runtime_root", "runtime state")):
        case = tmp_path / key
        manifest = make_workspace(case)
        _edit(manifest, **{f"operator__{key}": "/proc/x"})
        done = cli("workspace", "prepare", manifest, cwd=case)
        assert done.returncode == 2, done.stdout + done.stderr
        line = _one_sentence(done.stderr)
        assert line.startswith(f"error: ops/workspace.yml: operator.{key}: /proc/x "), line
        assert f"so the workspace's {kept} cannot be kept there" in line, line
        assert f"set operator.{key} to an ordinary directory you can write to" in line, line
        assert "No such file or directory" not in line and "fix the file system" not in line
