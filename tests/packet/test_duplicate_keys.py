"""A key given twice in YAML front matter is an error naming the file and the key.

PyYAML keeps the last of two equal keys silently: a second ``verify:`` block
replaced the first contract without a word.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prompt_runner import strict_yaml
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.profiles import load_profile
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet

SECOND_VERIFY = "verify:\n  files_exist: [b.txt]\n"


def add_front_lines(file: Path, lines: str) -> None:
    """Append ``lines`` at the end of ``file``'s front matter."""
    text = file.read_text(encoding="utf-8")
    head, sep, rest = text.partition("\n---\n")
    file.write_text(head + "\n" + lines.rstrip("\n") + sep + rest, encoding="utf-8")


def test_a_second_verify_block_in_a_prompt_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # messages name files from here: demo/prompts/...
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}})
    prompt = next((packet / "prompts").glob("*.prompt.md"))
    add_front_lines(prompt, SECOND_VERIFY)
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    text = str(caught.value)
    assert text.startswith(f"demo/prompts/{prompt.name}: duplicate key 'verify' at line ")
    assert "YAML would silently keep only the last one; keep one of them" in text
    for command in ("run", "plan", "verify"):
        proc = cli(command, packet)
        assert proc.returncode == 2 and "duplicate key 'verify'" in proc.stderr, proc.stderr
    lint = cli("packet", "lint", packet)
    assert lint.returncode == 1 and "duplicate key 'verify'" in lint.stdout


def test_the_lines_are_the_file_lines(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    manifest = packet / "prompt_runner_packet.md"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines, 1) if line.startswith("name:"))
    add_front_lines(manifest, "name: again\n")
    repeat = lines.index("---", 1) + 1  # the closing line's number: the new line takes it
    with pytest.raises(
        UserError, match=rf"duplicate key 'name' at line {repeat} \(first at line {first}\)"
    ):
        load_packet(packet)


def test_nested_and_flow_duplicates_are_refused_merge_keys_may_override(tmp_path: Path) -> None:
    with pytest.raises(strict_yaml.DuplicateKeyError, match="duplicate key 'path' twice on line 2"):
        strict_yaml.load("contains:\n  - {path: a.txt, path: b.txt, text: x}\n")
    with pytest.raises(strict_yaml.DuplicateKeyError, match="duplicate key 'x' at line 3"):
        strict_yaml.load("a:\n  x: 1\n  x: 2\n")
    merged = strict_yaml.load("base: &b {x: 1, y: 1}\nc:\n  <<: *b\n  x: 2\n")
    assert merged["c"] == {"x": 2, "y": 1}


def test_a_profile_with_a_repeated_key_is_refused() -> None:
    profiles = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner" / "profiles"
    profiles.mkdir(parents=True, exist_ok=True)
    (profiles / "twice.md").write_text(
        "---\nname: twice\nprovider: simulated\nprovider: claude\n---\n", encoding="utf-8"
    )
    with pytest.raises(UserError, match=r"twice\.md: duplicate key 'provider' at line 4"):
        load_profile("twice")
