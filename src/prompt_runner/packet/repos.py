"""``packet add-repo``: one more repo in an existing manifest.

The edit goes through ruamel.yaml's round-trip mode: the author's comments,
key order and quoting survive; only the ``repos`` entries change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap

from ..errors import UserError
from ..state.layout import StateLayout
from .files import MANIFEST_NAME, find_packet_root
from .frontmatter import read_text
from .own_edits import write_packet_file
from .writing import check_repo_name, repo_path_text, split_manifest_text, validated_manifest
from .yamlio import dump, quoted, round_trip

# What YAML 1.1 (the loader's reading) takes for a boolean when unquoted; ruamel,
# writing YAML 1.2, quotes true/false itself but leaves these plain.
_YAML11_BOOLS = frozenset(
    w
    for word in ("yes", "no", "on", "off", "true", "false")
    for w in (word, word.title(), word.upper())
)


def repo_key(name: str) -> Any:
    """``name`` as a ``repos`` key to write: double-quoted when YAML 1.1 would
    read it unquoted as a boolean (``on``, ``yes``, ``No``...), else as it is."""
    if name in _YAML11_BOOLS:
        from ruamel.yaml.scalarstring import DoubleQuotedScalarString

        return DoubleQuotedScalarString(name)
    return name


def add_repo(
    packet: Path | str,
    name: str,
    path: str,
    *,
    default: bool = False,
    cwd: Path | None = None,
) -> Path:
    """Add repo ``name`` at ``path`` to the manifest, keeping comments and key order.

    Args:
        packet: the packet directory.
        name: the logical repo name.
        path: its directory; relative paths are taken relative to ``cwd`` when
            given (and rewritten relative to the packet), else stored as given
            (the manifest resolves them against the packet directory).
        default: mark it ``default: true`` (clearing any other default).
        cwd: see ``path``.

    Returns:
        The manifest file.

    Raises:
        UserError: bad name, a repo of that name exists, or the edited manifest
            would not validate.
    """
    check_repo_name(name)
    root = find_packet_root(packet)
    manifest = root / MANIFEST_NAME
    where = str(manifest)
    document = split_manifest_text(read_text(manifest, display=where), where)
    front = document.yaml_text
    yaml = round_trip()
    data = yaml.load(front) if front.strip() else CommentedMap()
    if data is None:
        data = CommentedMap()
    if not isinstance(data, dict):
        raise UserError("front matter is not a mapping", file=where, fix="write key: value lines")
    repos = data.get("repos")
    if repos is None:
        repos = CommentedMap()
        data["repos"] = repos
    if not isinstance(repos, dict):
        raise UserError("must be a mapping", file=where, key="repos", fix="write NAME: {path: DIR}")
    if name in repos:
        raise UserError(
            f"repo {name!r} already exists", file=where, key=f"repos.{name}", fix="edit it instead"
        )
    if default:
        for spec in repos.values():
            if isinstance(spec, dict) and spec.get("default"):
                spec["default"] = False
    spec = CommentedMap()
    spec["path"] = quoted(repo_path_text(path, root, cwd))
    if default:
        spec["default"] = True
    repos[repo_key(name)] = spec
    text = validated_manifest(document.with_front(dump(yaml, data)), where)
    write_packet_file(
        manifest, text, state_root=StateLayout.of_packet(root).root, by="packet add-repo"
    )
    return manifest
