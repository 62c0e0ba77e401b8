"""An unknown prompt id names the packet (nothing in its manifest is wrong) and
lists the ids there are: ``control amend``, ``run``, ``verify``."""

from __future__ import annotations

from pathlib import Path

from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


def test_an_unknown_prompt_id_names_the_packet_not_its_manifest(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    for argv in (
        ("control", "amend", packet, "99", "--add-file", "x", "--reason", "r"),
        ("run", packet, "99"),
        ("verify", packet, "99"),
    ):
        result = pr(*argv)
        assert result.code == 2, (argv, result.err)
        assert "prompt_runner_packet.md" not in result.err, result.err
        assert "unknown prompt id '99' (the packet has no prompt of that id)" in result.err
        assert "use one of: 01, 02 (`prompt-runner list` lists them)" in result.err
