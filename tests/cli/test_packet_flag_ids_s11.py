"""With ``--packet`` every word is an id (or the text): a second one is one
too many for ``repair``/``control amend``/``control steer``, not a second packet."""

from __future__ import annotations

from pathlib import Path

from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


def test_a_second_id_after_packet_is_one_id_too_many(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    result = pr("repair", "--packet", packet, "01", "02")
    assert result.code == 2
    assert "repair takes one prompt id" in result.err and "('01' and '02')" in result.err
    assert "given twice" not in result.err
    steer = pr("control", "steer", "--packet", packet, "hi", "there")
    assert steer.code == 2 and "quote the whole text" in steer.err
    twice = pr("status", "--packet", packet, packet)
    assert twice.code == 2 and "the packet is given twice" in twice.err
