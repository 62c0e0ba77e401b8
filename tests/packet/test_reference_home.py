"""Acceptance (issue 14): what the reference system's own commands write loads, plans and runs.

Fixtures, reproduced from the reference's guides and example packets in the
format its front-matter writer uses (keys sorted, strings double-quoted):

* ``tests/data/reference_home/``: what ``init`` writes (``config.md`` naming
  ``codex-default``, ``profiles/codex-default.md``, ``profiles/simulated-default.md``,
  ``templates/default.prompt.md``, ``templates/from-adr.prompt.md``) and what
  ``profile new claude-safe --provider claude --model haiku --prompt-template
  from-adr --permission default --tools Read,Bash`` writes (every codex-default
  value, then the flags);
* ``tests/data/reference_scaffold/demo/``: what ``packet new demo --profile
  simulated-default --provider simulated --model simulated-demo --repo
  app=./workspace --default-repo app --prompt-template from-adr`` and then
  ``prompt new 01 ... `` (the packet's ``from-adr``) and ``prompt new 02 ...
  --template default`` write.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from prompt_runner import api, lint_packet
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.profiles import list_profiles, list_templates, load_profile
from tests.helpers.cli import cli
from tests.helpers.gitrepo import make_git_repo
from tests.helpers.packets import make_packet

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture
def reference_home() -> Path:
    """The reference-written home directory, installed as this test's profile store."""
    home = Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"
    shutil.copytree(DATA / "reference_home", home)
    return home


@pytest.fixture
def scaffold(tmp_path: Path) -> Path:
    packet = tmp_path / "demo"
    shutil.copytree(DATA / "reference_scaffold" / "demo", packet)
    make_git_repo(packet / "workspace")
    return packet


def split(file: Path) -> tuple[dict[str, object], str]:
    _, front, body = file.read_text().split("---\n", 2)
    data = yaml.safe_load(front)
    assert isinstance(data, dict)
    return data, body


def test_the_reference_home_loads(reference_home: Path) -> None:
    assert [n for n, _ in list_profiles()] == ["claude-safe", "codex-default", "simulated-default"]
    assert all(source == "home" for _, source in list_profiles())
    assert dict(list_templates()) == {"default": "home", "from-adr": "home"}
    codex = load_profile("codex-default")
    assert (codex.reasoning_effort, codex.cli_confirmation, codex.log_meta) == (
        "xhigh",
        "require",
        "none",
    )
    claude = load_profile("claude-safe")
    assert claude.prompt_template == "from-adr" and claude.allowed_tools == ["Read", "Bash"]
    assert load_profile("simulated-default").recovery is not None


def test_a_packet_naming_no_profile_gets_the_configured_codex_default(
    reference_home: Path, tmp_path: Path
) -> None:
    packet = make_packet(
        tmp_path, {"01": {}}, manifest={"profile": None, "provider": None, "model": None}
    )
    doc = json.loads(cli("plan", packet, "--json").stdout)
    first = doc["prompts"][0]
    assert doc["profile"] == "codex-default"
    assert (first["provider"], first["model"], first["reasoning_effort"]) == (
        "codex",
        "gpt-5.6-luna",
        "xhigh",
    )
    assert first["cli_confirmation"] == "require"
    assert first["allowed_tools"] == ["Read", "Edit", "Write", "Bash"]
    assert first["sources"]["reasoning_effort"] == "profile"


def test_a_reference_scaffold_loads_plans_and_lints(reference_home: Path, scaffold: Path) -> None:
    packet = load_packet(scaffold)
    assert packet.ids() == ["01", "02"] and packet.manifest.prompt_dir == "prompts"
    plan = api.plan(scaffold)
    assert plan.profile == "simulated-default"
    first = plan.prompts[0]
    assert (first.provider, first.model, first.reasoning_effort) == (
        "simulated",
        "simulated-demo",
        "low",
    )
    assert first.recovery.retry.base_delay_ms == 1000  # the manifest's, over the profile's 0
    assert first.cwd == (scaffold / "workspace").resolve()
    report = lint_packet(scaffold)
    assert report.errors == 0
    assert {f.kind for f in report.findings} == {"placeholder_marker", "prompt_without_verify"}
    # a scaffold is not sent as it is: its placeholders would be the task
    refused = cli("run", scaffold)
    assert refused.returncode == 2 and "placeholder" in refused.stderr


def test_prompt_new_with_the_reference_templates(reference_home: Path, scaffold: Path) -> None:
    res = cli(
        "prompt", "new", "03", "--packet", str(scaffold), "--phase", "1",
        "--name", "Write summary", "--targets", "app", "--commit", "docs: summary",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    front, body = split(scaffold / "prompts" / "03_write_summary.prompt.md")
    assert front == {
        "id": "03",
        "phase": 1,
        "name": "Write summary",
        "template": "from-adr",
        "targets": ["app"],
        "commit": "docs: summary",
        "verify": {"files_exist": [], "contains": [], "commands": []},
    }
    assert body.startswith("# Write summary\n") and "## Architecture Context" in body
    res = cli("prompt", "new", "04", "--packet", str(scaffold), "--template", "default")
    assert res.returncode == 0, res.stderr
    assert split(scaffold / "prompts" / "04_prompt_04.prompt.md")[0]["template"] == "default"
    assert load_packet(scaffold).ids() == ["01", "02", "03", "04"]


def test_a_filled_in_reference_scaffold_runs_on_the_simulated_provider(
    reference_home: Path, scaffold: Path
) -> None:
    """The author writes the sections the scaffold asks for; every key the reference wrote stays."""
    for file in sorted((scaffold / "prompts").glob("*.prompt.md")):
        front, _ = split(file)
        out = f"{front['id']}.md"
        front["verify"] = {**front["verify"], "files_exist": [out]}  # type: ignore[dict-item]
        front["simulate"] = {"attempts": [{"writes": [{"path": out, "text": "done\n"}]}]}
        text = yaml.safe_dump(front, sort_keys=True)
        file.write_text(f"---\n{text}---\n# {front['name']}\n\nWrite `{out}`.\n")
    manifest = scaffold / "prompt_runner_packet.md"
    manifest.write_text(manifest.read_text().replace("base_delay_ms: 1000", "base_delay_ms: 0"))
    proc = cli("run", scaffold)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    state = api.status(scaffold)["prompts"]
    assert {pid: rec["status"] for pid, rec in state.items()} == {
        "01": "completed",
        "02": "completed",
    }
    assert (scaffold / "workspace" / "02.md").read_text() == "done\n"
