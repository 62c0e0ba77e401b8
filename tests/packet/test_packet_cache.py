"""The parsed-packet cache: a load reads a kept parse only while the packet's files
hold the same bytes, never fails because of the cache, and writes nothing into
the packet (packet/cache.py, packet/cached_source.py)."""

from __future__ import annotations

import datetime
import os
from pathlib import Path

import pytest

from prompt_runner.errors import UserError
from prompt_runner.packet import cache, source
from prompt_runner.packet.loader import Packet, load_packet
from tests.helpers.cli import cli
from tests.helpers.packets import make_packet, write_front_matter


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(where))
    return where


def two_prompts(tmp_path: Path) -> Path:
    return make_packet(
        tmp_path,
        {
            "01": {"verify": {"files_exist": ["a.txt"]}, "model": "m-aaaa"},
            "02": {"verify": {"files_exist": ["b.txt"]}},
        },
    )


def no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, parsing a file fails the test: a load must come from the cache."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a file was parsed")

    monkeypatch.setattr(source, "split_front_matter", refuse)


def summary(packet: Packet) -> list[tuple[str, str | None, str, object]]:
    return [(p.id, p.front.model, p.body, p.contract.to_raw()) for p in packet.prompts]


def test_a_second_load_uses_the_kept_parse(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = two_prompts(tmp_path)
    first = load_packet(packet)
    assert list((cache_dir / "packets").glob("*.source"))
    no_parsing(monkeypatch)
    again = load_packet(packet)
    assert summary(again) == summary(first)
    assert again.manifest == first.manifest and again.repos == first.repos
    assert again.ignored == first.ignored and again.prompt_dir == first.prompt_dir


def test_an_edit_keeping_size_and_mtime_is_seen(tmp_path: Path, cache_dir: Path) -> None:
    packet = two_prompts(tmp_path)
    assert load_packet(packet).prompt("01").front.model == "m-aaaa"
    file = packet / "prompts" / "01_step.prompt.md"
    before = file.stat()
    file.write_text(file.read_text().replace("m-aaaa", "m-bbbb"))
    os.utime(file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = file.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert load_packet(packet).prompt("01").front.model == "m-bbbb"


def test_an_added_and_a_removed_prompt_are_seen(tmp_path: Path, cache_dir: Path) -> None:
    packet = two_prompts(tmp_path)
    assert load_packet(packet).ids() == ["01", "02"]
    write_front_matter(
        packet / "prompts" / "03_more.prompt.md",
        {"id": "03", "name": "more", "targets": ["app"]},
        "# more\n",
    )
    assert load_packet(packet).ids() == ["01", "02", "03"]
    (packet / "prompts" / "02_step.prompt.md").unlink()
    assert load_packet(packet).ids() == ["01", "03"]


def test_a_new_ignored_file_and_a_manifest_edit_are_seen(tmp_path: Path, cache_dir: Path) -> None:
    packet = two_prompts(tmp_path)
    assert load_packet(packet).ignored == ()
    (packet / "prompts" / "04_typo.prompt.MD").write_text("---\nid: x\n---\n")
    assert load_packet(packet).ignored == (packet.resolve() / "prompts" / "04_typo.prompt.MD",)
    manifest = packet / "prompt_runner_packet.md"
    manifest.write_text(manifest.read_text().replace("model: simulated-demo", "model: other"))
    assert load_packet(packet).manifest.model == "other"


def test_a_symlink_escape_made_after_the_parse_is_refused(tmp_path: Path, cache_dir: Path) -> None:
    packet = two_prompts(tmp_path)
    load_packet(packet)
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    (tmp_path / "repo" / "a.txt").symlink_to(outside)
    with pytest.raises(UserError, match="escapes repo 'app' through a symlink"):
        load_packet(packet)


def test_a_corrupt_entry_is_ignored(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = two_prompts(tmp_path)
    first = load_packet(packet)
    (entry,) = (cache_dir / "packets").glob("*.source")
    for damage in (b"{not json", entry.read_bytes()[:100], b'{"schema": 1, "sections": 7}', b""):
        entry.write_bytes(damage)
        assert summary(load_packet(packet)) == summary(first)
    # a whole entry whose data lies about the files: the digest does not match them
    load_packet(packet)
    text = entry.read_text()
    entry.write_text(text.replace("m-aaaa", "m-zzzz"))
    assert load_packet(packet).prompt("01").front.model == "m-aaaa"


def test_an_unwritable_cache_dir_costs_nothing_but_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker / "cache"))
    packet = two_prompts(tmp_path)
    assert load_packet(packet).ids() == ["01", "02"]
    assert load_packet(packet).ids() == ["01", "02"]
    for args in (("plan", packet, "--json"), ("list", packet), ("packet", "lint", packet)):
        proc = cli(*args)
        assert proc.returncode in (0, 1) and proc.stderr == "", (args, proc.stderr)
        assert "Traceback" not in proc.stdout


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, "")
    packet = two_prompts(tmp_path)
    load_packet(packet)
    assert cache.entry_path(packet.resolve(), "source") is None
    assert not (tmp_path / "home" / ".cache").exists()


def test_the_default_place_is_the_xdg_cache_home(tmp_path: Path) -> None:
    packet = two_prompts(tmp_path)
    load_packet(packet)
    assert list((Path(os.environ["XDG_CACHE_HOME"]) / "prompt-runner" / "packets").glob("*.source"))


@pytest.mark.parametrize("variable", [cache.CACHE_ENV, "XDG_CACHE_HOME"])
def test_a_relative_cache_dir_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    # a new user's finding: PROMPT_RUNNER_CACHE_DIR=.cache made the cache in
    # whatever directory the command ran from (a work tree, committed with it)
    packet = two_prompts(tmp_path)
    xdg = tmp_path / "xdg"
    monkeypatch.setenv("XDG_CACHE_HOME", str(xdg))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(variable, "relcache")
    if variable == "XDG_CACHE_HOME":
        monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    where = tmp_path / "elsewhere"
    where.mkdir()
    assert cli("list", packet.resolve(), cwd=where).returncode == 0
    assert not (where / "relcache").exists()
    fallback = xdg if variable == cache.CACHE_ENV else tmp_path / "home" / ".cache"
    assert list((fallback / "prompt-runner" / "packets").glob("*.source"))


def test_a_relative_home_turns_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a new user's finding: HOME=relhome made relhome/.cache/... in the cwd
    packet = two_prompts(tmp_path)
    monkeypatch.setenv("HOME", "relhome")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    where = tmp_path / "elsewhere"
    where.mkdir()
    assert cli("list", packet.resolve(), cwd=where).returncode == 0
    assert list(where.iterdir()) == []
    assert cache.cache_dir() is None


def test_a_home_relative_cache_dir_is_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv(cache.CACHE_ENV, "~/kept")
    assert cache.cache_dir() == tmp_path / "home" / "kept"


def test_commands_write_nothing_into_the_packet(tmp_path: Path, cache_dir: Path) -> None:
    packet = two_prompts(tmp_path)

    def files() -> list[str]:
        return sorted(str(p.relative_to(packet)) for p in packet.rglob("*"))

    before = files()
    for _ in range(2):  # cold, then from the cache
        for args in (("plan", packet, "--json"), ("packet", "lint", packet), ("list", packet)):
            assert cli(*args).returncode in (0, 1)
    assert files() == before
    assert list((cache_dir / "packets").glob("*.source"))


def test_a_yaml_value_json_cannot_carry_is_not_kept(tmp_path: Path, cache_dir: Path) -> None:
    packet = make_packet(tmp_path, {"01": {"references": ["x"]}})
    file = packet / "prompts" / "01_step.prompt.md"
    file.write_text(file.read_text().replace("- x", "- 2024-01-02"))  # a date, not a string
    assert load_packet(packet).prompt("01").front.references == [datetime.date(2024, 1, 2)]
    assert not list((cache_dir / "packets").glob("*.source"))
    assert load_packet(packet).prompt("01").front.references == [datetime.date(2024, 1, 2)]
