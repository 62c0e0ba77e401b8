"""``contains`` and ``matches`` entries (``{path, text|pattern, repo?}``) are parsed
by one rule: the same sentences, and the path judged before the value, the value
before the repo."""

from __future__ import annotations

import pytest

from prompt_runner.errors import UserError
from prompt_runner.verifier import parse_contract


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ({"contains": "x"}, "verify.contains[0]: must be a mapping; write a mapping with keys "
         "path, repo, text."),
        ({"matches": ["x"]}, "verify.matches[0]: must be a mapping; write a mapping with keys "
         "path, pattern, repo."),
        ({"contains": [{"path": "../a", "text": 5, "repo": 7}]}, "verify.contains[0].path: "),
        ({"contains": [{"path": "a", "text": 5, "repo": 7}]}, "verify.contains[0].text: "),
        ({"matches": [{"path": "a", "pattern": "(", "repo": 7}]}, "verify.matches[0].pattern: "
         "is not a valid regular expression"),
        ({"matches": [{"path": "a", "pattern": "x", "repo": 7}]}, "verify.matches[0].repo: "),
    ],
)  # fmt: skip
def test_the_first_problem_of_an_entry_is_named(raw: dict[str, object], said: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_contract(raw, file="p.md", key="verify")
    assert str(caught.value).startswith(f"p.md: {said}")


def test_both_forms_load_with_their_repo() -> None:
    contract = parse_contract(
        {
            "contains": [{"path": "a.md", "text": "done", "repo": "docs"}],
            "matches": [{"path": "b.md", "pattern": "^ok$"}],
        },
        file="p.md",
        key="verify",
    )
    assert contract.to_raw() == {
        "contains": [{"path": "a.md", "repo": "docs", "text": "done"}],
        "matches": [{"path": "b.md", "pattern": "^ok$"}],
    }
