"""The canonical event as a value (issue 19 writes its __init__ out): made as the
dataclass's own would make it -- defaults, keywords, frozen, equal, replace, pickle."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import time

import pytest

from prompt_runner.providers.events import Event, now_ms


def test_an_event_is_made_as_the_dataclass_would_make_it() -> None:
    before = now_ms()
    event = Event("assistant_text")
    assert before <= event.at_ms <= now_ms()
    assert event.data == {} and type(event.data) is dict
    assert Event("thinking").data is not Event("thinking").data  # a new dict each time
    data = {"text": "hi"}
    assert Event("assistant_text", data).data is data  # kept, not copied
    assert Event(kind="raw", data=data, at_ms=5) == Event("raw", data, 5)
    assert Event("raw", at_ms=5).to_dict() == {"kind": "raw", "at_ms": 5}
    assert repr(Event("raw", {}, 5)) == "Event(kind='raw', data={}, at_ms=5)"
    assert Event("raw", None, None).data is None  # type: ignore[arg-type] # as given
    with pytest.raises(TypeError):
        Event()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Event("raw", {}, 1, 2)  # type: ignore[call-arg]


def test_an_event_stays_frozen_and_copies_as_a_value() -> None:
    event = Event("usage", {"input_tokens": 1}, 7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.kind = "raw"  # type: ignore[misc]
    assert not hasattr(event, "__dict__")  # slots
    assert dataclasses.replace(event, at_ms=8) == Event("usage", {"input_tokens": 1}, 8)
    assert pickle.loads(pickle.dumps(event)) == event
    assert copy.deepcopy(event) == event
    assert [f.name for f in dataclasses.fields(Event)] == ["kind", "data", "at_ms"]
    assert hash(Event("raw", at_ms=1).kind) == hash("raw")


def test_the_time_of_an_event_is_read_when_it_is_made(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time, "time_ns", lambda: 1_234_567_890_123_456)
    assert Event("raw").at_ms == 1_234_567_890
