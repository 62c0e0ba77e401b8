"""Lint's prompt findings come from the parsed-packet cache only while the prompt
files and the manifest's reading are what they were (packet/lint/cached.py);
the manifest, the profiles and the whole-packet check are looked at afresh."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prompt_runner.api_packet import lint
from prompt_runner.packet import cache, source
from prompt_runner.packet.frontmatter import split_front_matter
from prompt_runner.packet.lint import run as lint_run
from prompt_runner.packet.lint.report import LintReport
from prompt_runner.packet.loader import load_packet
from prompt_runner.packet.profiles import profile_path
from tests.helpers.packets import make_packet


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(where))
    return where


def kinds(report: LintReport) -> list[tuple[str, str, str | None]]:
    return [(f.kind, f.severity, f.prompt_id) for f in report.findings]


def packet_of(tmp_path: Path, **manifest: object) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["a.txt"]}},
            "02": {"verify": {"files_exist": ["b.txt"], "commands": [{"exec": ["true"]}]}},
        },
        manifest=dict(manifest),
    )


def test_a_second_lint_does_not_lint_the_prompt_files_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = packet_of(tmp_path)
    first = lint(packet)
    assert ("contract_without_commands", "warning", "01") in kinds(first)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a prompt file was linted")

    monkeypatch.setattr(lint_run, "lint_prompt", refuse)
    assert lint(packet).to_dict() == first.to_dict()
    with pytest.raises(AssertionError, match="was linted"):
        lint(packet, strict=True)  # strict is its own section


def test_strict_and_lax_findings_are_kept_apart(tmp_path: Path) -> None:
    packet = packet_of(tmp_path)
    lax, strict = lint(packet), lint(packet, strict=True)
    assert lint(packet).to_dict() == lax.to_dict()
    assert lint(packet, strict=True).to_dict() == strict.to_dict()
    assert {f.severity for f in strict.findings} == {"error"}


def test_an_edit_keeping_size_and_mtime_is_linted(tmp_path: Path) -> None:
    packet = packet_of(tmp_path)
    assert ("contract_without_commands", "warning", "01") in kinds(lint(packet))
    file = packet / "prompts" / "01_step.prompt.md"
    before = file.stat()
    text = file.read_text()
    assert "files_exist:\n  - a.txt" in text
    file.write_text(text.replace("files_exist:\n  - a.txt", "fiXes_exist:\n  - a.txt"))
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (file.stat().st_size, file.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert ("unknown_verify_clause", "error", "01") in kinds(lint(packet))


def test_a_new_and_a_removed_prompt_file_are_linted(tmp_path: Path) -> None:
    packet = packet_of(tmp_path)
    lint(packet)
    (packet / "prompts" / "03_more.prompt.md").write_text("---\nid: '03'\n---\n# more\n")
    assert ("prompt_without_verify", "warning", "03") in kinds(lint(packet))
    (packet / "prompts" / "01_step.prompt.md").unlink()
    assert all(pid != "01" for _, _, pid in kinds(lint(packet)))


def test_what_the_manifest_tells_the_prompt_step_is_read_afresh(tmp_path: Path) -> None:
    packet = make_packet(
        tmp_path,
        {"01": {"verify": {"repos_clean": [{"repo": "app"}], "commands": [{"exec": ["true"]}]}}},
    )
    assert ("repos_clean_before_commit", "warning", "01") in kinds(lint(packet))
    manifest = packet / "prompt_runner_packet.md"
    manifest.write_text(
        manifest.read_text().replace("name: demo\n", "name: demo\ncommitter: noop\n")
    )
    assert ("repos_clean_before_commit", "warning", "01") not in kinds(lint(packet))


def test_a_profile_made_since_is_seen(tmp_path: Path) -> None:
    packet = packet_of(tmp_path, profile="mine")
    assert ("profile_not_found", "warning", None) in kinds(lint(packet))
    path = profile_path("mine")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\nname: mine\n---\n")
    assert ("profile_not_found", "warning", None) not in kinds(lint(packet))


def test_a_corrupt_section_is_ignored(tmp_path: Path, cache_dir: Path) -> None:
    packet = packet_of(tmp_path)
    first = lint(packet).to_dict()
    (section,) = (cache_dir / "packets").glob("*.lint-prompts")
    for damage in (b"", b"garbage\n{}", section.read_bytes()[:-10]):
        section.write_bytes(damage)
        assert lint(packet).to_dict() == first


def test_a_file_that_cannot_be_read_is_a_finding_every_time(tmp_path: Path) -> None:
    packet = packet_of(tmp_path)
    (packet / "prompts" / "03_dir.prompt.md").mkdir()
    for _ in range(2):
        assert ("invalid_prompt", "error", None) in kinds(lint(packet))


def test_a_cold_lint_parses_each_prompt_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = make_packet(tmp_path, {"01": {"verify": {"files_exist": ["a.txt"]}}, "02": {}})
    parsed: list[str] = []
    real = split_front_matter

    def counting(text: str, *, file: str) -> object:
        parsed.append(file)
        return real(text, file=file)

    monkeypatch.setattr(source, "split_front_matter", counting)
    lint(packet)  # the whole-packet check loads what the prompt step parsed
    assert parsed == []
    assert load_packet(packet).ids() == ["01", "02"]
    assert parsed == []
