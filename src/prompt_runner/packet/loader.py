"""Load a packet directory into a validated :class:`Packet`.

Two layers:

* :func:`read_packet_source` parses the manifest and every prompt file into
  models, keeping per-file errors (lint and doctor read this layer);
* :func:`load_packet` additionally checks cross references (duplicate ids,
  unknown repos, ``depends_on``, contract path containment) and raises the
  first problem as a :class:`~prompt_runner.errors.UserError`.

Prompts are ordered by the numeric prefix of their file name (``03_x.prompt.md``),
never by ``id``. Markdown files in ``prompts/`` that are not prompt files
(``02_x.md``) are not loaded but are listed in ``ignored`` so the CLI can say
so. Repo paths resolve against the packet directory; the alias ``packet``
always names the packet directory itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from .frontmatter import read_text, split_front_matter
from .models import Manifest, PromptFrontMatter
from .validation import validate_model

if TYPE_CHECKING:
    from ..verifier import Contract

MANIFEST_NAME = "prompt_runner_packet.md"
PROMPT_SUFFIX = ".prompt.md"
CHECKLIST_SUFFIX = ".prompt.checklist.md"
_PREFIX = re.compile(r"^(\d+)")


@dataclass(frozen=True)
class Prompt:
    """One loaded prompt.

    Attributes:
        id: the prompt id from front matter.
        file: absolute path of the prompt file.
        order: the numeric filename prefix (``None`` if the name has none).
        front: the validated front matter.
        body: the markdown body (the only text sent to the model).
        contract: the validated ``verify:`` contract.
        targets: resolved target repo names (the first is the session cwd).
        rel: ``file`` relative to the packet directory (see :attr:`relfile`).
    """

    id: str
    file: Path
    order: int | None
    front: PromptFrontMatter
    body: str
    contract: Contract
    targets: tuple[str, ...]
    rel: str | None = None

    @property
    def name(self) -> str:
        return self.front.name or self.id

    @property
    def phase(self) -> str | None:
        return self.front.phase

    @property
    def relfile(self) -> str:
        """The file relative to the packet directory (``prompts/01_x.prompt.md``)."""
        return self.rel if self.rel is not None else relative_file(self.file)


@dataclass(frozen=True)
class PromptSource:
    """A prompt file as parsed, or the error that stopped it."""

    file: Path
    order: int | None
    raw: dict[str, Any] | None
    front: PromptFrontMatter | None
    body: str
    error: UserError | None


@dataclass(frozen=True)
class PacketSource:
    """The packet as parsed file by file, before cross-reference checks."""

    root: Path
    manifest_file: Path
    manifest_raw: dict[str, Any]
    manifest: Manifest
    body: str
    prompts: tuple[PromptSource, ...]
    ignored: tuple[Path, ...] = ()
    prompt_dir: Path | None = None

    @property
    def prompts_dir(self) -> Path:
        """Where the prompt files are (the manifest's ``prompt_dir``, default ``prompts/``)."""
        return self.prompt_dir if self.prompt_dir is not None else self.root / "prompts"


@dataclass(frozen=True)
class Packet:
    """A fully validated packet.

    Attributes:
        root: absolute packet directory.
        manifest: the validated manifest.
        repos: logical repo name -> absolute path, including ``packet``.
        default_repo: the default repo name (``default: true``, or the only repo).
        prompts: prompts in execution order (numeric filename prefix).
        completion_contract: ``agent_control.completion_verify`` as a contract.
        ignored: markdown files in ``prompts/`` that are not prompt files
            (absolute paths, sorted), so they were not loaded.
        prompt_dir: the directory holding the prompt files (the manifest's
            ``prompt_dir``, default ``ROOT/prompts``).
    """

    root: Path
    manifest_file: Path
    manifest: Manifest
    manifest_raw: dict[str, Any]
    body: str
    repos: dict[str, Path]
    default_repo: str | None
    prompts: tuple[Prompt, ...]
    completion_contract: Contract | None = None
    ignored: tuple[Path, ...] = ()
    _by_id: dict[str, Prompt] = field(default_factory=dict, repr=False)
    prompt_dir: Path = Path("prompts")

    @property
    def name(self) -> str:
        return self.manifest.name or self.root.name

    def ids(self) -> list[str]:
        return [p.id for p in self.prompts]

    def display(self, file: Path) -> str:
        """``file`` as error messages name it (``demo/prompt_runner_packet.md``).

        Relative to the packet's parent directory, so the packet is named too.
        """
        return display_path(self.root, file)

    def require_prompts(self) -> None:
        """Raise unless the packet has at least one prompt.

        Raises:
            UserError: no ``prompts/`` directory, ``prompts`` is not a
                directory, or it holds no ``*.prompt.md`` file.
        """
        if self.prompts:
            return
        prompt_dir = self.prompt_dir
        rel = relative_file(prompt_dir, self.root)
        if not prompt_dir.exists():
            why = f"has no prompts (there is no {rel}/ directory)"
        elif not prompt_dir.is_dir():
            why = f"has no prompts ({rel} is a file, not a directory)"
        else:
            why = "has no prompts"
        raise UserError(
            why,
            file=display_path(self.root, self.root),
            fix=f"add {rel}/NN_name.prompt.md (see `prompt-runner prompt new`)",
        )

    def prompt(self, prompt_id: str) -> Prompt:
        """Return the prompt with ``prompt_id``.

        Raises:
            UserError: unknown id (the message lists the known ids).
        """
        found = self._by_id.get(prompt_id)
        if found is None:
            raise UserError(
                f"unknown prompt id {prompt_id!r}",
                file=self.manifest_file,
                fix=f"use one of: {', '.join(self.ids()) or '(no prompts)'}",
            )
        return found


def find_packet_root(path: Path | str) -> Path:
    """Return the packet directory for ``path`` (the dir or its manifest file).

    Raises:
        UserError: ``path`` is not a packet directory.
    """
    from ..paths import packet_root

    return packet_root(path)


def prompt_order(file: Path) -> int | None:
    """The numeric prefix of a prompt file name, or ``None``."""
    match = _PREFIX.match(file.name)
    return int(match.group(1)) if match else None


def display_path(root: Path, file: Path) -> str:
    """``file`` relative to the parent of packet ``root`` (``demo/prompts/01_x.prompt.md``)."""
    try:
        return str(file.relative_to(root.parent))
    except ValueError:
        return str(file)


def relative_file(file: Path, root: Path | None = None) -> str:
    """``file`` relative to the packet directory ``root``, ``/``-separated.

    Without ``root`` the packet directory is found above ``file`` (the first
    parent holding :data:`MANIFEST_NAME`); a file outside any packet is named
    as given.
    """
    if root is None:
        root = next((p for p in file.parents if (p / MANIFEST_NAME).is_file()), None)
        if root is None:
            return str(file)
    try:
        return file.relative_to(root).as_posix()
    except ValueError:
        return str(file)


def packet_prompt_dir(root: Path, manifest: Manifest) -> Path:
    """The prompt directory of the packet at ``root``: ``prompt_dir`` or ``prompts``."""
    return root / (manifest.prompt_dir or "prompts")


def is_prompt_file_name(name: str) -> bool:
    """True for ``*.prompt.md`` names (checklists, ``*.prompt.checklist.md``, are not prompts)."""
    return name.endswith(PROMPT_SUFFIX) and not name.endswith(CHECKLIST_SUFFIX)


def _looks_like_prompt(name: str) -> bool:
    lower = name.lower()
    if name.endswith((PROMPT_SUFFIX, CHECKLIST_SUFFIX)) or name.startswith("."):
        return False
    return lower.endswith((".md", ".markdown")) or ".prompt" in lower or bool(_PREFIX.match(name))


def ignored_markdown(prompt_dir: Path) -> tuple[Path, ...]:
    """Files in ``prompt_dir`` that look meant as prompts but are not loaded, sorted.

    Prompt files must end exactly in ``.prompt.md``; this lists other markdown
    files and near misses (``.prompt.MD``, ``.prompt``, ``.prompt.markdown``,
    ``NN_x.txt``) so a typo is reported instead of silently skipped.
    """
    if not prompt_dir.is_dir():
        return ()
    return tuple(
        sorted(f for f in prompt_dir.iterdir() if _looks_like_prompt(f.name) and f.is_file())
    )


def read_packet_source(path: Path | str) -> PacketSource:
    """Parse the manifest and every prompt file of a packet.

    Raises:
        UserError: the directory is not a packet or its manifest is invalid.
            Prompt-file errors are kept in :attr:`PromptSource.error`.
    """
    root = find_packet_root(path)
    manifest_file = root / MANIFEST_NAME
    where = display_path(root, manifest_file)
    raw, body = split_front_matter(read_text(manifest_file, display=where), file=where)
    manifest = validate_model(Manifest, raw, file=where)
    prompts: list[PromptSource] = []
    prompt_dir = packet_prompt_dir(root, manifest)
    files = sorted(prompt_dir.glob(f"*{PROMPT_SUFFIX}")) if prompt_dir.is_dir() else []
    files = [f for f in files if is_prompt_file_name(f.name)]
    for file in files:
        prompts.append(_read_prompt(root, file))
    prompts.sort(key=lambda p: (p.order is None, p.order or 0, p.file.name))
    return PacketSource(
        root,
        manifest_file,
        raw,
        manifest,
        body,
        tuple(prompts),
        ignored_markdown(prompt_dir),
        prompt_dir,
    )


def _read_prompt(root: Path, file: Path) -> PromptSource:
    where = display_path(root, file)
    order = prompt_order(file)
    try:
        if file.is_dir():
            raise UserError(
                "is a directory, not a prompt file", file=where, fix="rename or remove it"
            )
        raw, body = split_front_matter(read_text(file, display=where), file=where)
        front = validate_model(PromptFrontMatter, raw, file=where)
    except UserError as exc:
        return PromptSource(file, order, None, None, "", exc)
    return PromptSource(file, order, raw, front, body, None)


def resolve_repos(root: Path, manifest: Manifest) -> tuple[dict[str, Path], str | None]:
    """Resolve repo paths against ``root``; return ``(repos, default_repo)``."""
    repos: dict[str, Path] = {"packet": root}
    default: str | None = None
    for name, spec in manifest.repos.items():
        path = Path(spec.path).expanduser()
        repos[name] = (path if path.is_absolute() else root / path).resolve()
        if spec.default:
            default = name
    if default is None and len(manifest.repos) == 1:
        default = next(iter(manifest.repos))
    return repos, default


def load_packet(path: Path | str) -> Packet:
    """Load and fully validate the packet at ``path``.

    Raises:
        UserError: any malformed file, unknown repo, duplicate id, bad
            ``depends_on`` or escaping contract path -- the first one found.
    """
    from ..verifier import check_contract_paths, parse_contract

    source = read_packet_source(path)
    root = source.root
    manifest = source.manifest
    repos, default_repo = resolve_repos(root, manifest)
    manifest_where = display_path(root, source.manifest_file)

    completion = None
    ac = manifest.agent_control
    if ac.enabled and not ac.completion_verify:
        raise UserError(
            "agent control is enabled without a completion contract",
            file=manifest_where,
            key="agent_control.completion_verify",
            fix="add a non-empty completion_verify contract (e.g. files_exist: [DONE.md])",
        )
    if ac.completion_verify:
        completion = parse_contract(
            ac.completion_verify, file=manifest_where, key="agent_control.completion_verify"
        )
        check_contract_paths(
            completion, repos=repos, default_repo=default_repo, file=manifest_where
        )
    execution = manifest.execution
    if execution.completion == "agent_owned" and execution.incomplete != "repeat":
        raise UserError(
            "agent-owned completion requires incomplete: repeat",
            file=manifest_where,
            key="execution.incomplete",
            fix="set execution.incomplete to repeat, or use completion: verifier_owned",
        )
    if execution.completion == "verifier_owned" and execution.incomplete == "repeat":
        raise UserError(
            "incomplete: repeat is only valid with completion: agent_owned",
            file=manifest_where,
            key="execution.incomplete",
            fix="set execution.incomplete to fail, or use completion: agent_owned",
        )

    prompts: list[Prompt] = []
    seen: dict[str, Path] = {}
    for ps in source.prompts:
        if ps.error is not None:
            raise ps.error
        assert ps.front is not None
        where = display_path(root, ps.file)
        front = ps.front
        if front.id in seen:
            raise UserError(
                f"duplicate prompt id {front.id!r} (also in {relative_file(seen[front.id], root)})",
                file=where,
                key="id",
                fix="give every prompt a unique id",
            )
        seen[front.id] = ps.file
        targets = (
            tuple(front.targets) if front.targets else ((default_repo,) if default_repo else ())
        )
        for index, target in enumerate(targets):
            if target not in repos:
                known = ", ".join(r for r in repos if r != "packet") or "(none declared)"
                raise UserError(
                    f"unknown target repo {target!r}",
                    file=where,
                    key=f"targets[{index}]",
                    fix=f"use a repo declared in the manifest's repos: {known}, or 'packet'",
                )
        contract = parse_contract(front.verify, file=where, key="verify")
        check_contract_paths(
            contract, repos=repos, default_repo=targets[0] if targets else None, file=where
        )
        if front.simulate is not None:
            for a_index, step in enumerate([*front.simulate.attempts, front.simulate.resume]):
                if step is None:
                    continue
                for w_index, write in enumerate(step.writes):
                    if write.repo is not None and write.repo not in repos:
                        label = (
                            f"simulate.attempts[{a_index}]"
                            if a_index < len(front.simulate.attempts)
                            else "simulate.resume"
                        )
                        raise UserError(
                            f"unknown repo {write.repo!r}",
                            file=where,
                            key=f"{label}.writes[{w_index}].repo",
                            fix="use a repo declared in the manifest's repos, or 'packet'",
                        )
        prompts.append(
            Prompt(
                id=front.id,
                file=ps.file,
                order=ps.order,
                front=front,
                body=ps.body,
                contract=contract,
                targets=targets,
                rel=relative_file(ps.file, root),
            )
        )
    by_id = {p.id: p for p in prompts}
    for prompt in prompts:
        for index, dep in enumerate(prompt.front.depends_on):
            if dep not in by_id:
                raise UserError(
                    f"depends on unknown prompt {dep!r}",
                    file=display_path(root, prompt.file),
                    key=f"depends_on[{index}]",
                    fix=f"use one of: {', '.join(by_id)}",
                )
    return Packet(
        root=root,
        manifest_file=source.manifest_file,
        manifest=manifest,
        manifest_raw=source.manifest_raw,
        body=source.body,
        repos=repos,
        default_repo=default_repo,
        prompts=tuple(prompts),
        completion_contract=completion,
        ignored=source.ignored,
        _by_id=by_id,
        prompt_dir=source.prompts_dir,
    )
