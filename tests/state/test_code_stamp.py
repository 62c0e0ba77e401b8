"""The caches are keyed by the code that made them, not by the version alone.

A new user's finding: with an editable install, a changed lint message under
the same version was still printed from the parsed-packet cache. The package
is copied to a temporary directory and run from there, so the test edits a
copy, never the tree under test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import prompt_runner
from prompt_runner.state.code_stamp import code_stamp

PACKAGE = Path(prompt_runner.__file__).parent


def _run(src: Path, *args: str, cwd: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPT_RUNNER_")}
    env["PYTHONPATH"] = str(src)
    env["PROMPT_RUNNER_CACHE_DIR"] = str(cache)
    return subprocess.run(
        [sys.executable, "-m", "prompt_runner", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_stamp_names_the_version_and_is_stable_in_a_process() -> None:
    stamp = code_stamp("state")
    assert stamp.startswith(prompt_runner.__version__ + "+")
    assert code_stamp("state") == stamp
    assert code_stamp() != stamp  # another set of files, another digest
    assert " " not in stamp and "\n" not in stamp


def test_changed_code_under_the_same_version_is_not_served_from_the_cache(
    tmp_path: Path,
) -> None:
    src = tmp_path / "src"
    shutil.copytree(PACKAGE, src / "prompt_runner", ignore=shutil.ignore_patterns("__pycache__"))
    cache, work = tmp_path / "cache", tmp_path / "work"
    work.mkdir()
    assert _run(src, "packet", "new", "demo", cwd=work, cache=cache).returncode == 0
    (work / "demo" / "prompts" / "09_none.prompt.md").write_text(
        "---\nid: '09'\nname: nothing checked\n---\nDo a thing.\n", encoding="utf-8"
    )  # no verify: lint's prompt_without_verify warning
    first = _run(src, "packet", "lint", "demo", cwd=work, cache=cache)
    assert any(cache.rglob("*")), "the first lint keeps its parse in the cache"
    messages = src / "prompt_runner" / "packet" / "lint" / "messages.py"
    marker = "MARKED BY THE TEST"
    old = messages.read_text(encoding="utf-8")
    changed = old.replace(
        "the prompt has no verification items", f"{marker}: the prompt has no verification items"
    )
    assert changed != old
    messages.write_text(changed, encoding="utf-8")

    second = _run(src, "packet", "lint", "demo", cwd=work, cache=cache)
    uncached = _run(src, "packet", "lint", "demo", cwd=work, cache=tmp_path / "empty")

    assert "prompt_without_verify" in first.stdout and marker not in first.stdout
    assert marker in uncached.stdout
    assert (second.returncode, second.stdout, second.stderr) == (
        uncached.returncode,
        uncached.stdout,
        uncached.stderr,
    )
