"""A pattern that matches any text is refused at load time (session 15, tester
finding 7): ``forbidden|`` matched the empty string everywhere, so a
``source_absent`` with it failed on every file that is not empty (listing the
same line over and over) and a ``matches`` with it could never fail."""

from __future__ import annotations

import pytest

from prompt_runner.errors import UserError
from prompt_runner.verifier import parse_contract

VACUOUS = ["forbidden|", "|x", "a*", "(?:foo)?", "^", "$", r"\s*", "(?s).*", "(?<!x)"]


@pytest.mark.parametrize("pattern", VACUOUS)
@pytest.mark.parametrize(
    "clause",
    [
        lambda p: {"source_absent": [{"pattern": p}]},
        lambda p: {"matches": [{"path": "a.txt", "pattern": p}]},
        lambda p: {"commands": [{"exec": "true", "stdout_matches": [p]}]},
    ],
    ids=["source_absent", "matches", "stdout_matches"],
)
def test_a_pattern_matching_any_text_is_refused(clause: object, pattern: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_contract(clause(pattern), file="prompts/01_x.prompt.md")  # type: ignore[operator]
    message = str(caught.value)
    assert f"/{pattern}/ matches any text" in message
    assert "make part of the pattern required" in message
    assert "prompts/01_x.prompt.md" in message


@pytest.mark.parametrize("pattern", ["^$", r"(?m)^\s*$", r"\bTODO\b", "x?y", r"\A\Z", "(?=x)"])
def test_a_pattern_that_some_text_lacks_still_loads(pattern: str) -> None:
    contract = parse_contract(
        {"source_absent": [{"pattern": pattern}], "matches": [{"path": "a", "pattern": pattern}]},
        file="prompts/01_x.prompt.md",
    )
    assert contract is not None
