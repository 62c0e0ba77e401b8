"""The README's ``notify:`` example loads as written: ``on:`` unquoted is the key ``on``
(YAML 1.1 would read it as the boolean True), in a packet manifest, a profile and a
workspace manifest; elsewhere a non-string key is named as written, with the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner import strict_yaml
from prompt_runner.errors import UserError
from prompt_runner.notify import resolve_notify
from prompt_runner.packet.loader import load_packet
from prompt_runner.planning import resolve_plan
from prompt_runner.workspace.load import load_workspace
from tests.helpers.packets import make_packet
from tests.helpers.workspaces import make_workspace

README = Path(__file__).resolve().parents[2] / "README.md"

EXAMPLE = """\
notify:
  urls:                                   # Apprise URLs (https://github.com/caronc/apprise/wiki)
    - "json://hooks.example.com/prompt-runner?-token={env:HOOK_TOKEN}"
    - "ntfy://my-topic"
    - "slack://{env:SLACK_A}/{env:SLACK_B}/{env:SLACK_C}/#builds"
  command: ["/usr/local/bin/page-me", "--quiet"]   # gets the document on stdin
  on: [run_failed, prompt_failed, blocked, budget_spent]   # default: every kind
  timeout: 10s                            # per delivery, and the most the exit waits
  retries: 2                              # tries again after a failed delivery
"""
KINDS = {"run_failed", "prompt_failed", "blocked", "budget_spent"}


def _add_to_front_matter(file: Path, text: str) -> None:
    head, sep, rest = file.read_text(encoding="utf-8").partition("\n---\n")
    assert sep, file
    file.write_text(head + "\n" + text + "---\n" + rest, encoding="utf-8")


def test_the_example_is_the_readmes() -> None:
    assert EXAMPLE in README.read_text(encoding="utf-8")


def test_the_readme_example_in_a_packet_manifest_plans(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    _add_to_front_matter(packet / "prompt_runner_packet.md", EXAMPLE)
    plan = resolve_plan(load_packet(packet))
    assert plan.notify is not None
    assert plan.notify.on == KINDS and plan.notify.retries == 2
    assert plan.notify.command == ("/usr/local/bin/page-me", "--quiet")


def test_the_readme_example_in_a_profile_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home-config"
    monkeypatch.setenv("PROMPT_RUNNER_CONFIG_HOME", str(home))
    profile = home / "profiles" / "told.md"
    profile.parent.mkdir(parents=True)
    profile.write_text(
        "---\nprovider: simulated\nmodel: simulated-demo\n" + EXAMPLE + "---\n", encoding="utf-8"
    )
    plan = resolve_plan(
        load_packet(make_packet(tmp_path, {"01": {}}, manifest={"profile": "told"}))
    )
    assert plan.notify is not None and plan.notify.on == KINDS


def test_the_readme_example_in_a_workspace_manifest_loads(tmp_path: Path) -> None:
    manifest = make_workspace(tmp_path)
    manifest.write_text(manifest.read_text(encoding="utf-8") + EXAMPLE, encoding="utf-8")
    workspace = load_workspace(manifest)
    assert workspace.notify is not None
    config = resolve_notify([(str(manifest), workspace.notify)])
    assert config is not None and config.on == KINDS


def test_the_documented_unknown_kind_error(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    _add_to_front_matter(
        packet / "prompt_runner_packet.md", "notify:\n  urls: [json://h/x]\n  on: [run_done]\n"
    )
    with pytest.raises(UserError) as caught:
        resolve_plan(load_packet(packet))
    assert (
        f"{packet.name}/prompt_runner_packet.md: notify.on[0]: unknown event kind 'run_done'; "
        "use some of run_completed, "
    ) in str(caught.value)


def test_only_notify_keys_are_read_as_written() -> None:
    data = strict_yaml.load(
        "notify: {on: 1, 'yes': 2}\nother: {on: 3}\n", keys_as_written=("notify",)
    )
    assert data == {"notify": {"on": 1, "yes": 2}, "other": {True: 3}}
    assert strict_yaml.load("notify: {on: 1}\n") == {"notify": {True: 1}}


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("on", "key `on` (or `yes`, `true`) is not a string"),
        ("off", "key `off` (or `no`, `false`) is not a string"),
        ("3", "key `3` is not a string"),
    ],
)
def test_a_non_string_key_is_named_as_written_with_the_fix(
    tmp_path: Path, key: str, words: str
) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    manifest = packet / "prompt_runner_packet.md"
    manifest.write_text(
        manifest.read_text(encoding="utf-8").replace("  app:\n", f"  {key}:\n", 1),
        encoding="utf-8",
    )
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    assert caught.value.key == "repos", caught.value
    assert words in str(caught.value) and "[key]" not in str(caught.value)
    assert caught.value.fix and "quote the key" in caught.value.fix
