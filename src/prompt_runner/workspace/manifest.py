"""The workspace manifest as written (``schema: prompt_runner.workspace/v1``), strict.

A workspace manifest is one YAML document (``workspace.yml``)::

    schema: prompt_runner.workspace/v1
    id: nightly-app                      # letters, digits, '-', '_', '.'
    requires:
      prompt_runner: ">=0.1, <0.2"       # this build's version must match
      capabilities: [workspace.independent_clone, verifier.argv]
    repositories:
      app:
        remote: git@example.com:me/app.git   # the clone's origin
        ref: main                            # branch, tag or commit to check out
        source: ../app                       # bootstrap only: cloned from here if given
    packet: {repo: app, path: packets/nightly}   # read from the clone, never the checkout
    operator:
      workspace_root: auto               # auto: $XDG_DATA_HOME/prompt_runner/workspaces/<id>
      runtime_root: auto                 # auto: $XDG_STATE_HOME/prompt_runner/workspaces/<id>
      containment: auto                  # auto | process_group | systemd_user
    commits:
      mode: runner                       # runner: the runner commits; session: the agent does
      push: explicit                     # explicit | after_prompt
      branch: prompt-runner/nightly      # the work branch prepare checks out (default: ref)
    failure_policy: stop                 # stop | continue_independent (default: the packet's)
    contracts:
      artifacts:
        - id: checker
          repo: app
          project: tools/checker         # repo-relative directory the build runs in
          build: [make, checker]         # argv, no shell
          output: bin/checker            # project-relative executable the build makes
    notify: {}                           # notifications (docs/notify.md), kept as given here

Every mapping refuses unknown keys; :func:`parse_manifest` turns the first
problem into one :class:`~prompt_runner.errors.UserError` naming the file, the
key path and the fix (the packet loader's rule, ``packet/validation.py``).
The JSON Schema of this model is ``prompt-runner schema workspace``.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictStr, field_validator

from .capabilities import CAPABILITIES
from .version_range import parse_range

SCHEMA = "prompt_runner.workspace/v1"
"""The one manifest schema this build reads."""

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""Workspace ids, repository names and artifact ids (they name directories)."""

Containment = Literal["auto", "process_group", "systemd_user"]
CommitMode = Literal["runner", "session"]
PushPolicy = Literal["explicit", "after_prompt"]
WorkspaceFailurePolicy = Literal["stop", "continue_independent"]

Name = Annotated[StrictStr, Field(pattern=NAME_PATTERN, max_length=100)]
Branch = Annotated[StrictStr, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_./-]*$", max_length=200)]
Text = Annotated[StrictStr, Field(min_length=1)]


class _Strict(BaseModel):
    # Scalars are Strict* types (a YAML 1 is no string); containers take YAML's lists.
    model_config = ConfigDict(extra="forbid", frozen=True)


def _relative(value: str, what: str) -> str:
    """A repo-relative POSIX path that stays inside (no ``..``, not absolute)."""
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value or "\0" in value:
        raise ValueError(f"{value!r} must be a {what}relative path inside the repository")
    return value


class Requires(_Strict):
    """``requires``: the runner version range and the capabilities the workspace needs."""

    prompt_runner: Text | None = Field(
        default=None, description="a version range, e.g. '>=0.1, <0.2' (',' or 'and' joins)"
    )
    capabilities: tuple[StrictStr, ...] = Field(
        default=(), description="capability ids this build must offer (prompt-runner capabilities)"
    )

    @field_validator("prompt_runner")
    @classmethod
    def _range(cls, value: str | None) -> str | None:
        if value is not None:
            parse_range(value)
        return value

    @field_validator("capabilities")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [c for c in value if c not in CAPABILITIES]
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not a published capability (known: {', '.join(CAPABILITIES)})"
            )
        return value


class RepositorySpec(_Strict):
    """One ``repositories.NAME`` entry."""

    remote: Text = Field(description="the clone's origin (a URL or a path)")
    ref: Text = Field(default="main", description="the branch, tag or commit prepare checks out")
    source: Text | None = Field(
        default=None,
        description="bootstrap input only: clone from here (relative to the manifest), origin "
        "stays remote",
    )


class PacketSpec(_Strict):
    """``packet``: which clone holds the packet, and where inside it."""

    repo: Name
    path: Text = Field(description="the packet directory, relative to the clone")

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        return _relative(value, "clone-")


class OperatorSpec(_Strict):
    """``operator``: where the clones and the runtime state live, and the containment."""

    workspace_root: Text = Field(
        default="auto", description="auto, or an absolute directory for the clones and artifacts"
    )
    runtime_root: Text = Field(
        default="auto", description="auto, or an absolute directory for the runtime state"
    )
    containment: Containment = "auto"

    @field_validator("workspace_root", "runtime_root")
    @classmethod
    def _absolute(cls, value: str) -> str:
        if value != "auto" and not value.startswith(("/", "~")):
            raise ValueError(f"{value!r} must be 'auto' or an absolute path")
        return value


class CommitsSpec(_Strict):
    """``commits``: who commits, whether the work branch is pushed, which branch."""

    mode: CommitMode = "runner"
    push: PushPolicy = "explicit"
    branch: Branch | None = Field(
        default=None,
        description="the work branch prepare checks out in each clone (default: stay on ref)",
    )

    @field_validator("branch")
    @classmethod
    def _branch(cls, value: str | None) -> str | None:
        if value is not None and (".." in value or value.endswith((".lock", "/", "."))):
            raise ValueError(f"{value!r} is not a valid git branch name")
        return value


class ArtifactSpec(_Strict):
    """One ``contracts.artifacts`` entry: an executable built from a repo project."""

    id: Name
    repo: Name
    project: Text = Field(default=".", description="repo-relative directory the build runs in")
    build: tuple[Text, ...] = Field(min_length=1, description="the build argv (no shell)")
    output: Text = Field(description="the project-relative executable the build writes")

    @field_validator("project", "output")
    @classmethod
    def _inside(cls, value: str) -> str:
        return _relative(value, "repo-")


class ContractsSpec(_Strict):
    """``contracts``: the artifacts verifier argv may name as ``@artifact:ID``."""

    artifacts: tuple[ArtifactSpec, ...] = ()


class WorkspaceManifest(_Strict):
    """The whole manifest (see the module docstring)."""

    schema_: Literal["prompt_runner.workspace/v1"] = Field(alias="schema")
    id: Name
    requires: Requires = Requires()
    repositories: dict[Name, RepositorySpec] = Field(min_length=1)
    packet: PacketSpec
    operator: OperatorSpec = OperatorSpec()
    commits: CommitsSpec = CommitsSpec()
    failure_policy: WorkspaceFailurePolicy | None = None
    contracts: ContractsSpec = ContractsSpec()
    notify: dict[StrictStr, Any] | None = Field(
        default=None, description="notifications, passed to the notify settings as given"
    )

    model_config = ConfigDict(extra="forbid", frozen=True)
