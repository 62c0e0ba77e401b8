"""A real HTTP server on 127.0.0.1 in a thread, as a notification receiver.

``with webhook() as hook:`` gives ``hook.url("path")`` (an Apprise ``json://``
URL), ``hook.requests`` (what arrived: path, query, JSON body, monotonic ``at``) and
``hook.documents()`` (the notification documents, decoded from Apprise's
JSON payload). ``webhook(status=500)`` answers every POST with that status;
``webhook(hang=True)`` reads the request and never answers.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Hook:
    port: int
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str = "hook", query: str = "") -> str:
        return f"json://127.0.0.1:{self.port}/{path}" + (f"?{query}" if query else "")

    def documents(self) -> list[dict[str, Any]]:
        return [json.loads(r["body"]["message"]) for r in self.requests]


@contextmanager
def webhook(*, status: int = 200, hang: bool = False) -> Iterator[Hook]:
    hook = Hook(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            parts = urlsplit(self.path)
            hook.requests.append(
                {
                    "path": parts.path,
                    "query": parse_qs(parts.query),
                    "body": body,
                    "at": time.monotonic(),  # when it arrived (the test's clock)
                }
            )
            if hang:
                hook.release.wait(60)  # never answers while the test looks
                return
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    hook.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        hook.release.set()
        server.shutdown()
        server.server_close()
