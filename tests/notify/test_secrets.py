"""{env:NAME} is expanded only when sent; what is shown of a URL is redacted."""

from __future__ import annotations

import pytest

from prompt_runner.notify.secrets import MissingSecret, Scrub, expand, redact


def test_expand_reads_the_environment_and_remembers_the_values() -> None:
    scrub = Scrub()
    url = expand("json://h/x?-token={env:T}&-b={env:B}", {"T": "tok en/1", "B": "bbb"}, scrub)
    assert url == "json://h/x?-token=tok%20en%2F1&-b=bbb"
    assert scrub.clean("sent tok en/1 and tok%20en%2F1 and bbb") == "sent **** and **** and ****"


def test_an_unset_variable_is_named_never_guessed() -> None:
    with pytest.raises(MissingSecret, match="environment variable T is not set"):
        expand("json://h/{env:T}", {"T": ""}, Scrub())


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("json://127.0.0.1:8080/hook", "json://127.0.0.1:8080/hook"),
        ("json://h/hook?-token={env:T}", "json://h/hook?-token={env:T}"),
        ("json://u:{env:P}@h/x", "json://u:{env:P}@h/x"),
        ("json://u:hunter2@h/x", "json://u:****@h/x"),
        ("jsons://h/x?-token=abc&method=POST", "jsons://h/x?-token=****&method=POST"),
        ("json://h/hooks/a1b2c3d4e5f6g7h8i9", "json://h/hooks/****"),
        ("json://h/x?+Authorization=Bearer%20xyz", "json://h/x?+Authorization=****"),
        ("slack://TokenA/TokenB/TokenC/#general", "slack://****"),
        ("tgram://123456:ABCdef/4242", "tgram://****"),
        ("not a url", "****"),
    ],
)
def test_redact_masks_what_may_be_a_secret(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_redacted_parts_are_scrubbed_from_messages() -> None:
    scrub = Scrub()
    redact("json://u:hunter2@h/x?-token=abcdef", scrub)
    redact("slack://TokenA1/TokenB2/TokenC3", scrub)
    text = "failed json://u:hunter2@h/x?-token=abcdef and slack TokenB2"
    assert scrub.clean(text) == "failed json://u:****@h/x?-token=**** and slack ****"
