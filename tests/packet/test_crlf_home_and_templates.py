"""Two more front-matter writers keep the file's line end and BOM (after test_crlf_rewrites.py).

``init --default-profile NAME`` on an existing ``config.md`` and ``prompt new
--template FILE`` from a template saved with CRLF wrote their front matter
with LF line ends, before a body kept as it was (CRLF): a file with mixed line
ends, and a BOM dropped. Both now write the front matter with the file's (the
template's) own line end, and keep its BOM, fences and body. Real CLI runs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.cli import cli

VARIANTS = {"crlf": ("\r\n", ""), "crlf-bom": ("\r\n", "\ufeff"), "lf": ("\n", "")}


def _line_ends(data: bytes) -> set[bytes]:
    body = data.removeprefix("\ufeff".encode())
    return {b"\r\n" if line.endswith(b"\r\n") else b"\n" for line in body.splitlines(keepends=True)}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_init_default_profile_keeps_config_line_ends(tmp_path: Path, variant: str) -> None:
    newline, bom = VARIANTS[variant]
    home = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"
    assert cli("init").returncode == 0
    config = home / "config.md"
    text = '---\n# my settings\ndefault_profile: "simulated-default"\n---\n# Config\n\nmine\n'
    config.write_bytes((bom + text.replace("\n", newline)).encode("utf-8"))

    done = cli("init", "--default-profile", "z")

    assert done.returncode == 0, done.stderr
    data = config.read_bytes()
    assert data.startswith(bom.encode("utf-8")) and not data[len(bom.encode()) :].startswith(
        "\ufeff".encode()
    )
    assert _line_ends(data) == {newline.encode()}
    shown = data.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
    assert 'default_profile: "z"' in shown and "# my settings" in shown
    assert shown.endswith("---\n# Config\n\nmine\n")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_prompt_new_from_a_template_keeps_its_line_ends(tmp_path: Path, variant: str) -> None:
    newline, bom = VARIANTS[variant]
    made = cli("packet", "new", "demo", "--root", tmp_path)
    assert made.returncode == 0, made.stderr
    packet = tmp_path / "demo"
    template = tmp_path / "mine.prompt.md"
    text = '---\n# from my template\nverify:\n  files_exist: ["a.txt"]\n---\n# {{name}}\n\nDo it.\n'
    template.write_bytes((bom + text.replace("\n", newline)).encode("utf-8"))

    res = cli("prompt", "new", "02", "--packet", packet, "--template", template)

    assert res.returncode == 0, res.stderr
    (written,) = (packet / "prompts").glob("02*.prompt.md")
    data = written.read_bytes()
    assert data.startswith(bom.encode("utf-8"))
    assert _line_ends(data) == {newline.encode()}
    shown = data.decode("utf-8").removeprefix("\ufeff").replace("\r\n", "\n")
    assert 'id: "02"' in shown and "# from my template" in shown and "\nDo it.\n" in shown
    assert cli("plan", packet).returncode == 0  # it loads
