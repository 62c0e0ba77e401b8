"""The live web dashboard over the file control plane (``prompt-runner dashboard``).

It reads what runners write (snapshot, event stream, control log, prompt
records) and writes nothing but control requests, through the control
client: no daemon of its own, it works when a runner has died, and it can
only steer the runs it was given.

* :mod:`.sources` -- the runs served (packets, workspaces, fleet members);
* :mod:`.overview` -- a run's overview row; :mod:`.prompts` -- its prompt list;
* :mod:`.tail` -- pages of a JSONL file from byte offsets (never read whole);
* :mod:`.present` -- an event or log entry as the page shows it (studio text);
* :mod:`.actions` -- steer, view, stop, wake, amend, relax as control client calls;
* :mod:`.hub` -- the file watcher and liveness tick that drive the live pages;
* :mod:`.security` -- Host check, token, CSRF and Origin;
* :mod:`.app` -- the Starlette routes and SSE streams (imports the extra).

Only :mod:`.app` and :mod:`.hub` import the ``dashboard`` extra (Starlette,
sse-starlette, anyio); nothing outside ``api_dashboard`` imports this package.
"""
