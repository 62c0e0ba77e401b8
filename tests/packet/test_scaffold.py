"""Scaffolding: `packet new`, `packet add-repo`, `prompt new` (SPEC 2.5, 9; catalog K4, L3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from prompt_runner import lint_packet
from prompt_runner.errors import UserError
from prompt_runner.packet.doctor import doctor_report
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.profiles import config_home
from prompt_runner.packet.scaffold import add_repo, new_packet, new_prompt, parse_repo_flag
from prompt_runner.packet.templates import render_template
from tests.helpers.gitrepo import make_git_repo
from tests.packet._packets import cli


def manifest_of(packet: Path) -> dict[str, object]:
    text = (packet / "prompt_runner_packet.md").read_text()
    front = text.split("---\n")[1]
    data = yaml.safe_load(front)
    assert isinstance(data, dict)
    return data


def front_of(file: Path) -> dict[str, object]:
    data = yaml.safe_load(file.read_text().split("---\n")[1])
    assert isinstance(data, dict)
    return data


def test_packet_new_defaults(tmp_path: Path) -> None:
    res = cli("packet", "new", "demo", "--root", str(tmp_path / "R"))
    assert res.returncode == 0, res.stderr
    packet = tmp_path / "R" / "demo"
    assert (packet / "prompt_runner_packet.md").is_file() and (packet / "prompts").is_dir()
    # no config.md default: the simulated provider, never a paid agent by surprise
    assert manifest_of(packet) == {"name": "demo", "profile": "simulated-default"}
    assert load_packet(packet).name == "demo"
    again = cli("packet", "new", "demo", "--root", str(tmp_path / "R"))
    assert again.returncode == 2 and "already holds a packet" in again.stderr


def test_packet_new_names_config_md_s_default_profile(tmp_path: Path) -> None:
    assert cli("init", "--default-profile", "codex-default").returncode == 0
    res = cli("packet", "new", "demo", "--root", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert manifest_of(tmp_path / "demo")["profile"] == "codex-default"


def test_packet_new_with_provider_and_recovery_shorthands(tmp_path: Path) -> None:
    res = cli(
        "packet", "new", "demo", "--root", str(tmp_path),
        "--profile", "simulated-default", "--provider", "simulated",
        "--model", "simulated-demo", "--permission", "bypass", "--reasoning", "low",
        "--resume-attempts", "3", "--retry-attempts", "3", "--repair-attempts", "4",
        "--auto-repair",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    packet = load_packet(tmp_path / "demo")
    manifest = packet.manifest
    assert manifest.profile == "simulated-default" and manifest.provider == "simulated"
    assert manifest.model == "simulated-demo" and manifest.permission_mode == "bypass"
    assert manifest.reasoning_effort == "low"
    assert manifest.recovery == {
        "resume_attempts": 3,
        "retry": {"max_attempts": 3},
        "repair": {"enabled": True, "max_attempts": 4},
    }


def test_packet_new_rejects_unknown_profile_template_and_default(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="unknown profile"):
        new_packet("a", root=tmp_path, profile="nope")
    with pytest.raises(UserError, match="unknown prompt template"):
        new_packet("b", root=tmp_path, prompt_template="nope")
    with pytest.raises(UserError, match="default repo 'x'"):
        new_packet("c", root=tmp_path, repos=[("app", "/tmp")], default_repo="x")
    with pytest.raises(UserError, match="permission_mode"):
        new_packet("d", root=tmp_path, permission_mode="sometimes")
    with pytest.raises(UserError, match="NAME=PATH"):
        parse_repo_flag("app")
    assert not any((tmp_path / n).exists() for n in "abd")


def test_packet_new_with_repo_and_template_then_prompt_new_from_adr(tmp_path: Path) -> None:
    repo = make_git_repo(tmp_path / "app")
    res = cli(
        "packet", "new", "demo", "--root", str(tmp_path / "R"),
        "--repo", f"app={repo}", "--default-repo", "app", "--prompt-template", "from-adr",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    packet = tmp_path / "R" / "demo"
    manifest = manifest_of(packet)
    assert manifest["prompt_template"] == "from-adr"
    assert manifest["repos"] == {"app": {"path": str(repo), "default": True}}

    res = cli(
        "prompt", "new", "1", "--packet", str(packet), "--phase", "1",
        "--name", "Create hello", "--targets", "app", "--commit", "chore: create hello",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    file = packet / "prompts" / "01_create_hello.prompt.md"
    text = file.read_text()
    assert "## Required Reading" in text and 'template: "from-adr"' in text
    front = front_of(file)
    assert front["id"] == "01" and front["targets"] == ["app"]
    assert front["commit"] == "chore: create hello"
    assert front["verify"] == {"files_exist": []}
    for inert in ("references", "required_reading", "context_files", "depends_on"):
        assert inert not in front
    listing = cli("template", "list", str(packet))
    assert "from-adr" in listing.stdout


def test_relative_repo_paths_are_rewritten_relative_to_the_packet(tmp_path: Path) -> None:
    make_git_repo(tmp_path / "work" / "app")
    res = cli("packet", "new", "demo", "--root", "R", "--repo", "app=app", cwd=tmp_path / "work")
    assert res.returncode == 0, res.stderr
    packet = load_packet(tmp_path / "work" / "R" / "demo")
    assert packet.repos["app"] == (tmp_path / "work" / "app").resolve()
    assert packet.default_repo == "app"  # the only repo is the default


def test_add_repo_preserves_comments_and_key_order(tmp_path: Path) -> None:
    packet = tmp_path / "demo"
    (packet / "prompts").mkdir(parents=True)
    original = (
        "---\n"
        "# the author's packet\n"
        'name: "demo"   # trailing comment\n'
        "profile: simulated-default\n"
        'allowed_tools: ["Read", "Edit"]\n'
        "repos:\n"
        "  app:\n"
        '    path: "./app"   # where the app lives\n'
        "    default: true\n"
        "phases:\n"
        '  "1": "Boot"\n'
        "---\n"
        "# Demo\n\nbody kept\n"
    )
    (packet / "prompt_runner_packet.md").write_text(original)
    res = cli("packet", "add-repo", "docs", "/srv/docs", "--packet", str(packet), "--default")
    assert res.returncode == 0, res.stderr
    text = (packet / "prompt_runner_packet.md").read_text()
    assert text.startswith('---\n# the author\'s packet\nname: "demo"   # trailing comment\n')
    assert '    path: "./app"   # where the app lives\n    default: false\n' in text
    assert '  docs:\n    path: "/srv/docs"\n    default: true\n' in text
    assert 'allowed_tools: ["Read", "Edit"]' in text
    assert text.index("repos:") < text.index("docs:") < text.index("phases:")
    assert text.endswith("---\n# Demo\n\nbody kept\n")
    assert load_packet(packet).default_repo == "docs"

    with pytest.raises(UserError, match="already exists"):
        add_repo(packet, "docs", "/elsewhere")
    with pytest.raises(UserError, match="invalid repo name"):
        add_repo(packet, "packet", "/elsewhere")


def test_add_repo_to_a_manifest_without_repos(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path)
    add_repo(packet, "app", "../app")
    assert manifest_of(packet)["repos"] == {"app": {"path": "../app"}}
    assert load_packet(packet).default_repo == "app"


def test_prompt_new_defaults_and_refusals(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path, repos=[("app", "/x")])
    file = new_prompt(packet, "2")
    assert file.name == "02_prompt_02.prompt.md"
    front = front_of(file)
    assert front["targets"] == ["app"] and front["phase"] == 1 and front["name"] == "Prompt 02"
    with pytest.raises(UserError, match="already exists"):
        new_prompt(packet, "02", name="Other")
    with pytest.raises(UserError, match="not a number"):
        new_prompt(packet, "abc")
    with pytest.raises(UserError, match="unknown target repo 'ghost'"):
        new_prompt(packet, "03", targets=["ghost"])
    with pytest.raises(UserError, match="unknown prompt template 'nope'"):
        new_prompt(packet, "03", template="nope")
    assert sorted(p.name for p in (packet / "prompts").iterdir()) == ["02_prompt_02.prompt.md"]


def test_prompt_new_escapes_quotes_in_front_matter(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path, repos=[("app", "/x")])
    file = new_prompt(packet, "01", name='Say "hi": now', commit='fix: "x"')
    front = front_of(file)
    assert front["name"] == 'Say "hi": now' and front["commit"] == 'fix: "x"'
    assert '# Say "hi": now' in file.read_text()  # the body gets it verbatim


def test_template_precedence_packet_over_home_over_builtin(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path, repos=[("app", "/x")])
    home_tpl = config_home() / "templates" / "default.prompt.md"
    home_tpl.parent.mkdir(parents=True)
    home_tpl.write_text(
        '---\nid: "{{id}}"\nname: "{{name}}"\ntargets:\n{{targets_yaml}}\n'
        "verify:\n  files_exist: [home.txt]\n---\n# {{name}} ({{targets_csv}})\n"
    )
    assert front_of(new_prompt(packet, "01"))["verify"] == {"files_exist": ["home.txt"]}
    local = packet / "templates" / "default.prompt.md"
    local.parent.mkdir()
    local.write_text(
        '---\nid: "{{id}}"\nphase: {{phase}}\nverify:\n  files_exist: ["packet-local.txt"]\n'
        "---\n# {{name}}\n\n{{targets_bullets}}\n"
    )
    file = new_prompt(packet, "02", targets=["app", "packet"])
    assert front_of(file)["verify"] == {"files_exist": ["packet-local.txt"]}
    assert "- `app`\n- `packet`" in file.read_text()
    listing = json.loads(cli("template", "list", str(packet), "--json").stdout)
    assert {"name": "default", "source": "packet"} in listing
    # --template beats the manifest's prompt_template and the default name
    file = new_prompt(packet, "03", template="from-adr")
    assert front_of(file)["template"] == "from-adr"


def test_a_template_that_renders_invalid_front_matter_is_refused(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path)
    bad = packet / "templates" / "bad.prompt.md"
    bad.parent.mkdir()
    bad.write_text('---\nid: "{{id}}"\npermission_mode: sometimes\n---\n# x\n')
    with pytest.raises(UserError) as caught:
        new_prompt(packet, "01", template="bad")
    assert caught.value.file == str(bad) and caught.value.key == "permission_mode"
    assert not list((packet / "prompts").iterdir())


@pytest.mark.parametrize(
    ("front", "reason"),
    [
        (
            'id: "{{id}}"\nverify:\n  files_exist: [a]\nverify:\n  files_exist: [b]\n',
            "duplicate key 'verify' at line 5 (first at line 3); "
            "YAML would silently keep only the last one",
        ),
        ('id: "{{id}}"\ntargets: [app\nname: x\n', "invalid YAML at line 4: "),
        ("- a\n- b\n", "front matter is a list, not a mapping of keys"),
    ],
)
def test_a_template_s_front_matter_errors_read_as_a_prompt_s(
    tmp_path: Path, front: str, reason: str
) -> None:
    """Template errors said only "front matter is not valid YAML (while constructing
    a mapping)", with no key or line, and named the template `template bad (packet)`."""
    packet = new_packet("demo", root=tmp_path)
    for where in (packet / "templates", config_home() / "templates"):
        bad = where / "bad.prompt.md"
        bad.parent.mkdir(parents=True, exist_ok=True)
        bad.write_text(f"---\n{front}---\n# x\n")
        with pytest.raises(UserError) as caught:
            new_prompt(packet, "01", template="bad")
        assert caught.value.file == str(bad) and caught.value.reason.startswith(reason)
        bad.unlink()
    file = tmp_path / "given.md"
    file.write_text(f"---\n{front}---\n# x\n")
    with pytest.raises(UserError) as caught:
        new_prompt(packet, "01", template=str(file))
    assert caught.value.file == str(file) and caught.value.reason.startswith(reason)
    assert not list((packet / "prompts").iterdir())


def test_a_template_whose_front_matter_is_never_closed_is_named(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path)
    bad = packet / "templates" / "open.prompt.md"
    bad.parent.mkdir()
    bad.write_text('---\nid: "{{id}}"\n# x\n')
    with pytest.raises(UserError, match="never closed") as caught:
        new_prompt(packet, "01", template="open")
    assert caught.value.file == str(bad)


def test_a_template_path_that_is_a_directory_says_so(tmp_path: Path) -> None:
    packet = new_packet("demo", root=tmp_path)
    (tmp_path / "tpl").mkdir()
    (tmp_path / "tpl" / "mine.prompt.md").write_text("# x\n")
    res = cli("prompt", "new", "02", "--packet", str(packet), "--template", str(tmp_path / "tpl"))
    assert res.returncode == 2
    assert f"'{tmp_path / 'tpl'}' is a directory, not a template file" in res.stderr
    assert f"{tmp_path / 'tpl' / 'mine.prompt.md'}" in res.stderr  # the file it holds
    assert "does not exist" not in res.stderr


def test_render_template_placeholders() -> None:
    text = '---\nname: "{{name}}"\ntargets:\n{{targets_yaml}}\n---\n{{name}} {{ id }} {{other}}\n'
    out = render_template(text, {"name": 'a"b', "id": "01"}, [])
    assert out == '---\nname: "a\\"b"\ntargets:\n  []\n---\na"b 01 {{other}}\n'


def test_scaffolded_packet_is_flagged_then_passes_strict_lint_once_filled(tmp_path: Path) -> None:
    """Acceptance: doctor flags a fresh scaffold; filled in, it passes `lint --strict`."""
    repo = make_git_repo(tmp_path / "app")
    assert (
        cli("packet", "new", "demo", "--root", str(tmp_path), "--repo", f"app={repo}").returncode
        == 0
    )
    packet = tmp_path / "demo"
    assert (
        cli("prompt", "new", "01", "--packet", str(packet), "--name", "Create hello").returncode
        == 0
    )
    file = packet / "prompts" / "01_create_hello.prompt.md"

    doctor = cli("packet", "doctor", str(packet), "--json")
    assert doctor.returncode == 1
    report = json.loads(doctor.stdout)
    assert report["authoring_ready"] is False and report["runtime_ready"] is True
    gaps = {w["kind"] for w in report["authoring_warnings"]}
    assert gaps == {"prompt_empty_verify", "prompt_placeholder_body"}

    lint = lint_packet(packet)
    assert lint.passed  # warnings only
    assert {f.kind for f in lint.findings} == {"prompt_without_verify", "placeholder_marker"}
    assert cli("packet", "lint", str(packet), "--strict").returncode == 1

    # the author fills the placeholders in
    text = file.read_text()
    text = text.replace(
        "verify:\n  files_exist: []\n",
        "verify:\n  files_exist: [hello.txt]\n"
        "  contains:\n    - {path: hello.txt, text: hello}\n"
        "  commands:\n    - {exec: test, args: [-s, hello.txt], timeout_ms: 10000}\n",
    )
    body_start = text.index("---\n", 4) + 4
    text = text[:body_start] + "# Create hello\n\nCreate `hello.txt` saying hello.\n"
    file.write_text(text)

    res = cli("packet", "lint", str(packet), "--strict", "--json")
    assert res.returncode == 0, res.stdout
    assert json.loads(res.stdout)["findings"] == []
    assert doctor_report(packet)["authoring_ready"] is True
    assert cli("packet", "doctor", str(packet)).returncode == 0
