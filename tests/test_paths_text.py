"""The text forms of the packet's paths (paths.py: ``packet_dir``, ``pure_text``,
``expanded_text``, ``resolved_text``, ``stat_kind``) compute what their pathlib
twins compute, on real directories, manifests, symlinks and home directories:
``watch --once`` takes its sample on them so that it loads no pathlib, and its
output must stay what it was."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest

from prompt_runner.errors import UserError
from prompt_runner.paths import (
    MANIFEST_NAME,
    expanded_text,
    packet_dir,
    packet_root,
    pure_text,
    resolved_text,
    stat_kind,
)
from prompt_runner.watch import facts

SPELLINGS = [
    "",
    ".",
    "./",
    "a",
    "a/",
    "a//b",
    "a/./b/.",
    "a/../b",
    "/",
    "//",
    "///",
    "//a/b",
    "///a//b/",
    "/a/./b/../c/",
    "~",
    "~/x",
    "~root/x",
    "x/~",
    ".hidden/..",
]


@pytest.mark.parametrize("text", SPELLINGS)
def test_pure_text_is_the_pure_path(text: str) -> None:
    assert pure_text(text) == str(PurePosixPath(text))


@pytest.mark.parametrize("text", ["~", "~/a//b/", "~root", "~root/x", "a/~", "/~"])
def test_expanded_text_is_expanduser(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for home in ("/home/someone", "/home/someone/", "/", "relative/home"):
        monkeypatch.setenv("HOME", home)
        assert expanded_text(pure_text(text)) == str(Path(text).expanduser()), home


def test_an_unknown_user_s_home_raises_as_pathlib_does() -> None:
    text = "~no-such-user-of-this-test/x"
    with pytest.raises(RuntimeError) as theirs:
        Path(text).expanduser()
    with pytest.raises(RuntimeError) as ours:
        expanded_text(pure_text(text))
    assert str(ours.value) == str(theirs.value)


def _tree(tmp_path: Path) -> Path:
    """A packet, a directory that is not one, a file, symlinks to each, a loop."""
    packet = tmp_path / "real" / "packet"
    packet.mkdir(parents=True)
    (packet / MANIFEST_NAME).write_text("---\nname: p\n---\n")
    (tmp_path / "plain").mkdir()
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "packet-link").symlink_to(packet)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    return packet


def _outcome(call: object, text: str) -> tuple[str, str]:
    try:
        return "ok", str(call(text))  # type: ignore[operator]
    except UserError as exc:
        return "UserError", str(exc)
    except RuntimeError as exc:
        return "RuntimeError", str(exc)


@pytest.mark.parametrize(
    "given",
    [
        "real/packet",
        "real/packet/",
        "real//packet/.",
        f"real/packet/{MANIFEST_NAME}",
        f"real/packet/{MANIFEST_NAME}/",
        f"real/packet//{MANIFEST_NAME}",
        "link/packet",
        "link/packet/../packet",
        "link/../real/packet",
        "packet-link",
        f"packet-link/{MANIFEST_NAME}",
        "real",  # a directory without a manifest
        "plain",
        "file.txt",
        "missing",
        "dangling",
        "loop-a",
        "file.txt/x",
        "ABS",  # the packet by its absolute path
        "",
        ".",
    ],
)
def test_packet_dir_is_packet_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    packet = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    text = str(packet) if given == "ABS" else given
    assert _outcome(packet_dir, text) == _outcome(packet_root, text)
    assert _outcome(packet_dir, Path(text)) == _outcome(packet_root, Path(text))  # type: ignore[arg-type]


def test_packet_dir_inside_the_packet_and_by_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packet = _tree(tmp_path)
    monkeypatch.chdir(packet)
    for text in ("", ".", MANIFEST_NAME, f"./{MANIFEST_NAME}", "../packet"):
        assert _outcome(packet_dir, text) == _outcome(packet_root, text), text
    monkeypatch.setenv("HOME", str(tmp_path / "real"))
    for text in ("~/packet", f"~/packet/{MANIFEST_NAME}", "~", "~/nope"):
        assert _outcome(packet_dir, text) == _outcome(packet_root, text), text


def test_stat_kind_is_is_dir_is_file_and_exists(tmp_path: Path) -> None:
    _tree(tmp_path)
    for name in ("real", "file.txt", "link", "dangling", "loop-a", "missing", "file.txt/x"):
        path = tmp_path / name
        kind = stat_kind(str(path))
        assert (kind == "dir", kind == "file", kind is not None) == (
            path.is_dir(),
            path.is_file(),
            path.exists(),
        ), name
    assert stat_kind("/dev/null") == "other"
    assert stat_kind("a\0b") is None  # pathlib: an unencodable path is nothing


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every directory")
def test_stat_kind_raises_what_pathlib_raises(tmp_path: Path) -> None:
    closed = tmp_path / "closed"
    (closed / "inside").mkdir(parents=True)
    closed.chmod(0)
    try:
        with pytest.raises(PermissionError):
            (closed / "inside").is_dir()
        with pytest.raises(PermissionError):
            stat_kind(str(closed / "inside"))
    finally:
        closed.chmod(0o755)


def test_resolved_text_is_resolve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    for text in ("link", "link/packet/..", "dangling", "missing/x", "real", "."):
        assert resolved_text(pure_text(text)) == str(Path(text).resolve()), text
    with pytest.raises(RuntimeError) as theirs:
        Path("loop-a").resolve()
    with pytest.raises(RuntimeError) as ours:
        resolved_text("loop-a")
    assert str(ours.value) == str(theirs.value)


def _pathlib_resolved(root: Path, path_text: str) -> Path:
    """What the sample did before its paths were text (watch/facts._resolved)."""
    path = Path(path_text).expanduser()
    return (path if path.is_absolute() else root / path).resolve()


@pytest.mark.parametrize(
    "path_text",
    ["../plain", "..//plain/", "../link/packet", "./", ".", "../missing", "ABS", "~/packet", "~"],
)
def test_a_manifest_s_repo_path_resolves_as_it_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path_text: str
) -> None:
    packet = _tree(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "real"))
    text = str(tmp_path / "file.txt") if path_text == "ABS" else path_text
    for root in (packet, tmp_path / "packet-link"):
        resolved = facts._resolved(str(root), text, str(root / "prompt_runner_packet.md"), "app")
        assert resolved == str(_pathlib_resolved(root, text))
