"""The dashboard's ASGI app: pages, JSON reads, server-sent event streams, actions.

Routes (every one behind :class:`~.security.Guard`)::

    GET  /                                   the overview page
    GET  /runs/{key}                         a run's page
    GET  /static/{file}                      its script and style sheet
    GET  /api/overview                       {"runs": [row, ...], "fleets", "now_ms"}
    GET  /api/stream                         SSE: "rows" (as /api/overview) once, then
                                             "row" per change
    GET  /api/runs/{key}                     {"row", "prompts", "actions"}
    GET  /api/runs/{key}/events?before=&limit=   a page of the event stream
    GET  /api/runs/{key}/log?before=&limit=      a page of the control log
    GET  /api/runs/{key}/stream?events=&log=&stream=
                                             SSE: "row", "events", "log", "prompts",
                                             "answer", "reset" (the stream was replaced)
    GET  /api/runs/{key}/commits/{repo}/{sha}    {"text"}: git show of a prompt's commit
    GET  /api/runs/{key}/requests/{name}     an action's answer (pending until receipted)
    POST /api/runs/{key}/actions/{action}    {"author", ...params} -> the answer (400
                                             and nothing sent: a parameter the action
                                             does not take, or of the wrong type)

``key`` is one of the runs the server was given (anything else: 404). Pages
are static shells that carry only the CSRF token; every run's data arrives as
JSON and the script puts it in the DOM as text.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
from collections.abc import AsyncIterator, Sequence
from importlib import resources
from typing import Any

import anyio.to_thread
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ..control.store import ControlStore
from ..errors import PromptRunnerError
from ..state.untrusted_json import loads_unique
from . import tail
from .actions import ACTIONS, perform, refusal
from .follow import Follower, events_page, fleet_groups, page_doc
from .hub import Hub, now_ms
from .present import log_item
from .prompts import commit_diff, prompt_list
from .sources import RunSource

MAX_BODY = 64 * 1024
"""Bytes an action's JSON body may have."""

_STATIC = {"dashboard.js": "text/javascript", "dashboard.css": "text/css"}
_REQUEST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


class DashboardApp:
    """The routes over one :class:`Hub` (see the module docstring).

    Args:
        sources: the runs served.
        csrf: the token every page carries and every POST must send back.
        author: who an action is from when the page names nobody.
        page: events in a stream's first page.
    """

    def __init__(
        self, sources: Sequence[RunSource], *, csrf: str, author: str, page: int = tail.PAGE
    ) -> None:
        self.sources = {s.key: s for s in sources}
        self.order = [s.key for s in sources]
        self.fleets = fleet_groups(sources)
        self.hub = Hub(sources)
        self.csrf = csrf
        self.author = author
        self.page = page
        self._shells = {
            name: _asset(name)
            .replace("{{csrf}}", html.escape(csrf))
            .replace("{{author}}", html.escape(author))
            for name in ("overview.html", "run.html")
        }

    # -- plumbing -----------------------------------------------------------------------

    def starlette(self) -> Starlette:
        """The Starlette app; its lifespan runs the hub."""

        @contextlib.asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            task = asyncio.get_running_loop().create_task(self.hub.run())
            try:
                yield
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

        routes = [
            Route("/", self.overview_page),
            Route("/runs/{key}", self.run_page),
            Route("/static/{name}", self.static),
            Route("/api/overview", self.overview),
            Route("/api/stream", self.overview_stream),
            Route("/api/runs/{key}", self.run),
            Route("/api/runs/{key}/events", self.events),
            Route("/api/runs/{key}/log", self.log),
            Route("/api/runs/{key}/stream", self.run_stream),
            Route("/api/runs/{key}/commits/{repo}/{sha}", self.commit),
            Route("/api/runs/{key}/requests/{name}", self.request_answer),
            Route("/api/runs/{key}/actions/{action}", self.action, methods=["POST"]),
        ]
        return Starlette(routes=routes, lifespan=lifespan)

    def _source(self, request: Request) -> RunSource:
        source = self.sources.get(request.path_params["key"])
        if source is None:
            raise _NotFound("no such run on this dashboard")
        return source

    # -- pages --------------------------------------------------------------------------

    async def overview_page(self, request: Request) -> Response:
        return HTMLResponse(self._shells["overview.html"])

    async def run_page(self, request: Request) -> Response:
        try:
            self._source(request)
        except _NotFound as exc:
            return exc.response()
        return HTMLResponse(self._shells["run.html"])

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        media = _STATIC.get(name)
        if media is None:
            return Response("no such file\n", status_code=404, media_type="text/plain")
        return Response(_asset(name), media_type=media)

    # -- reads --------------------------------------------------------------------------

    async def _rows(self) -> list[dict[str, Any]]:
        missing = [k for k in self.order if k not in self.hub.rows]
        if missing:
            await self.hub.refresh(missing)
        return [self.hub.rows[k] for k in self.order]

    async def overview(self, request: Request) -> Response:
        rows = await self._rows()
        return JSONResponse({"runs": rows, "fleets": self.fleets, "now_ms": now_ms()})

    async def run(self, request: Request) -> Response:
        try:
            source = self._source(request)
        except _NotFound as exc:
            return exc.response()
        await self.hub.refresh([source.key])
        row = self.hub.rows[source.key]
        prompts = await anyio.to_thread.run_sync(lambda: prompt_list(source, live=row["live"]))
        return JSONResponse({"row": row, "prompts": prompts, "actions": sorted(ACTIONS)})

    def _limit(self, request: Request) -> int:
        try:
            return int(request.query_params.get("limit", self.page))
        except ValueError:
            return self.page

    @staticmethod
    def _offset(request: Request, name: str) -> int | None:
        value = request.query_params.get(name)
        if value is None or value == "":
            return None
        try:
            return max(0, int(value))
        except ValueError:
            return None

    async def events(self, request: Request) -> Response:
        try:
            source = self._source(request)
        except _NotFound as exc:
            return exc.response()
        before, limit = self._offset(request, "before"), self._limit(request)
        doc = await anyio.to_thread.run_sync(lambda: events_page(source, limit, before))
        return JSONResponse(doc)

    async def log(self, request: Request) -> Response:
        try:
            source = self._source(request)
        except _NotFound as exc:
            return exc.response()
        before, limit = self._offset(request, "before"), self._limit(request)
        page = await anyio.to_thread.run_sync(
            lambda: tail.newest(source.layout.control_log, limit, before=before)
        )
        return JSONResponse(page_doc(page, log_item))

    async def commit(self, request: Request) -> Response:
        try:
            source = self._source(request)
        except _NotFound as exc:
            return exc.response()
        repo, sha = request.path_params["repo"], request.path_params["sha"]
        try:
            text = await anyio.to_thread.run_sync(lambda: commit_diff(source, repo, sha))
        except PromptRunnerError as exc:
            return JSONResponse({"text": None, "error": str(exc)}, status_code=502)
        if text is None:
            return JSONResponse({"error": "no prompt of this run made that commit"}, 404)
        return JSONResponse({"text": text})

    async def request_answer(self, request: Request) -> Response:
        try:
            source = self._source(request)
        except _NotFound as exc:
            return exc.response()
        name = request.path_params["name"]
        if not _REQUEST_NAME.fullmatch(name):
            return JSONResponse({"error": "not a request name"}, status_code=404)
        answer = self.hub.answer(source.key, name)
        if answer is None:
            self.hub.track(source.key, name)
            pending = (ControlStore(source.layout.root).requests_dir / name).exists()
            answer = {"action": None, "request": name, "reason": None, "detail": None}
            answer["state"] = "pending" if pending else "unknown"
        return JSONResponse(answer)

    # -- actions ------------------------------------------------------------------------

    async def action(self, request: Request) -> Response:
        try:
            source = self._source(request)
        except _NotFound as exc:
            return exc.response()
        action = request.path_params["action"]
        if action not in ACTIONS:
            return JSONResponse({"error": f"no action {action!r}"}, status_code=404)
        if "application/json" not in request.headers.get("content-type", ""):
            return JSONResponse({"error": "send the action as application/json"}, 415)
        body = await request.body()
        if len(body) > MAX_BODY:
            return JSONResponse({"error": f"the body is over {MAX_BODY} bytes"}, 413)
        try:  # a user's JSON: a repeated key or deep nesting is refused, as in a request file
            params = loads_unique(body or b"{}")
        except ValueError as exc:
            return JSONResponse({"error": f"the body must be a JSON object ({exc})"}, 400)
        if not isinstance(params, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        refused = refusal(action, params)  # an unknown key or a wrong type: nothing is sent
        if refused is not None:
            return JSONResponse(refused, status_code=400)
        author = params.pop("author", None)
        if author is None or not author.strip():
            author = self.author
        author = author.strip()[:120]
        answer = await anyio.to_thread.run_sync(lambda: perform(source, action, params, author))
        if answer["state"] == "pending" and answer["request"]:
            self.hub.track(source.key, answer["request"])
        return JSONResponse(answer)

    # -- streams ------------------------------------------------------------------------

    async def overview_stream(self, request: Request) -> Response:
        sub = self.hub.subscribe()
        rows = await self._rows()

        async def events() -> AsyncIterator[dict[str, str]]:
            try:
                doc = {"runs": rows, "fleets": self.fleets, "now_ms": now_ms()}
                yield {"event": "rows", "data": json.dumps(doc)}
                while True:
                    await sub.wait(15.0)
                    changed, _, _ = sub.take()
                    for key in self.order:
                        if key in changed:
                            yield {"event": "row", "data": json.dumps(changed[key])}
            finally:
                self.hub.unsubscribe(sub)

        return EventSourceResponse(events(), ping=15)

    async def run_stream(self, request: Request) -> Response:
        try:
            source = self._source(request)
        except _NotFound as exc:
            return exc.response()
        sub = self.hub.subscribe([source.key])
        follower = Follower(
            source,
            events=self._offset(request, "events"),
            log=self._offset(request, "log"),
            stream=request.query_params.get("stream"),
        )

        async def events() -> AsyncIterator[dict[str, str]]:
            try:
                for message in await anyio.to_thread.run_sync(follower.poll):
                    yield message
                while True:
                    await sub.wait(15.0)
                    rows, files, answers = sub.take()
                    if source.key in rows:
                        yield {"event": "row", "data": json.dumps(rows[source.key])}
                    for _, answer in answers:
                        yield {"event": "answer", "data": json.dumps(answer)}
                    if files:
                        for message in await anyio.to_thread.run_sync(follower.poll):
                            yield message
            finally:
                self.hub.unsubscribe(sub)

        return EventSourceResponse(events(), ping=15)


class _NotFound(Exception):
    def response(self) -> Response:
        return JSONResponse({"error": str(self)}, status_code=404)
