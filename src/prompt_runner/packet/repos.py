"""``packet add-repo``: one more repo in an existing manifest.

The edit goes through ruamel.yaml's round-trip mode: the author's comments,
key order and quoting survive; only the ``repos`` entries change.
"""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml.comments import CommentedMap

from ..errors import UserError
from ..state.atomic import write_text_atomic
from .files import MANIFEST_NAME, find_packet_root
from .frontmatter import read_text
from .writing import check_repo_name, repo_path_text, split_manifest_text, validated_manifest_text
from .yamlio import dump, quoted, round_trip


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
    front, body = split_manifest_text(read_text(manifest, display=where), where)
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
    repos[name] = spec
    text = validated_manifest_text(dump(yaml, data), body, where)
    write_text_atomic(manifest, text)
    return manifest
