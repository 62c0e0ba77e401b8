"""strict_yaml.load builds plain documents itself and leaves the rest to PyYAML:
either way the values, and the errors, are PyYAML's safe loader's."""

from __future__ import annotations

import gc
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from prompt_runner import strict_yaml


def pyyaml(text: str) -> Any:
    """``text`` as the strict loader's PyYAML constructor alone builds it."""
    loader = strict_yaml._loader()(text)
    try:
        node = loader.get_single_node()
        return None if node is None else loader.construct_document(node)
    finally:
        loader.dispose()


def outcome(fn: Any, text: str) -> tuple[str, Any]:
    """The value's repr (key order, types and self-reference shown), or the error."""
    try:
        return "value", repr(fn(text))
    except Exception as exc:  # the same error type and sentence
        return "error", (type(exc).__name__, str(exc))


EDGE_CASES = [
    "a: 1\nb: [1, 2.5, -3, 0x1f, 0o17, 1_000, .inf, -.inf, ~, null, yes, no, on, Off]\n",
    "when: 2024-01-02\nstamp: 2024-01-02 03:04:05.5 +01:00\nraw: !!binary aGVsbG8=\n",
    "base: &b {x: 1, y: [1, 2]}\nmore: *b\nlist: &l [a, b]\nagain: *l\n",
    "base: &b {x: 1}\nmerged:\n  <<: *b\n  y: 2\n",
    "base: &b {x: 1}\nmerged:\n  <<: [*b, {z: 3}]\n  x: 5\n",
    "a: &a [1, *a]\n",
    "a: &a {k: *a}\n",
    "a: 1\na: 2\n",
    "x:\n  y: 1\n  y: 2\n",
    "1: one\n1.0: float one\n",
    "true: 1\n1: 2\n",
    "[1, 2]: list key\n",
    "{a: 1}: map key\n",
    "a: !!int abc\n",
    "a: !!float abc\n",
    "a: !custom thing\n",
    "a: !!set {x, y}\n",
    "a: !!omap [{x: 1}]\n",
    "a: !!pairs [{x: 1}]\n",
    "a: !!str 12\nb: !!map {c: 1}\nc: !!seq [1]\n",
    "a: !!str {b: 1}\n",
    "a: !!python/object:os.system x\n",
    "? - complex\n: key\n",
    "= : value key\n",
    "a: 2001-13-45\n",
    "a: 0b101\nb: 190:20:30\nc: -0\nd: +12\n",
    "just a scalar\n",
    "- a\n- b\n",
    "",
    "a: |\n  block\n  text\nb: >\n  folded\n",
    "a: 'quoted: yes'\nb: \"esc\\t\\u00e9\"\n",
    "notify:\n  on: [run_failed]\n  off: 1\n",
    "a: [\n",
    "a: b: c\n",
]


@pytest.mark.parametrize("text", EDGE_CASES)
def test_edge_cases_load_as_pyyaml_loads_them(text: str) -> None:
    assert outcome(strict_yaml.load, text) == outcome(pyyaml, text)


def test_shared_aliases_stay_shared() -> None:
    data = strict_yaml.load("base: &b {x: [1]}\nmore: *b\n")
    assert data["base"] is data["more"]


def test_a_plain_document_does_not_go_through_pyyaml_s_constructor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(self: Any, node: Any) -> Any:
        raise AssertionError("PyYAML's constructor was used")

    monkeypatch.setattr(strict_yaml._loader(), "construct_document", refuse)
    text = 'id: "01"\nverify:\n  files_exist: [a.txt]\ntimeout: 600000\nflag: true\n'
    assert strict_yaml.load(text) == {
        "id": "01",
        "verify": {"files_exist": ["a.txt"]},
        "timeout": 600000,
        "flag": True,
    }
    with pytest.raises(AssertionError, match="constructor was used"):
        strict_yaml.load("base: &b {x: 1}\nm:\n  <<: *b\n")  # a merge key: PyYAML's


keys = st.one_of(st.text(max_size=8), st.integers(-50, 50), st.booleans(), st.none())
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False),
    st.text(max_size=20),
    st.dates(),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)),
    max_leaves=25,
)


@settings(max_examples=150, deadline=None)
@given(documents, st.sampled_from(["block", "flow"]))
def test_any_dumped_document_loads_as_pyyaml_loads_it(data: Any, style: str) -> None:
    text = yaml.safe_dump(data, default_flow_style=style == "flow", allow_unicode=True)
    assert outcome(strict_yaml.load, text) == outcome(pyyaml, text)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="ab:-[]{}&*!<,\n '\"?|>#~1", max_size=40))
def test_any_text_loads_or_fails_as_pyyaml_does(text: str) -> None:
    assert outcome(strict_yaml.load, text) == outcome(pyyaml, text)


def test_a_plain_load_leaves_no_garbage_for_the_cycle_collector() -> None:
    """Loads run with the collector paused (packet/gc_pause.py): what one leaves in
    reference cycles would pile up, the loader and every value with it."""
    text = "a: 1\nb: [1, {c: d}]\nwhen: 2024-01-02\n"
    strict_yaml.load(text)  # caches filled once
    gc.collect()
    gc.disable()
    try:
        for _ in range(20):
            strict_yaml.load(text)
        assert gc.collect() == 0
    finally:
        gc.enable()
