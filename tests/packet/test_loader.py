"""Packet loading: the reference packets, ordering, and clear errors for bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from prompt_runner import api
from prompt_runner.errors import UserError
from prompt_runner.packet.loader import load_packet
from tests.helpers.packets import make_packet, write_front_matter


def test_prompts_are_ordered_by_numeric_prefix_not_id(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {})
    write_front_matter(packet / "prompts" / "10_last.prompt.md", {"id": "a"}, "# last\n")
    write_front_matter(packet / "prompts" / "2_first.prompt.md", {"id": "z"}, "# first\n")
    loaded = load_packet(packet)
    assert loaded.ids() == ["z", "a"]
    assert loaded.prompt("z").body == "# first\n"
    assert loaded.prompt("z").targets == ("app",)


def test_repo_paths_resolve_against_packet_dir_and_packet_alias(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    loaded = load_packet(packet)
    assert loaded.repos["app"] == (tmp_path / "repo").resolve()
    assert loaded.repos["packet"] == packet.resolve()
    assert loaded.default_repo == "app"


def test_checklist_files_are_not_prompts(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    (packet / "prompts" / "01_step.prompt.checklist.md").write_text("# Checklist\n")
    assert load_packet(packet).ids() == ["01"]


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", "has no YAML front matter"),
        (b"---\nid: '01'\nno closing", "never closed"),
        (b"---\nid: [unclosed\n---\nbody", "invalid YAML at line"),
        (b"---\n- a\n- b\n---\n", "not a mapping"),
        (b"---\nid: '01'\n\xff\xfe---\n", "not valid UTF-8"),
        (b"---\nid: '01'\nbogus_key: 1\n---\n", "bogus_key: unknown key"),
        (b"---\nid: '01'\nmax_turns: lots\n---\n", "max_turns: 'lots' is not an integer"),
        (b"---\nname: x\n---\n", "id: is required but missing"),
        (
            b"---\nid: '01'\npermission_mode: yolo\n---\n",
            "permission_mode: 'yolo' is not an accepted",
        ),
    ],
)
def test_malformed_prompt_files_name_the_file_and_key(
    tmp_path: Path, content: bytes, expected: str
) -> None:
    packet = make_packet(tmp_path, {})
    (packet / "prompts").mkdir(exist_ok=True)
    (packet / "prompts" / "01_bad.prompt.md").write_bytes(content)
    with pytest.raises(UserError) as info:
        load_packet(packet)
    message = str(info.value)
    assert "prompts/01_bad.prompt.md" in message
    assert expected in message
    assert info.value.exit_code == 2


def test_duplicate_ids_name_both_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    monkeypatch.chdir(packet)  # messages name files from here: prompts/...
    write_front_matter(packet / "prompts" / "02_dup.prompt.md", {"id": "01"}, "")
    with pytest.raises(
        UserError, match=r"02_dup.prompt.md: id: duplicate prompt id '01' \(also in prompts/01_step"
    ):
        load_packet(packet)


def test_unknown_target_and_dependency_are_errors(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"targets": ["nope"]}})
    with pytest.raises(UserError, match=r"targets\[0\]: unknown target repo 'nope'"):
        load_packet(packet)
    packet2 = make_packet(tmp_path / "b", {"01": {"depends_on": ["99"]}})
    with pytest.raises(UserError, match=r"depends_on\[0\]: depends on unknown prompt '99'"):
        load_packet(packet2)


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "a/../../b"])
def test_contract_paths_that_escape_are_rejected_at_load_time(tmp_path: Path, path: str) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": [path]}}})
    with pytest.raises(UserError) as info:
        load_packet(packet)
    assert "01_step.prompt.md" in str(info.value)
    assert "verify.files_exist" in str(info.value)


def test_symlink_escape_is_rejected_at_load_time(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["link/secret.txt"]}}})
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "repo" / "link").symlink_to(outside)
    with pytest.raises(UserError, match=r"01_step\.prompt\.md"):
        load_packet(packet)


def test_not_a_packet(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="is not a packet"):
        load_packet(tmp_path)


def test_unknown_manifest_key_suggests_the_right_one(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {}, manifest={"providr": "simulated"})
    with pytest.raises(UserError, match=r"providr: unknown key; did you mean 'provider'\?"):
        load_packet(packet)


def test_a_simulated_delay_past_a_day_is_refused_at_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``delay_ms: 1e20`` overflowed the timer mid-session: ``failed: unknown``."""
    monkeypatch.chdir(tmp_path)  # messages name files from here: demo/prompts/...
    packet = make_packet(tmp_path, {"01": {"simulate": {"attempts": [{"delay_ms": 10**20}]}}})
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    assert str(caught.value) == (
        "demo/prompts/01_step.prompt.md: simulate.attempts[0].delay_ms: must be 86400000 or "
        "less (got 100000000000000000000); use a smaller number."
    )
    ok = make_packet(
        tmp_path / "ok", {"01": {"simulate": {"attempts": [{"delay_ms": 86_400_000}]}}}
    )
    assert load_packet(ok).prompts[0].front.simulate is not None


def test_a_retry_backoff_past_a_week_is_refused_at_load(tmp_path: Path) -> None:
    """``base_delay_ms: 1e20`` overflowed the backoff sleep: an internal error mid-run."""
    retry = {"base_delay_ms": 10**20, "max_delay_ms": 10**20}
    packet = make_packet(tmp_path, {"01": {"recovery": {"retry": retry}}})
    with pytest.raises(
        UserError, match=r"recovery\.retry\.base_delay_ms: must be 604800000 or less"
    ):
        api.plan(packet)


@pytest.mark.parametrize("spec", [5, ["../repo"]])
def test_a_repo_that_is_neither_a_path_nor_a_mapping_names_both_forms(
    tmp_path: Path, spec: object
) -> None:
    packet = make_packet(tmp_path, {}, manifest={"repos": {"app": spec}})
    with pytest.raises(UserError) as caught:
        load_packet(packet)
    assert caught.value.key == "repos.app"
    assert caught.value.reason.startswith("must be a path string or a mapping with `path:`")
