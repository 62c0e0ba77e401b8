"""Packet inputs refused where they are written (new-user tester t6's findings).

Each was accepted at load and failed only later: a ``contains`` text with a CR
that no file read with universal newlines can hold (every repair burnt); a
prompt id the state layer refuses (``internal error`` mid-run); a blank
``commit:`` that git refuses after the work (exit 3).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from prompt_runner.verifier import parse_contract
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

# -- contains (and doc) text that can never be found ---------------------------


@pytest.mark.parametrize("text", ["@echo off\r\necho hi", "a\rb", "trailing\r"])
def test_a_contains_text_with_a_cr_is_a_load_error(text: str) -> None:
    with pytest.raises(UserError) as info:
        parse_contract({"contains": [{"path": "run.bat", "text": text}]}, file="p.md")
    assert info.value.key == "verify.contains[0].text"
    assert "carriage return" in str(info.value)
    assert "\\n line breaks" in str(info.value)


def test_a_contains_text_with_lf_finds_a_crlf_file(tmp_path: Path) -> None:
    """The fix the error gives works: the LF text passes on the CRLF file (exit 0)."""
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"contains": [{"path": "run.bat", "text": "@echo off\necho hi"}]}}},
    )
    (tmp_path / "repo" / "run.bat").write_bytes(b"@echo off\r\necho hi\r\n")
    assert cli("verify", packet, "01").returncode == 0


def test_lint_and_verify_refuse_the_cr_text_naming_file_and_key(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path, {"01": {"verify": {"contains": [{"path": "run.bat", "text": "a\r\nb"}]}}}
    )
    (tmp_path / "repo" / "run.bat").write_bytes(b"a\r\nb\r\n")
    lint = cli("packet", "lint", packet)
    assert lint.returncode == 1 and "verify.contains[0].text" in lint.stdout
    verify = cli("verify", packet, "01")
    assert verify.returncode == 2, verify.stderr
    assert "01_step.prompt.md: verify.contains[0].text" in verify.stderr
    assert "Traceback" not in verify.stderr


@pytest.mark.parametrize(
    ("entry", "key"),
    [
        ({"requires_sections": ["## A\n## B"]}, "verify.doc[0].requires_sections[0]"),
        ({"requires_sections": ["ok", "x\ry"]}, "verify.doc[0].requires_sections[1]"),
        ({"forbids_markers": ["TODO\n"]}, "verify.doc[0].forbids_markers[0]"),
    ],
)
def test_a_doc_section_or_marker_with_a_line_break_is_a_load_error(
    entry: dict[str, Any], key: str
) -> None:
    """A document is matched one line at a time: such a section is never found, such a
    marker never seen (a forbids_markers that always passes)."""
    with pytest.raises(UserError) as info:
        parse_contract({"doc": [{"path": "r.md", **entry}]}, file="p.md")
    assert info.value.key == key
    assert "line break" in str(info.value)


def test_a_doc_section_with_surrounding_whitespace_still_loads() -> None:
    """Sections are compared stripped, so a trailing newline is harmless and kept legal."""
    parse_contract({"doc": [{"path": "r.md", "requires_sections": ["## Verdict\n"]}]}, file="p.md")


# -- prompt ids that cannot name a state file ----------------------------------


@pytest.mark.parametrize("bad", ["-rf", ".", "..", "...", ".hidden", "x" * 129])
def test_a_prompt_id_the_state_layer_refuses_is_a_load_error(tmp_path: Path, bad: str) -> None:
    packet = make_packet(tmp_path, {"01": {"id": bad}})
    with pytest.raises(UserError) as info:
        load_packet(packet)
    text = str(info.value)
    assert "01_step.prompt.md" in text and repr(bad) in text
    assert "not start with '.' or '-'" in text


@pytest.mark.parametrize("good", ["01", "1.a", "a-b", "_x", "9_z.-"])
def test_ids_the_state_layer_accepts_still_load(tmp_path: Path, good: str) -> None:
    packet = make_packet(tmp_path, {"01": {"id": good}})
    assert load_packet(packet).ids() == [good]


def test_run_refuses_a_dash_id_before_starting(tmp_path: Path) -> None:
    """Was: the run started and died with ``internal error: ValueError(...)`` exit 1."""
    packet = make_packet(tmp_path, {"01": {"id": "-rf"}})
    run = cli("run", packet)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "01_step.prompt.md: id:" in run.stderr and "'-rf'" in run.stderr
    assert "internal error" not in run.stderr and "Starting run" not in run.stdout


# -- a blank commit message ----------------------------------------------------


@pytest.mark.parametrize("blank", ["", "   ", "\n\t\n"])
def test_a_blank_commit_message_is_a_load_error(tmp_path: Path, blank: str) -> None:
    """Empty and whitespace-only alike: blank is refused (git would refuse it after the
    work, exit 3); leaving the key out gives the default message."""
    packet = make_packet(tmp_path, {"01": {"commit": blank}})
    with pytest.raises(UserError) as info:
        load_packet(packet)
    assert info.value.key == "commit"
    assert "01_step.prompt.md" in str(info.value) and "leave the key out" in str(info.value)


def test_run_refuses_a_blank_commit_before_any_session(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {
            "01": {
                "commit": "   ",
                "simulate": {"attempts": [{"writes": [{"path": "a.txt", "text": "x\n"}]}]},
                "verify": {"files_exist": ["a.txt"]},
            }
        },
    )
    run = cli("run", packet)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "commit: is blank" in run.stderr
    assert not (tmp_path / "repo" / "a.txt").exists()


def test_no_commit_key_is_the_default_message(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"name": "Hello"}})
    prompt = load_packet(packet).prompt("01")
    assert prompt.commit_message == "prompt-runner: 01 Hello"
