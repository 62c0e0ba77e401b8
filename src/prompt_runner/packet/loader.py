"""Load a packet directory into a validated :class:`Packet`.

Two layers:

* :func:`~prompt_runner.packet.source.read_packet_source` parses the manifest
  and every prompt file into models, keeping per-file errors (lint and doctor
  read this layer);
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

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..paths import repo_path_error
from ..verifier import Contract, check_contract_paths, parse_contract
from .cache import Reads
from .cached_source import cached_source, keep_source
from .files import (
    CHECKLIST_SUFFIX,
    MANIFEST_NAME,
    PROMPT_SUFFIX,
    display_in,
    display_path,
    find_packet_root,
    relative_file,
)
from .gc_pause import gc_paused
from .models import ExecutionConfig, Manifest, PromptFrontMatter
from .source import PacketSource, PromptSource, read_packet_source

__all__ = [  # the packet's names, importable from here as before the split
    "CHECKLIST_SUFFIX",
    "MANIFEST_NAME",
    "PROMPT_SUFFIX",
    "Packet",
    "PacketSource",
    "Prompt",
    "find_packet_root",
    "load_packet",
    "read_packet_source",
    "relative_file",
    "resolve_repos",
]


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
    def commit_message(self) -> str:
        """The message the git committer commits this prompt's work with: front
        matter ``commit``, else ``prompt-runner: <id> <name>``."""
        return self.front.commit or f"prompt-runner: {self.id} {self.name}"

    @property
    def relfile(self) -> str:
        """The file relative to the packet directory (``prompts/01_x.prompt.md``)."""
        return self.rel if self.rel is not None else relative_file(self.file)


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
        """``file`` as error messages name it: relative to the current directory
        when under it (``prompts/01_x.prompt.md`` inside the packet), else absolute."""
        return display_path(file)

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
            file=display_path(self.root),
            fix=f"add {rel}/NN_name.prompt.md (see `prompt-runner prompt new`)",
        )

    def prompt(self, prompt_id: str) -> Prompt:
        """Return the prompt with ``prompt_id``.

        Raises:
            UserError: unknown id (the message lists the known ids).
        """
        found = self._by_id.get(prompt_id)
        if found is None:
            raise unknown_prompt_id(self, prompt_id)
        return found


def unknown_prompt_id(packet: Packet, prompt_id: str, what: str = "") -> UserError:
    """The error for an id (given on the command line or to the library) that no
    prompt of ``packet`` has: it names the packet, not its manifest (nothing in
    a file is wrong), and lists the ids there are.

    Args:
        what: the flag the id came from (``--from``), if any.
    """
    known = ", ".join(packet.ids())
    return UserError(
        f"unknown prompt id {prompt_id!r}"
        + (f" for {what}" if what else "")
        + " (the packet has no prompt of that id)",
        file=display_path(packet.root),
        fix=(
            f"use one of: {known} (`prompt-runner list` lists them)"
            if known
            else "add a prompt (see `prompt-runner prompt new`)"
        ),
    )


def resolve_repos(root: Path, manifest: Manifest) -> tuple[dict[str, Path], str | None]:
    """Resolve repo paths against ``root``; return ``(repos, default_repo)``."""
    repos: dict[str, Path] = {"packet": root}
    default: str | None = None
    for name, spec in manifest.repos.items():
        try:
            path = Path(spec.path).expanduser()
            repos[name] = (path if path.is_absolute() else root / path).resolve()
        except (RuntimeError, OSError) as exc:  # ~nosuchuser, a symlink loop
            raise repo_path_error(root / MANIFEST_NAME, name, spec.path, exc) from None
        if spec.default:
            default = name
    if default is None and len(manifest.repos) == 1:
        default = next(iter(manifest.repos))
    return repos, default


def load_packet(path: Path | str) -> Packet:
    """Load and fully validate the packet at ``path``.

    The parsed files come from the parsed-packet cache while they hold the
    bytes they were parsed from (:mod:`~prompt_runner.packet.cached_source`);
    every check below runs either way.

    Raises:
        UserError: any malformed file, unknown repo, duplicate id, bad
            ``depends_on`` or escaping contract path -- the first one found.
    """
    with gc_paused():  # millions of objects and no cycles (packet/gc_pause.py)
        root = find_packet_root(path)
        source = cached_source(root)
        if source is not None:
            try:
                return packet_of(source)
            except UserError:
                pass  # what the work trees say changed: the fresh parse below says it
        reads = Reads()
        source = read_packet_source(root, reads=reads)
        packet = packet_of(source)
        keep_source(source, reads)
        return packet


def packet_of(source: PacketSource) -> Packet:
    """The :class:`Packet` of a parsed source, every cross reference checked.

    Raises:
        UserError: as :func:`load_packet`.
    """
    root = source.root
    repos, default_repo = resolve_repos(root, source.manifest)
    manifest_where = display_path(source.manifest_file)
    completion = _completion_contract(source.manifest, repos, default_repo, manifest_where)
    _check_execution(source.manifest.execution, manifest_where)
    prompts: list[Prompt] = []
    seen: dict[str, Path] = {}
    shown = display_in(source.prompts_dir)  # every prompt file is prompts_dir / name
    real_roots: dict[str, str | None] = {}
    for ps in source.prompts:
        where = shown(ps.file.name)
        prompt = _load_prompt(root, ps, repos, default_repo, seen, where, real_roots)
        seen[prompt.id] = ps.file
        prompts.append(prompt)
    by_id = {p.id: p for p in prompts}
    prompts = _check_dependencies(root, prompts, by_id, [ps.raw for ps in source.prompts])
    by_id = {p.id: p for p in prompts}
    return Packet(
        root=root,
        manifest_file=source.manifest_file,
        manifest=source.manifest,
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


def _completion_contract(
    manifest: Manifest, repos: dict[str, Path], default_repo: str | None, where: str
) -> Contract | None:
    """``agent_control.completion_verify`` as a contract (required when agent control is on)."""
    ac = manifest.agent_control
    if ac.enabled and not ac.completion_verify:
        raise UserError(
            "agent control is enabled without a completion contract",
            file=where,
            key="agent_control.completion_verify",
            fix="add a non-empty completion_verify contract (e.g. files_exist: [DONE.md])",
        )
    if not ac.completion_verify:
        return None
    completion = parse_contract(
        ac.completion_verify, file=where, key="agent_control.completion_verify"
    )
    check_contract_paths(completion, repos=repos, default_repo=default_repo, file=where)
    return completion


def _check_execution(execution: ExecutionConfig, where: str) -> None:
    """``incomplete: repeat`` goes with agent-owned completion, and only with it."""
    if execution.completion == "agent_owned" and execution.incomplete != "repeat":
        raise UserError(
            "agent-owned completion requires incomplete: repeat",
            file=where,
            key="execution.incomplete",
            fix="set execution.incomplete to repeat, or use completion: verifier_owned",
        )
    if execution.completion == "verifier_owned" and execution.incomplete == "repeat":
        raise UserError(
            "incomplete: repeat is only valid with completion: agent_owned",
            file=where,
            key="execution.incomplete",
            fix="set execution.incomplete to fail, or use completion: agent_owned",
        )


def _load_prompt(
    root: Path,
    ps: PromptSource,
    repos: dict[str, Path],
    default_repo: str | None,
    seen: dict[str, Path],
    where: str | None = None,
    real_roots: dict[str, str | None] | None = None,
) -> Prompt:
    """One parsed prompt file as a :class:`Prompt`, its references checked.

    Args:
        where: the file as messages name it (default: ``display_path(ps.file)``).
        real_roots: the load's memo of repo real paths (``check_contract_paths``).

    Raises:
        UserError: the file did not parse, or its id is taken (``seen``: id ->
            file), or it names an unknown repo, or its contract escapes its repo.
    """
    if ps.error is not None:
        raise ps.error
    assert ps.front is not None
    where = where if where is not None else display_path(ps.file)
    front = ps.front
    if front.id in seen:
        raise UserError(
            f"duplicate prompt id {front.id!r} (also in {display_path(seen[front.id])})",
            file=where,
            key="id",
            fix="give every prompt a unique id",
        )
    targets = tuple(front.targets) if front.targets else ((default_repo,) if default_repo else ())
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
        contract,
        repos=repos,
        default_repo=targets[0] if targets else None,
        file=where,
        real_roots=real_roots,
    )
    _check_simulated_writes(front, repos, where)
    return Prompt(
        id=front.id,
        file=ps.file,
        order=ps.order,
        front=front,
        body=ps.body,
        contract=contract,
        targets=targets,
        rel=relative_file(ps.file, root),
    )


def _check_simulated_writes(front: PromptFrontMatter, repos: dict[str, Path], where: str) -> None:
    """Each ``simulate`` write names a known repo."""
    if front.simulate is None:
        return
    steps = [*front.simulate.attempts, front.simulate.resume]
    for a_index, step in enumerate(steps):
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


def _check_dependencies(
    root: Path,
    prompts: list[Prompt],
    by_id: dict[str, Prompt],
    raws: list[dict[str, Any] | None],
) -> list[Prompt]:
    """Each ``depends_on`` names a prompt of the packet.

    A string names the prompt of that id exactly. A number (YAML ``2``, which
    the front matter's model reads as ``"02"``) names the one prompt whose id
    is that number, however it is padded: ``2`` is the prompt ``"2"``, ``"02"``
    or ``"002"``, whichever exists.

    Args:
        prompts: the loaded prompts, in packet order.
        by_id: id -> prompt.
        raws: each prompt's front matter as YAML read it (``None``: not kept),
            aligned with ``prompts``; it tells a number from a string.

    Returns:
        ``prompts``, each number in a ``depends_on`` replaced by the id it names.

    Raises:
        UserError: naming the prompt's file, ``depends_on[i]`` and the ids that
            exist: an unknown id, or a number that no id (or more than one) is.
    """
    out: list[Prompt] = []
    for prompt, raw in zip(prompts, raws, strict=True):
        given = _raw_dependencies(raw, len(prompt.front.depends_on))
        resolved: list[str] = []
        for index, dep in enumerate(prompt.front.depends_on):
            number = given[index]
            resolved.append(dep if number is None else _numbered(prompt, index, number, by_id))
            if resolved[-1] not in by_id:
                raise UserError(
                    f"depends on unknown prompt {dep!r}",
                    file=display_path(prompt.file),
                    key=f"depends_on[{index}]",
                    fix=f"use one of: {', '.join(by_id)}",
                )
        if resolved != list(prompt.front.depends_on):
            front = prompt.front.model_copy(update={"depends_on": resolved})
            prompt = replace(prompt, front=front)
        out.append(prompt)
    return out


def _raw_dependencies(raw: dict[str, Any] | None, count: int) -> list[int | None]:
    """Each ``depends_on`` entry as YAML read it: the int, or ``None`` (a string)."""
    listed = raw.get("depends_on") if raw is not None else None
    if not isinstance(listed, list) or len(listed) != count:
        return [None] * count
    return [v if isinstance(v, int) and not isinstance(v, bool) else None for v in listed]


def _numbered(prompt: Prompt, index: int, number: int, by_id: dict[str, Prompt]) -> str:
    """The one id of ``by_id`` that is the number ``number`` (``"2"``, ``"02"``...).

    Raises:
        UserError: no id is that number, or more than one is.
    """
    same = [k for k in by_id if k.isdigit() and int(k) == number]
    if len(same) == 1:
        return same[0]
    problem = (
        f"no prompt's id is the number {number}"
        if not same
        else f"{len(same)} prompts' ids are the number {number} ({', '.join(same)})"
    )
    raise UserError(
        f"depends on prompt {number} (a number, not a quoted id), and {problem}",
        file=display_path(prompt.file),
        key=f"depends_on[{index}]",
        fix=f"write the id as a quoted string, one of: {', '.join(by_id)}",
    )
