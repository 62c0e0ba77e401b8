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


def _packet(
    tmp_path: Path, second_id: str, depends: str | None = None, phase: str | None = None
) -> Path:
    packet = make_packet(tmp_path, {"01": {}, "02": {}})
    file = next((packet / "prompts").glob("02*.prompt.md"))
    text = file.read_text(encoding="utf-8")
    lines = [f"id: {second_id}" if line.startswith("id:") else line for line in text.splitlines()]
    if depends is not None:
        lines.insert(2, f"depends_on: {depends}")
    if phase is not None:
        lines = [line for line in lines if not line.startswith("phase:")]
        lines.insert(2, f"phase: {phase}")
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return packet


@pytest.mark.parametrize(
    ("written", "how"),
    [
        ("010", "octal number 8"),
        ("0x10", "hexadecimal number 16"),
        ("0b11", "binary number 3"),
        ("1_0", "the '_'-separated number 10,"),  # a sentence (it said "the written with '_'")
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


@pytest.mark.parametrize(
    ("written", "said", "fix"),
    [
        ("+1", 'the unquoted +1 as the number 1, so the prompt\'s id would be "01"', 'id: "01"'),
        ("-0", 'the unquoted -0 as the number 0, so the prompt\'s id would be "00"', 'id: "00"'),
        ("yes", "the unquoted yes as the boolean true, not text", 'quote it: id: "yes"'),
        ("Off", "the unquoted Off as the boolean false, not text", 'quote it: id: "Off"'),
        ("~", "the unquoted ~ as null (no value), not text", 'e.g. id: "01"'),
        ("", "an empty value as null (no value), not text", 'e.g. id: "01"'),
        ("1.5", "the unquoted 1.5 as the number 1.5, not text", 'quote it: id: "1.5"'),
        ("2026-01-01", "the unquoted 2026-01-01 as a date, not text", 'id: "2026-01-01"'),
    ],
)
def test_an_id_yaml_reads_as_no_text_names_the_text_and_its_line(
    tmp_path: Path, written: str, said: str, fix: str
) -> None:
    # session 12: a signed number was silently "01"/"00"; a boolean, null,
    # float or date was reported by its Python value (True, None) and no line.
    packet = _packet(tmp_path, written)
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    message = str(caught.value)
    assert f"id: YAML 1.1 reads {said} (line 2)" in message, message
    assert fix in message and "True" not in message and "None" not in message, message


def test_phase_and_depends_on_entries_are_read_as_written(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r'phase: .*octal number 8, so its phase would be "8"'):
        load_packet(_packet(tmp_path, '"02"', depends=None, phase="010"))
    with pytest.raises(UserError, match=r"depends_on\[0\]: .*the boolean true, not text"):
        load_packet(_packet(tmp_path / "b", '"02"', depends="[yes]"))
    with pytest.raises(
        UserError, match=r"depends_on: .*reads the unquoted ~ as null \(no value\), not a list"
    ):
        load_packet(_packet(tmp_path / "e", '"02"', depends="~"))
    # no phase, written as nothing, still loads
    loaded = load_packet(_packet(tmp_path / "c", '"02"', phase="~"))
    assert list(loaded.ids()) == ["01", "02"] and loaded.prompts[1].phase is None
    assert load_packet(_packet(tmp_path / "d", '"02"', phase='"010"')).prompts[1].phase == "010"
