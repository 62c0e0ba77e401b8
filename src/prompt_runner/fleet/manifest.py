"""The fleet manifest as written (``schema: prompt_runner.fleet/v1``), strict.

A fleet manifest is one YAML document (``fleet.yml``)::

    schema: prompt_runner.fleet/v1
    id: migrate                          # letters, digits, '-', '_', '.'
    engine: local                        # local | temporal
    concurrency: 4                       # at most this many members run at once
    failure_policy: continue             # continue | stop (start no new member after a failure)
    workspaces: [ws/api.yml, ws/web.yml] # workspace manifests, relative to this file
    template:                            # and/or: one workspace manifest applied to many repos
      workspace: ws/template.yml         # a workspace manifest (relative to this file)
      repository: target                 # the template's repository each entry replaces
      id: "{fleet}-{name}"               # each member's workspace id ({fleet}, {name})
      branch: "prompt-runner/{fleet}/{name}"   # each member's work branch
      repositories:
        - {name: api, remote: ../remotes/api.git, ref: main}
        - {name: web, remote: git@example.com:me/web.git}
    temporal:                            # engine: temporal only
      address: localhost:7233
      namespace: default
      task_queue: prompt-runner
      heartbeat_timeout_s: 30            # a worker silent this long is taken for dead
      max_attempts: 10                   # a member's activity attempts in all
      tls: true                          # default false (true when api_key_env is given)
      tls_ca: certs/ca.pem               # the server's CA (default: the system's roots)
      tls_cert: certs/client.pem         # mTLS: this client's certificate ...
      tls_key: certs/client.key          # ... and its private key (both or neither)
      api_key_env: TEMPORAL_API_KEY      # the API key is read from this variable at connect

Every mapping refuses unknown keys; :func:`~.load.parse_fleet` turns the first
problem into one :class:`~prompt_runner.errors.UserError` naming the file, the
key path and the fix. The JSON Schema is ``prompt-runner schema fleet``.
"""

from __future__ import annotations

import string
from typing import Annotated, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from ..workspace.manifest import NAME_PATTERN

SCHEMA = "prompt_runner.fleet/v1"
"""The one fleet schema this build reads."""

Engine = Literal["local", "temporal"]
FleetFailurePolicy = Literal["continue", "stop"]

Name = Annotated[StrictStr, Field(pattern=NAME_PATTERN, max_length=100)]
Text = Annotated[StrictStr, Field(min_length=1)]

PLACEHOLDERS = ("fleet", "name")
"""The names a template's ``id`` and ``branch`` patterns may use."""

MAX_CONCURRENCY = 256

ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
"""An environment variable's name (``api_key_env``)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_pattern(value: str) -> str:
    """A ``str.format`` pattern that uses only :data:`PLACEHOLDERS` and ``{name}``.

    Raises:
        ValueError: a malformed pattern, an unknown placeholder, or no ``{name}``.
    """
    try:
        fields = [f for _, f, spec, conv in string.Formatter().parse(value) if f is not None]
    except ValueError as exc:
        raise ValueError(f"{value!r} is not a valid pattern ({exc})") from None
    unknown = [f for f in fields if f not in PLACEHOLDERS]
    if unknown:
        raise ValueError(f"{{{unknown[0]}}} is not a placeholder (use {{fleet}} and {{name}})")
    if "name" not in fields:
        raise ValueError(f"{value!r} must contain {{name}}, so each member gets its own")
    return value


class TemporalSpec(_Strict):
    """``temporal``: the Temporal service the fleet's workflows run on."""

    address: Text = Field(default="localhost:7233", description="HOST:PORT of the frontend")
    namespace: Text = Field(default="default", description="the Temporal namespace")
    task_queue: Text = Field(
        default="prompt-runner", description="the task queue the fleet's workers poll"
    )
    heartbeat_timeout_s: StrictInt = Field(
        default=30,
        ge=2,
        le=86_400,
        description="seconds without a heartbeat before a member's attempt counts as lost "
        "(its worker died) and is retried on another worker",
    )
    max_attempts: StrictInt = Field(
        default=10, ge=1, le=1000, description="attempts a member's activity gets in all"
    )
    tls: StrictBool | None = Field(
        default=None,
        description="connect over TLS (default false, or true when api_key_env is given: "
        "Temporal Cloud needs TLS); tls_ca, tls_cert and tls_key turn it on",
    )
    tls_ca: Text | None = Field(
        default=None,
        description="PEM file of the CA that signed the server's certificate, relative to "
        "this file (default: the system's roots)",
    )
    tls_cert: Text | None = Field(
        default=None,
        description="mTLS: PEM file of this client's certificate, relative to this file "
        "(with tls_key)",
    )
    tls_key: Text | None = Field(
        default=None,
        description="mTLS: PEM file of this client's private key, relative to this file "
        "(with tls_cert)",
    )
    api_key_env: Annotated[StrictStr, Field(pattern=ENV_NAME_PATTERN)] | None = Field(
        default=None,
        description="the environment variable the API key is read from when connecting "
        "(the key itself is never written anywhere)",
    )

    @model_validator(mode="after")
    def _tls_pairs(self) -> TemporalSpec:
        if (self.tls_cert is None) != (self.tls_key is None):
            given, missing = (
                ("tls_cert", "tls_key")
                if self.tls_key is None
                else (
                    "tls_key",
                    "tls_cert",
                )
            )
            raise ValueError(f"{given} is given without {missing} (mTLS needs both)")
        if self.tls is False and (self.tls_ca or self.tls_cert):
            raise ValueError("tls is false but tls_ca or tls_cert is given")
        return self


class TemplateRepository(_Strict):
    """One ``template.repositories`` entry: a repository the template is applied to."""

    name: Name = Field(description="the member's name ({name} in the id and branch patterns)")
    remote: Text = Field(description="its remote (a URL, or a path relative to the fleet file)")
    ref: Text | None = Field(
        default=None, description="the branch, tag or commit (default: the template's ref)"
    )


class TemplateSpec(_Strict):
    """``template``: one workspace manifest applied to each of a list of repositories."""

    workspace: Text = Field(description="the template workspace manifest, relative to this file")
    repository: Name = Field(
        description="the template's repository whose remote each entry replaces"
    )
    id: Text = Field(default="{fleet}-{name}", description="each member's workspace id")
    branch: Text = Field(
        default="prompt-runner/{fleet}/{name}", description="each member's work branch"
    )
    repositories: tuple[TemplateRepository, ...] = Field(min_length=1)

    @field_validator("id", "branch")
    @classmethod
    def _pattern(cls, value: str) -> str:
        return check_pattern(value)


class FleetManifest(_Strict):
    """The whole manifest (see the module docstring)."""

    schema_: Literal["prompt_runner.fleet/v1"] = Field(alias="schema")
    id: Name
    engine: Engine = "local"
    concurrency: StrictInt = Field(default=1, ge=1, le=MAX_CONCURRENCY)
    failure_policy: FleetFailurePolicy = "continue"
    workspaces: tuple[Text, ...] = Field(
        default=(), description="workspace manifest paths, relative to this file"
    )
    template: TemplateSpec | None = None
    temporal: TemporalSpec | None = None

    model_config = ConfigDict(extra="forbid", frozen=True)
