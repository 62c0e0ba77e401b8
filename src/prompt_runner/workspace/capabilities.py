"""The published capability ids a workspace manifest may require (``requires.capabilities``).

Each id names one behaviour this build promises; a manifest that requires an
id this build lacks is refused by ``workspace plan`` and ``doctor`` before
anything is cloned. ``prompt-runner capabilities`` lists them too. Adding an
id is a promise: add it here only with the behaviour and its test.
"""

from __future__ import annotations

CAPABILITIES: tuple[str, ...] = (
    "workspace.manifest.v1",
    "workspace.independent_clone",
    "workspace.external_state",
    "workspace.import_state",
    "verifier.argv",
    "verifier.artifacts",
    "containment.process_group",
    "containment.systemd_user",
)
"""Every capability id, in the order ``docs/workspaces.md`` explains them:

- ``workspace.manifest.v1``: reads ``schema: prompt_runner.workspace/v1``.
- ``workspace.independent_clone``: ``prepare`` makes full clones (no hardlinks, no alternates).
- ``workspace.external_state``: runtime state lives under the runtime root, never in a clone.
- ``workspace.import_state``: ``import-state`` bridges a packet-local progress log.
- ``verifier.argv``: contract commands run as argv without a shell (``exec``/``args``).
- ``verifier.artifacts``: verifier argv may name ``@artifact:ID``.
- ``containment.process_group``: a detached run in its own session and process group.
- ``containment.systemd_user``: a detached run in a transient ``systemd-run --user`` unit.
"""
