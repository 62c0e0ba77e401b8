"""Hypothesis machinery shared by the manifest fuzz tests (workspace, fleet).

``scalars(...)`` and ``values(...)`` build the random YAML values, ``manifests(...)``
the random documents (random keys, or one key of a valid manifest replaced), and
``check_manifest(...)`` writes one document to a fresh directory and asserts that
loading it either succeeds or fails in one sentence naming the file, that the
command refuses it with exit 2 and one ``error:`` line, and that nothing is written.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

from prompt_runner.cli.main import main
from prompt_runner.errors import UserError


def scalars(samples: Sequence[str]) -> st.SearchStrategy[Any]:
    """Random YAML scalars, plus ``samples`` (strings the loader gives meaning to)."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-5, 10**6),
        st.floats(allow_nan=False),
        st.text(max_size=12),
        st.sampled_from(list(samples)),
    )


def values(leaves: st.SearchStrategy[Any], inner: Sequence[str]) -> st.SearchStrategy[Any]:
    """Scalars, lists and mappings keyed by ``inner`` keys, nested up to 8 leaves."""
    return st.recursive(
        leaves,
        lambda nested: st.one_of(
            st.lists(nested, max_size=3),
            st.dictionaries(st.sampled_from(list(inner)), nested, max_size=3),
        ),
        max_leaves=8,
    )


def manifests(
    keys: Sequence[str],
    leaves: st.SearchStrategy[Any],
    good: Mapping[str, Any],
    *more: st.SearchStrategy[dict[str, Any]],
) -> st.SearchStrategy[dict[str, Any]]:
    """Documents of random top-level ``keys``, or ``good`` with one key replaced, or ``more``."""
    return st.one_of(
        st.dictionaries(st.sampled_from(list(keys)), leaves, max_size=6),
        # one key of a valid manifest replaced: the errors deep inside
        st.tuples(st.sampled_from(list(keys)), leaves).map(lambda kv: {**good, kv[0]: kv[1]}),
        *more,
    )


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def check_manifest(
    content: bytes,
    *,
    name: str,
    load: Callable[[Path], object],
    command: Sequence[str],
    prefix: str,
    beside: Mapping[str, Any] | None = None,
    error_names_manifest: bool = False,
) -> None:
    """Write ``content`` as ``name`` in a fresh directory and check loading it.

    ``beside`` maps other file names to YAML documents written next to it first
    (a refusal may name one of them instead of the manifest); ``command`` is the
    CLI argv before the manifest path; ``error_names_manifest`` also requires the
    CLI's error line to contain the manifest's path.
    """
    work = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        others = dict(beside or {})
        for other, doc in others.items():
            (work / other).write_text(yaml.safe_dump(doc))
        manifest = work / name
        manifest.write_bytes(content)
        for home in ("XDG_STATE_HOME", "XDG_DATA_HOME"):
            os.environ[home] = str(work / home.lower())
        try:
            load(manifest)
        except UserError as exc:
            text = str(exc)
            assert text.startswith((str(manifest), *(str(work / o) for o in others))), text
            assert "\n" not in text.strip() and "Traceback" not in text
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main([*command, str(manifest)])
            assert code == 2, err.getvalue()
            assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: ")
            if error_names_manifest:
                assert str(manifest) in err.getvalue()
        assert _tree(work) == sorted([name, *others])  # loading (or refusing) writes nothing
    finally:
        shutil.rmtree(work, ignore_errors=True)
