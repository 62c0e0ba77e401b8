"""Bad input is exit 2 naming the file (and key), never exit 3's "fix the file
system": a checklist path that is a directory, and a ``packet new --root`` where
no directory can be made for the argument's own reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.packet._packets import cli, make_packet, prompt


def test_checklist_sync_refuses_a_directory_in_the_checklist_place(tmp_path: Path) -> None:
    root = make_packet(
        tmp_path / "pkt", prompts={"01_x.prompt.md": prompt(), "02_y.prompt.md": prompt("02")}
    )
    (root / "prompts" / "01_x.prompt.checklist.md").mkdir()
    done = cli("checklist", "sync", str(root))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "01_x.prompt.checklist.md: is a directory, not a checklist file" in done.stderr
    assert "remove it" in done.stderr
    assert "fix the file system" not in done.stderr
    # nothing written: the other prompt's checklist is not made either
    assert not (root / "prompts" / "02_y.prompt.checklist.md").exists()


def test_packet_new_root_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "afile"
    blocker.write_text("x", encoding="utf-8")
    for root in (blocker, blocker / "sub"):
        done = cli("packet", "new", "x", "--root", str(root))
        assert done.returncode == 2, done.stdout + done.stderr
        assert f"{root}: --root: is not a directory" in done.stderr
        assert "give --root a directory" in done.stderr
        assert "fix the file system" not in done.stderr


def test_packet_new_name_taken_by_a_file(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x", encoding="utf-8")
    done = cli("packet", "new", "x", "--root", str(tmp_path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{tmp_path / 'x'}: is a file, not a directory" in done.stderr
    assert "pick another packet name" in done.stderr


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_packet_new_root_where_no_directory_can_be_made() -> None:
    done = cli("packet", "new", "x", "--root", "/proc")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "/proc: --root: takes no new directory" in done.stderr
    assert "give --root an ordinary directory you can write to" in done.stderr
    assert "Traceback" not in done.stderr


def _refuses_mkdir(place: Path) -> bool:
    try:
        (place / "probe").mkdir()
    except PermissionError:
        return True
    except OSError:
        return False
    (place / "probe").rmdir()
    return False


def test_packet_new_root_not_writable(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        place = locked
        if not _refuses_mkdir(place):  # root writes anyway: /sys refuses even root
            place = Path("/sys/kernel")
            if not place.is_dir() or not _refuses_mkdir(place):
                pytest.skip("no directory here refuses this user")
        done = cli("packet", "new", "x", "--root", str(place))
    finally:
        locked.chmod(0o755)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{place}: --root: is not writable (permission denied)" in done.stderr
    assert "give --root a directory you can write to" in done.stderr
