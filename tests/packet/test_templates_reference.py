"""Templates as the reference system defines them (issue 14).

A template's front matter holds defaults (often only a ``verify:`` skeleton);
``prompt new`` merges the generated ``id/phase/name/targets/commit`` (and the
template's name) into it. ``--template`` takes a name or a file path.
"""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.scaffold import new_packet, new_prompt
from tests.helpers.packets import write_front_matter
from tests.packet._packets import cli

# The shape of the reference's own templates: no id/phase/name/targets/commit.
SKELETON = """---
# reminder: files_exist alone is satisfied by an empty file
verify:
  files_exist: []
  contains: []
  commands: []
---
# {{name}}

## Required Reading

<!-- prompt_runner:placeholder required_reading -->
- The ADRs this prompt implements ({{id}}, phase {{phase}}, in {{targets_csv}}).

## Targets

{{targets_bullets}}
"""


def home() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"


def front_of(file: Path) -> dict[str, object]:
    data = yaml.safe_load(file.read_text().split("---\n")[1])
    assert isinstance(data, dict)
    return data


def test_generated_keys_are_merged_into_a_template_without_them(tmp_path: Path) -> None:
    (home() / "templates").mkdir(parents=True)
    (home() / "templates" / "from-adr.prompt.md").write_text(SKELETON)
    packet = new_packet("demo", root=tmp_path, repos=[("app", str(tmp_path))])
    file = new_prompt(
        packet, "1", phase="2", name="Capture boundaries", commit="docs: x", template="from-adr"
    )
    text = file.read_text()
    assert text.startswith("---\n# reminder: files_exist alone")  # the template's comment
    assert (
        'id: "01"\nphase: 2\nname: "Capture boundaries"\ntemplate: "from-adr"\n'
        'targets:\n  - "app"\ncommit: "docs: x"\nverify:\n  files_exist: []\n'
    ) in text
    assert front_of(file) == {
        "id": "01",
        "phase": 2,
        "name": "Capture boundaries",
        "template": "from-adr",
        "targets": ["app"],
        "commit": "docs: x",
        "verify": {"files_exist": [], "contains": [], "commands": []},
    }
    assert "# Capture boundaries\n" in text
    assert "(01, phase 2, in app)" in text and "- `app`" in text
    assert load_packet(packet).ids() == ["01"]


def test_template_path_is_a_file_path(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path / "R", repos=[("app", str(tmp_path))])
    custom = tmp_path / "tpl" / "review.prompt.md"
    custom.parent.mkdir()
    custom.write_text(SKELETON)
    file = new_prompt(packet, "02", name="Review", template=str(custom))
    assert front_of(file)["template"] == "review"
    res = cli(
        "prompt", "new", "03", "--packet", str(packet), "--name", "Relative",
        "--template", "tpl/review.prompt.md", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert front_of(packet / "prompts" / "03_relative.prompt.md")["name"] == "Relative"
    missing = cli("prompt", "new", "04", "--packet", str(packet), "--template", "nope/x.md")
    assert missing.returncode == 2
    assert "nope/x.md" in missing.stderr and "Traceback" not in missing.stderr


def test_a_profile_prompt_template_applies_when_the_manifest_names_none(tmp_path: Path) -> None:
    (home() / "templates").mkdir(parents=True)
    (home() / "templates" / "mine.prompt.md").write_text(SKELETON)
    write_front_matter(
        home() / "profiles" / "authoring.md",
        {"provider": "simulated", "prompt_template": "mine"},
        "# Profile authoring\n",
    )
    packet = new_packet("demo", root=tmp_path, profile="authoring", repos=[("app", "/x")])
    assert front_of(new_prompt(packet, "01"))["template"] == "mine"
    # --template still wins
    assert front_of(new_prompt(packet, "02", template="default"))["template"] == "default"


def test_default_commit_message_is_the_reference_one(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path, repos=[("app", "/x")])
    assert front_of(new_prompt(packet, "01", name="Create Hello!"))["commit"] == (
        "chore: create-hello"
    )
