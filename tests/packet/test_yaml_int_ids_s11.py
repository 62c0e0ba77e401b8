"""An unquoted prompt id YAML 1.1 reads as another number than its text says
(``010`` is octal 8, ``0x10`` is 16...) is refused, naming the file and the key
and saying to quote it, instead of silently renaming the prompt; a decimal
``id: 2`` is still ``"02"`` and a quoted id is taken as written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import prompt_runner
from prompt_runner.cli.main import main
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.packets import make_packet


def _packet(tmp_path: Path, second_id: str, depends: str | None = None) -> Path:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    file = next((packet / "prompts").glob("02*.prompt.md"))
    text = file.read_text(encoding="utf-8")
    lines = [f"id: {second_id}" if line.startswith("id:") else line for line in text.splitlines()]
    if depends is not None:
        lines.insert(2, f"depends_on: {depends}")
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return packet


@pytest.mark.parametrize(
    ("written", "how"),
    [
        ("010", "octal number 8"),
        ("0x10", "hexadecimal number 16"),
        ("0b11", "binary number 3"),
        ("1_0", "number 10"),
        ("1:30", "sexagesimal (base 60) number 90"),
    ],
)
def test_a_renumbering_spelling_is_refused(tmp_path: Path, written: str, how: str) -> None:
    packet = _packet(tmp_path, written)
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    message = str(caught.value)
    assert "02_" in message and ".prompt.md: id: " in message, message
    assert how in message and f'quote it: id: "{written}"' in message, message


@pytest.mark.parametrize(("written", "pid"), [("2", "02"), ("07", "07"), ('"010"', "010")])
def test_decimal_and_quoted_ids_still_load(tmp_path: Path, written: str, pid: str) -> None:
    assert list(load_packet(_packet(tmp_path, written)).ids()) == ["01", pid]


def test_a_depends_on_entry_is_checked_too(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r'depends_on\[2\]: .*octal number 8.*quote it: "010"'):
        load_packet(_packet(tmp_path, '"02"', depends='["01", 001, 010]'))
    assert load_packet(_packet(tmp_path / "b", '"02"', depends="[1, 01]")).ids()


def test_the_cli_exits_2_with_one_line_and_lint_reports_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet = _packet(tmp_path, "010")
    assert main(["list", str(packet)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") <= 1 and "Traceback" not in err, err
    assert "id: YAML 1.1 reads the unquoted 010 as the octal number 8" in err
    report = prompt_runner.lint(packet)
    assert "unquoted 010" in json.dumps(report.to_dict()), report
