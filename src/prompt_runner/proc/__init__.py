"""The one place subprocesses are started and reaped.

Three shapes, one request and one result (:mod:`.request`):

* :func:`run` -- run to completion with captured (git) or streamed (verifier
  commands: any size in bounded memory) output and a deadline enforced on the
  whole process group, which is also ended when the caller is interrupted
  (:mod:`.complete`).
* :func:`spawn` -- a long-lived process whose stdout is read line by line on a
  reader thread while a watchdog enforces its run deadline and idle bound
  (agent CLIs); the handle can interrupt or terminate it and reports a
  :class:`ProcResult` when it has ended (:mod:`.spawned`).
* :func:`detach` -- a child that outlives its starter (a supervised run): a
  new session, stdin ``/dev/null``, output appended to log files, reaped in
  the background (:mod:`.detached`).
* :func:`attach` -- the one exception to the new session below: a child that
  must die with its starter (a fleet worker's runner), in the starter's own
  process group with SIGKILL as its parent-death signal (:mod:`.attached`).

Every child starts in a new session (``start_new_session=True``), so it and
every grandchild share one process group, and every way a group is ended goes
through :meth:`ProcessGroup.stop`: SIGINT (when interrupting), SIGTERM, then
SIGKILL, each after a grace period (:mod:`.group`). A missing executable is a
result (:attr:`ProcResult.missing`), never an exception. The environment is
always passed explicitly by the caller.

:func:`start_quick` (:mod:`.quick`) starts a short read-only child with
``os.posix_spawn`` and returns at once, so a few can run while the caller
works; it imports neither ``subprocess`` nor ``threading``. The names here
load on first use (PEP 562), so importing one module of the package (the
``watch`` sample's :mod:`.quick`) does not import every shape.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .attached import Attached, attach
    from .complete import READ_CHUNK, OutputSink, Registrar, execute, run
    from .detached import Detached, detach
    from .group import ProcessGroup
    from .quick import Quick, start_quick
    from .request import start
    from .spawned import Spawned, spawn
    from .values import (
        DEFAULT_GRACE_S,
        INTERRUPT_GRACE_S,
        ProcRequest,
        ProcResult,
        Timeout,
    )

_HOMES = {
    "Attached": "attached",
    "attach": "attached",
    "READ_CHUNK": "complete",
    "OutputSink": "complete",
    "Registrar": "complete",
    "execute": "complete",
    "run": "complete",
    "Detached": "detached",
    "detach": "detached",
    "ProcessGroup": "group",
    "Quick": "quick",
    "start_quick": "quick",
    "start": "request",
    "DEFAULT_GRACE_S": "values",
    "INTERRUPT_GRACE_S": "values",
    "ProcRequest": "values",
    "ProcResult": "values",
    "Timeout": "values",
    "Spawned": "spawned",
    "spawn": "spawned",
}


def __getattr__(name: str) -> object:
    """The package's names, each imported from its module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # lazy: a caller of one shape (watch's quick git) loads no other
    module = __import__(f"{__name__}.{home}", fromlist=[name])
    value = getattr(module, name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_GRACE_S",
    "INTERRUPT_GRACE_S",
    "READ_CHUNK",
    "Attached",
    "Detached",
    "OutputSink",
    "ProcRequest",
    "ProcResult",
    "ProcessGroup",
    "Quick",
    "Registrar",
    "Spawned",
    "Timeout",
    "attach",
    "detach",
    "execute",
    "run",
    "spawn",
    "start",
    "start_quick",
]
