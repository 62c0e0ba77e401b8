"""``api_calls.NamedTuple``: the results' base on the CLI's hot paths makes the
very class ``typing.NamedTuple`` makes, without importing ``typing``."""

from __future__ import annotations

import pickle
import typing

import pytest

from prompt_runner import api_calls


class Typed(typing.NamedTuple):
    """A result."""

    name: str
    count: int = 0

    def twice(self) -> int:
        return 2 * self.count


class Light(api_calls.NamedTuple):
    """A result."""

    name: str
    count: int = 0

    def twice(self) -> int:
        return 2 * self.count


def test_it_makes_the_tuple_typing_makes() -> None:
    typed, light = Typed("a", 3), Light("a", 3)
    assert light == typed == ("a", 3)
    assert isinstance(light, tuple) and Light.__mro__[1:] == Typed.__mro__[1:]
    assert Light._fields == Typed._fields == ("name", "count")
    assert Light._field_defaults == Typed._field_defaults == {"count": 0}
    assert Light("b") == ("b", 0) and light.twice() == typed.twice() == 6
    assert light._asdict() == typed._asdict() and light._replace(count=1) == ("a", 1)
    assert repr(light) == "Light(name='a', count=3)"
    assert Light.__doc__ == Typed.__doc__ == "A result."
    assert Light.__module__ == Typed.__module__ and Light.__qualname__ == "Light"
    assert list(Light.__annotations__) == ["name", "count"]
    assert pickle.loads(pickle.dumps(light)) == light
    with pytest.raises(AttributeError):
        light.name = "b"  # type: ignore[misc]


def test_a_field_without_a_default_after_one_with_is_refused() -> None:
    with pytest.raises(TypeError, match="without a default"):

        class Bad(api_calls.NamedTuple):
            first: int = 0
            second: int


def test_the_tuple_methods_cannot_be_overwritten() -> None:
    with pytest.raises(AttributeError, match="_asdict"):

        class Bad(api_calls.NamedTuple):
            first: int

            def _asdict(self) -> dict[str, int]:
                return {}
