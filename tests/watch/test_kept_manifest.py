"""A watch sample keeps what it read from the manifest (name, repos) in the state
root and uses it while the manifest holds the same text (watch/kept_manifest.py):
the same sample either way, without loading the YAML parser; any edit, another
version's file or a damaged one reads the manifest anew."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prompt_runner.state.layout import StateLayout
from prompt_runner.watch import facts, kept_manifest
from tests.helpers.gitrepo import make_git_repo


def _packet(tmp_path: Path, *, state: bool = True) -> Path:
    for name in ("one", "two"):
        make_git_repo(tmp_path / name)
    packet = tmp_path / "packet"
    packet.mkdir()
    _manifest(packet, "one")
    if state:
        (packet / ".prompt_runner").mkdir()
    return packet


def _manifest(packet: Path, repo: str, *, name: str = "watched") -> None:
    (packet / "prompt_runner_packet.md").write_text(
        f"---\nname: {name}\nrepos:\n  app:\n    path: ../{repo}\n    default: true\n---\n"
    )


def _layout(packet: Path) -> StateLayout:
    return StateLayout(packet / ".prompt_runner")


def _sample(packet: Path) -> dict[str, object]:
    doc = facts.sample(packet, now=0.0)
    doc.pop("newest_mtime")
    doc.pop("quiet_minutes")
    return doc


def test_a_kept_manifest_gives_the_same_sample(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    first = _sample(packet)
    kept = json.loads(_layout(packet).watch_manifest.read_text())
    assert (kept["name"], kept["repos"]) == ("watched", [["app", "../one"]])
    assert kept_manifest.read(_layout(packet), packet / "prompt_runner_packet.md") == (
        "watched",
        [("app", "../one")],
    )
    assert _sample(packet) == first
    assert first["packet"] == "watched"
    assert first["repo_details"][0]["path"] == str((tmp_path / "one").resolve())  # type: ignore[index]


def test_a_kept_manifest_loads_no_yaml(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    facts.sample(packet)
    probe = (
        "import sys; from prompt_runner.watch import facts; "
        f"facts.sample({str(packet)!r}); print('yaml' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_edited_manifest_is_read_anew(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    _sample(packet)
    _manifest(packet, "two")  # the same size: only the text tells
    now = _sample(packet)
    assert now["repo_details"][0]["path"] == str((tmp_path / "two").resolve())  # type: ignore[index]
    _manifest(packet, "two", name="other")
    assert _sample(packet)["packet"] == "other"


def test_a_manifest_without_a_name_keeps_the_directory_s(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    (packet / "prompt_runner_packet.md").write_text("---\nrepos:\n  app:\n    path: ../one\n---\n")
    assert _sample(packet)["packet"] == "packet"
    assert _sample(packet)["packet"] == "packet"


@pytest.mark.parametrize(
    "damage", ["not json", "a list", "another version", "bad repos", "nested too deeply"]
)
def test_a_damaged_or_other_versions_file_is_not_used(tmp_path: Path, damage: str) -> None:
    packet = _packet(tmp_path)
    first = _sample(packet)
    path = _layout(packet).watch_manifest
    doc = json.loads(path.read_text())
    doc["repos"] = [["app", "../two"]]  # what a wrongly used file would give
    if damage == "another version":
        doc["version"] = "0.0.0-other"
    elif damage == "bad repos":
        doc["repos"] = [["app", 2]]
    text = {"not json": "{", "a list": "[]", "nested too deeply": "[" * 100_000}.get(
        damage, json.dumps(doc)
    )
    path.write_text(text)
    assert kept_manifest.read(_layout(packet), packet / "prompt_runner_packet.md") is None
    assert _sample(packet) == first


def test_a_kept_file_naming_other_repos_for_another_text_is_not_used(tmp_path: Path) -> None:
    packet = _packet(tmp_path)
    _sample(packet)
    path = _layout(packet).watch_manifest
    doc = json.loads(path.read_text())
    doc["repos"] = [["app", "../two"]]
    doc["manifest"] += " "  # kept for another text
    path.write_text(json.dumps(doc))
    assert _sample(packet)["repo_details"][0]["path"] == str(  # type: ignore[index]
        (tmp_path / "one").resolve()
    )


def test_no_state_root_is_created(tmp_path: Path) -> None:
    packet = _packet(tmp_path, state=False)
    _sample(packet)
    assert not (packet / ".prompt_runner").exists()


def test_a_bad_manifest_is_refused_and_nothing_kept(tmp_path: Path) -> None:
    from prompt_runner.errors import UserError

    packet = _packet(tmp_path)
    (packet / "prompt_runner_packet.md").write_text("---\nrepos:\n  app: {}\n---\n")
    with pytest.raises(UserError, match="has no path"):
        facts.sample(packet)
    assert not _layout(packet).watch_manifest.exists()


def test_the_kept_reading_is_stamped_by_every_module_that_makes_it() -> None:
    """The kept file's ``version`` stamps only ``kept_manifest.MADE_BY`` (a hit
    stats 6 files, not 47): every module of the package that reading a manifest
    loads -- the front matter's parser and what it imports -- must be among
    them, or an edit of it would go on serving what the old code read."""
    probe = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "from prompt_runner.packet.frontmatter import read_text, split_front_matter\n"
        "import prompt_runner.watch.facts, prompt_runner.watch.kept_manifest\n"
        "print(json.dumps([getattr(sys.modules[m], '__file__', None) for m in"
        " sorted(set(sys.modules) - before) if m.startswith('prompt_runner.')]))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    package = Path(kept_manifest.__file__).resolve().parents[1]
    used = {Path(f).resolve().relative_to(package).as_posix() for f in json.loads(out.stdout)}
    reading = {
        "packet/__init__.py",
        "packet/frontmatter.py",
        "strict_yaml.py",
        "watch/facts.py",
        "watch/kept_manifest.py",
    }
    assert reading <= used  # the probe saw the reading's own modules
    sample_only = {  # what the sample needs besides the reading; none of it reads the text
        "watch/__init__.py",
        "paths.py",
        "state/__init__.py",
        "state/layout_text.py",
        "state/code_stamp.py",
        "proc/__init__.py",
        "proc/values.py",
    }
    assert used - sample_only <= set(kept_manifest.MADE_BY)
