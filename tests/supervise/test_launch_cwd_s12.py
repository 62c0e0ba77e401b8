"""A launch into a working directory that is not there is told by that directory,
never as the interpreter's fault (the OS's ``Not a directory: .../python``; nu12 05)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from prompt_runner.errors import InfrastructureError
from prompt_runner.state.layout import StateLayout
from prompt_runner.supervise import Launch, Supervised, start_run


def _supervised(tmp_path: Path, cwd: Path) -> Supervised:
    state = StateLayout.of_packet(tmp_path / "p", tmp_path / "state")
    return Supervised(
        label="p",
        state=state,
        files=state.supervisor,
        containment="process_group",
        launch=Launch((sys.executable, "-c", "pass"), cwd),
    )


@pytest.mark.parametrize("under_a_file", [True, False])
def test_a_missing_working_directory_is_named_not_the_interpreter(
    tmp_path: Path, under_a_file: bool
) -> None:
    (tmp_path / "afile").write_text("x\n")
    cwd = tmp_path / ("afile" if under_a_file else "gone") / "repos" / "app"
    with pytest.raises(InfrastructureError) as caught:
        start_run(_supervised(tmp_path, cwd), live_timeout_s=5)
    said = str(caught.value)
    assert f"its working directory {cwd}" in said, said
    assert sys.executable not in said, said
    assert ("afile is not a directory" in said) if under_a_file else ("does not exist" in said)
