"""The stages of a prompt outside its sessions, shown in the control snapshot.

Between a session's end and the next one the runner verifies the prompt's
contract (its commands may run a test suite for minutes) and commits its work
(a repo's pre-commit hook may run as long). No event arrives then, so the
snapshot was not rewritten and ``control status`` / ``watch`` showed the
moment the session ended. :func:`staged` makes the snapshot say what runs:
``stage`` ``{"name": "verifying" | "committing", "prompt_id", "since"}``,
written once as the stage begins (``ControlPlane.enter_stage``), and the stage
it interrupted (``None`` outside any) once it ends. The runner sets no time
limit on a commit: a hook that never ends is ended by ``prompt-runner stop``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .context import RunContext

VERIFYING = "verifying"
COMMITTING = "committing"


@contextmanager
def staged(ctx: RunContext, prompt_id: str, name: str) -> Iterator[None]:
    """Show ``name`` (:data:`VERIFYING`, :data:`COMMITTING`) as ``prompt_id``'s
    stage in the run's control snapshot while the block runs (nothing without a
    control plane). Nests: the inner stage's end shows the outer one again.
    Never raises for the plane's fault."""
    plane = ctx.control
    enter = getattr(plane, "enter_stage", None)
    if enter is None:
        yield
        return
    previous = enter(prompt_id, name)
    try:
        yield
    finally:
        plane.leave_stage(previous)  # type: ignore[union-attr]
