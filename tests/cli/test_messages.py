"""B: validation errors in our words; directories named like prompt files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from prompt_runner.errors import UserError
from prompt_runner.packet.validation import validate_model
from tests.cli.inproc import PR
from tests.helpers.packets import make_packet


class Bounded(BaseModel):
    ge: Annotated[int, Field(ge=0)] = 0
    gt: Annotated[int, Field(gt=0)] = 1
    le: Annotated[int, Field(le=5)] = 1
    lt: Annotated[int, Field(lt=5)] = 1
    items: Annotated[list[int], Field(min_length=2)] = [1, 2]
    few: Annotated[list[int], Field(max_length=1)] = []
    name: Annotated[str, Field(min_length=1)] = "x"
    short: Annotated[str, Field(max_length=3)] = "x"
    ratio: float = 0.0


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        ({"ge": -1}, "x.md: ge: must be 0 or more (got -1); use a larger number."),
        ({"gt": 0}, "x.md: gt: must be more than 0 (got 0); use a larger number."),
        ({"le": 6}, "x.md: le: must be 5 or less (got 6); use a smaller number."),
        ({"lt": 5}, "x.md: lt: must be less than 5 (got 5); use a smaller number."),
        ({"items": [1]}, "x.md: items: must have at least 2 items; add to it."),
        ({"few": [1, 2]}, "x.md: few: must have at most 1 item; shorten it."),
        ({"name": ""}, "x.md: name: must not be empty; give it a value."),
        ({"short": "abcd"}, "x.md: short: must have at most 3 characters; shorten it."),
        ({"ratio": "x"}, "x.md: ratio: 'x' is not a number; write a number."),
    ],
)
def test_pydantic_wording_is_translated(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(UserError) as info:
        validate_model(Bounded, data, file="x.md")
    assert str(info.value) == expected
    assert "Input should" not in str(info.value) and "should have" not in str(info.value)


def test_negative_retry_attempts_in_the_manifest_reads_naturally(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(
        tmp_path, {"01": {}}, manifest={"recovery": {"retry": {"max_attempts": -1}}}
    )
    result = pr("plan", packet)
    assert result.code == 2
    assert "recovery.retry.max_attempts: must be 0 or more (got -1)" in result.err
    assert "Input should" not in result.err


def test_a_directory_named_like_a_prompt_file_is_named_as_such(tmp_path: Path, pr: PR) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    (packet / "prompts" / "02_x.prompt.md").mkdir()
    result = pr("plan", packet)
    assert result.code == 2
    assert (
        "demo/prompts/02_x.prompt.md: is a directory, not a prompt file; rename or remove it."
        in result.err
    )
    assert "permissions" not in result.err
    # `packet lint` says the same sentence (it said "not a file; replace it with a
    # regular file" -- a fix that does not fit a directory named as a prompt)
    linted = pr("packet", "lint", packet)
    assert linted.code != 0
    assert "02_x.prompt.md: is a directory, not a prompt file; rename or remove it." in (
        linted.out + linted.err
    )
    assert "replace it with a regular file" not in linted.out + linted.err


def test_manifest_errors_name_the_packet_directory(
    tmp_path: Path, pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # messages name files from here: demo/...
    packet = make_packet(tmp_path, {"01": {}}, manifest={"bogus_key": 1})
    result = pr("plan", packet)
    assert result.code == 2
    assert result.err.startswith("error: demo/prompt_runner_packet.md: bogus_key: unknown key")


def test_an_error_names_its_file_from_the_current_directory(
    tmp_path: Path, pr: PR, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = make_packet(tmp_path, {"01": {"depends_on": ["09"]}})
    bad = packet / "prompts" / "01_step.prompt.md"
    for cwd, shown in (
        (packet, "prompts/01_step.prompt.md"),  # inside the packet: openable from here
        (tmp_path, "demo/prompts/01_step.prompt.md"),
        (packet / "prompts", "01_step.prompt.md"),
        (tmp_path / "repo", str(bad.resolve())),  # not under the current directory
    ):
        monkeypatch.chdir(cwd)
        result = pr("plan", packet)
        assert result.code == 2, result.err
        assert result.err.startswith(f"error: {shown}: depends_on[0]:"), (cwd, result.err)
        assert (cwd / shown).is_file()
    # an error raised with the file's absolute path is shown the same way
    monkeypatch.chdir(packet)
    (packet / "prompts" / "01_step.prompt.md").write_text("---\nid: '01'\nname: a\n---\n")
    unknown = pr("plan", "--json", "07")
    assert unknown.code == 2 and unknown.err.startswith(f"error: {packet}: unknown prompt id")
    monkeypatch.chdir(tmp_path)  # an unknown id names the packet, relative to here
    unknown = pr("plan", "--json", "demo", "07")
    assert unknown.code == 2 and unknown.err.startswith("error: demo: unknown prompt id '07'")
