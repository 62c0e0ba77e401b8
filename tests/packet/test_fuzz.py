"""Property-based: any malformed prompt file ends in a clear UserError, never a crash."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.packets import make_packet

KEYS = [
    "id",
    "phase",
    "name",
    "targets",
    "commit",
    "depends_on",
    "verify",
    "simulate",
    "recovery",
    "timeout",
    "max_turns",
    "permission_mode",
    "provider",
    "model",
    "allowed_tools",
    "references",
    "bogus",
    "claude_opts",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=False),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [*KEYS, "path", "text", "kind", "attempts", "files_exist", "commands", "exec"]
            ),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)
front_matter = st.dictionaries(st.sampled_from(KEYS), values, max_size=6)


def _template() -> Path:
    base = Path(tempfile.mkdtemp(prefix="fuzz-"))
    return make_packet(base, {})


TEMPLATE = None


def _fresh() -> Path:
    global TEMPLATE
    if TEMPLATE is None:
        TEMPLATE = _template()
    work = Path(tempfile.mkdtemp(prefix="fuzz-case-"))
    shutil.copytree(TEMPLATE.parent, work / "p", symlinks=True)
    return work / "p" / TEMPLATE.name


def _check(content: bytes) -> None:
    packet = _fresh()
    (packet / "prompts").mkdir(exist_ok=True)
    (packet / "prompts" / "01_fuzz.prompt.md").write_bytes(content)
    try:
        load_packet(packet)
    except UserError as exc:
        text = str(exc)
        assert "prompts/01_fuzz.prompt.md" in text, text
        assert "\n" not in text.strip() or len(text) < 2000
    finally:
        shutil.rmtree(packet.parent.parent, ignore_errors=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(front_matter)
def test_random_front_matter_loads_or_fails_clearly(data: dict[str, object]) -> None:
    text = "---\n" + yaml.safe_dump(data, allow_unicode=True) + "---\n# body\n"
    _check(text.encode())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes_fail_clearly(data: bytes) -> None:
    _check(data)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text_after_front_matter_marker_fails_clearly(data: str) -> None:
    _check(("---\n" + data).encode("utf-8", errors="replace"))
