"""Front matter is refused for what its aliases add, not for its size: a
prompt of 40,000 plain ``contains`` entries (1.44 MB, no ``&`` or ``*``)
was refused with "front matter expands to more than 100,000 values (YAML
anchors/aliases); remove the aliases" -- there were no aliases to remove (a
tester's finding). The limit is the ``yaml`` clause's: at most 100,000 values
beyond those the document writes; a billion-laughs document is still refused.

The packet runs through the real CLI as a subprocess.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet.frontmatter import MAX_VALUES, parse_yaml
from tests.helpers.packets import make_packet

CLI = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "prompt-runner"


def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CLI), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_a_prompt_with_40000_plain_contains_entries_plans(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["f1.txt"]}}})
    prompt = packet / "prompts" / "01_step.prompt.md"
    entries = '    - {path: f1.txt, text: "hello"}\n' * 40_000
    text = prompt.read_text().replace("verify:\n", "verify:\n  contains:\n" + entries, 1)
    prompt.write_text(text)
    assert len(text) > 1_400_000 and "&" not in text and "*" not in text
    res = _cli("plan", "demo", cwd=tmp_path)
    said = res.stdout + res.stderr
    assert res.returncode == 0, said
    assert "expands to more than" not in said and "alias" not in said


def _aliased(references: int) -> str:
    """50,000 values written out, a 1,000-value list ``b`` (999 items), and
    ``references`` aliases of it: each adds 999 values to those written."""
    written = ", ".join(["1"] * 50_000)
    anchored = ", ".join(["1"] * 999)
    aliases = "".join(f"c{i}: *b\n" for i in range(references))
    return f"a: [{written}]\nb: &b [{anchored}]\n" + aliases


def test_the_limit_counts_what_the_aliases_add_not_what_is_written() -> None:
    data = parse_yaml(_aliased(100), file="x.md")  # adds 99,900: loads (~150,000 values)
    assert len(data["a"]) == 50_000 and data["c99"] == [1] * 999
    started = time.monotonic()
    with pytest.raises(UserError) as info:  # adds 100,899: refused
        parse_yaml(_aliased(101), file="x.md")
    assert time.monotonic() - started < 5
    assert str(info.value) == (
        f"x.md: front matter expands to more than {MAX_VALUES:,} values (YAML anchors/aliases)"
        "; remove the aliases."
    )
