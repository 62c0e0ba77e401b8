"""init, profiles and templates in the home-scoped store (a temp XDG_CONFIG_HOME per test)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.helpers.cli import cli
from tests.helpers.packets import make_packet, write_front_matter


def home() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "prompt_runner"


def test_init_creates_profiles_and_templates_without_overwriting() -> None:
    proc = cli("init")
    assert proc.returncode == 0, proc.stderr
    for rel in (
        "config.md",
        "profiles/simulated-default.md",
        "profiles/codex-default.md",
        "templates/default.prompt.md",
        "templates/from-adr.prompt.md",
    ):
        assert (home() / rel).is_file(), rel
    assert 'model: "gpt-5.6-luna"' in (home() / "profiles/codex-default.md").read_text()
    edited = home() / "profiles/simulated-default.md"
    edited.write_text(edited.read_text().replace("simulated-demo", "my-model"))
    again = cli("init")
    assert again.returncode == 0
    assert "nothing was overwritten" in again.stdout
    assert "my-model" in edited.read_text()


def test_profile_new_and_list_sorted() -> None:
    assert (
        cli("profile", "new", "claude-safe", "--provider", "claude", "--model", "sonnet").returncode
        == 0
    )
    proc = cli("profile", "list", "--json")
    names = [p["name"] for p in json.loads(proc.stdout)]
    assert names == sorted(names)
    assert {"claude-safe", "codex-default", "simulated-default"} <= set(names)
    again = cli("profile", "new", "claude-safe", "--provider", "claude")
    assert again.returncode == 2 and "already exists" in again.stderr
    bad = cli("profile", "new", "x", "--permission", "yolo")
    assert bad.returncode == 2 and "permission_mode" in bad.stderr


def test_home_profile_is_used_by_plan(tmp_path: Path) -> None:
    cli("profile", "new", "mine", "--provider", "simulated", "--model", "from-profile")
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": "mine", "model": None})
    doc = json.loads(cli("plan", packet, "--json").stdout)
    assert doc["prompts"][0]["model"] == "from-profile"
    assert doc["prompts"][0]["sources"]["model"] == "profile"


def test_template_list_includes_packet_local_overrides(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    write_front_matter(packet / "templates" / "default.prompt.md", {"id": "{{id}}"}, "# x\n")
    write_front_matter(packet / "templates" / "mine.prompt.md", {"id": "{{id}}"}, "# x\n")
    doc = json.loads(cli("template", "list", packet, "--json").stdout)
    sources = {t["name"]: t["source"] for t in doc}
    assert sources == {"default": "packet", "from-adr": "built-in", "mine": "packet"}


def test_stub_commands_exit_2_and_say_not_implemented() -> None:
    proc = cli("profile")
    assert proc.returncode == 2 and "needs a subcommand" in proc.stderr


def test_profile_new_refuses_a_name_that_is_not_one_word() -> None:
    """``profile new "a b"`` wrote ``profiles/a b.md``, a name no manifest can use plainly."""
    for bad, hint in (("a b", "a-b"), (".x", "x"), ("dev profile!", "dev-profile")):
        proc = cli("profile", "new", bad, "--provider", "simulated")
        assert proc.returncode == 2, proc.stdout
        assert proc.stderr == (
            f"error: invalid profile name {bad!r}: a profile name is one word of letters, "
            f"digits, '-', '_' and '.' (not first); use e.g. {hint!r}.\n"
        )
        assert not (home() / "profiles" / f"{bad}.md").exists()
    assert cli("profile", "new", "dev_2.x", "--provider", "simulated").returncode == 0
    assert cli("init", "--default-profile", "a b").returncode == 2


def test_a_profile_name_follows_one_rule_wherever_it_is_given(tmp_path: Path) -> None:
    """config.md's bad ``default_profile`` was told "letters, digits, '-' and '_'
    only", though profile names (README) may hold a '.' too."""
    packet = make_packet(tmp_path, {"01": {}}, manifest={"profile": None})
    rule = "a profile name is one word of letters, digits, '-', '_' and '.' (not first)"
    home().mkdir(parents=True)
    (home() / "config.md").write_text('---\ndefault_profile: "my profile"\n---\n')
    proc = cli("plan", packet)
    assert proc.returncode == 2
    assert "config.md: default_profile: invalid profile name 'my profile'" in proc.stderr
    assert rule in proc.stderr and "'my-profile'" in proc.stderr
    proc = cli("plan", packet, "--profile", ".hidden")
    assert proc.returncode == 2 and rule in proc.stderr
    # a '.' inside a name is fine everywhere
    assert cli("profile", "new", "team.fast", "--provider", "simulated").returncode == 0
    (home() / "config.md").write_text('---\ndefault_profile: "team.fast"\n---\n')
    assert json.loads(cli("plan", packet, "--json").stdout)["profile"] == "team.fast"
