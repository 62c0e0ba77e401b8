"""Shared parts of the project's mock model servers (stdlib only, loopback only).

A mock server answers an agent CLI's model API with *scripted* replies: a
:class:`Script` is a list of steps (plain dicts, one per model request that
consumes a step), and every request is recorded so a test can assert what the
CLI sent. Servers bind ``127.0.0.1`` on port 0 (a free port) and run either in
a thread of the test (:meth:`MockServer.start`) or as a process
(:func:`serve_main`, used with ``--port-file``).

Step keys understood by every server:

* ``repeat``: ``true`` = the step is never used up; an integer N = it answers
  N requests before the next step is used.
* ``status`` (+ ``error_type``, ``code``, ``message``, ``retry_after``,
  ``headers``): answer with that HTTP error instead of a reply.
* ``headers`` on a reply step: extra response headers of the stream (e.g.
  Anthropic's ``anthropic-ratelimit-unified-*`` or Codex's
  ``x-codex-primary-*`` usage headers).
* ``fail``: ``"event"`` (the API's own in-stream error event) or ``"drop"``
  (close the connection abruptly) after the first part of the stream.

The server-specific keys (text, tool calls) are documented in
:mod:`tests.helpers.mock_anthropic` and :mod:`tests.helpers.mock_openai`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

Step = dict[str, Any]
HIDDEN_HEADERS = frozenset({"authorization", "x-api-key", "cookie"})


class Script:
    """A thread-safe queue of scripted steps.

    Args:
        steps: the steps, in order.
        fallback: the step used once the script is exhausted.
    """

    def __init__(self, steps: Sequence[Step], fallback: Step) -> None:
        self._steps = [dict(s) for s in steps]
        self._used = [0] * len(self._steps)
        self._index = 0
        self._fallback = dict(fallback)
        self._lock = threading.Lock()

    def take(self) -> Step:
        """The step answering the next consuming request (the fallback when exhausted)."""
        with self._lock:
            while self._index < len(self._steps):
                step = self._steps[self._index]
                repeat = step.get("repeat")
                if repeat is True:
                    return step
                self._used[self._index] += 1
                if self._used[self._index] >= (int(repeat) if repeat else 1):
                    self._index += 1
                return step
            return self._fallback

    @property
    def remaining(self) -> int:
        """How many steps are not used up yet."""
        with self._lock:
            return len(self._steps) - self._index


class MockServer:
    """A scripted model API on ``127.0.0.1`` (subclasses supply the handler).

    Args:
        steps: the script.
        log_path: append one JSON line per request here too (optional).
    """

    fallback: Step = {"text": "ok"}
    handler: type[BaseHTTPRequestHandler]

    def __init__(self, steps: Sequence[Step], log_path: Path | None = None) -> None:
        self.script = Script(steps, self.fallback)
        self.log_path = log_path
        self.records: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler)
        server.daemon_threads = True
        server.mock = self  # type: ignore[attr-defined]
        self.httpd = server
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MockServer:
        """Serve on a daemon thread; returns ``self``."""
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def record(self, entry: dict[str, Any]) -> None:
        """Remember one request (and append it to the log file, if any)."""
        with self._lock:
            entry["n"] = len(self.records) + 1
            entry["t"] = time.time()
            self.records.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry, default=str) + "\n")


class MockHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 plumbing shared by the mock APIs."""

    protocol_version = "HTTP/1.1"

    @property
    def mock(self) -> MockServer:
        return self.server.mock  # type: ignore[attr-defined,no-any-return]

    def log_message(self, format: str, *args: Any) -> None:
        return

    def read_json(self) -> dict[str, Any]:
        size = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(size) if size else b""
        encoding = (self.headers.get("content-encoding") or "").lower()
        if encoding in ("gzip", "deflate"):
            import zlib

            raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS if encoding == "gzip" else 15)
        elif encoding:
            return {"_undecoded": encoding, "_bytes": len(raw)}
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            return {"_invalid_json": raw[:500].decode("utf-8", "replace")}
        return body if isinstance(body, dict) else {"_not_an_object": True}

    def entry(self, body: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in HIDDEN_HEADERS}
        authed = any(self.headers.get(h) for h in ("authorization", "x-api-key"))
        return {
            "method": self.command,
            "path": self.path,
            "headers": headers,
            "authenticated": authed,
            "body": summary,
        }

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", f"req_mock_{time.monotonic_ns():x}")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def error_headers(self, step: Step) -> dict[str, str]:
        headers = {str(k): str(v) for k, v in (step.get("headers") or {}).items()}
        if step.get("retry_after") is not None:
            headers["retry-after"] = str(step["retry_after"])
        return headers

    def start_sse(self, headers: dict[str, str] | None = None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.close_connection = True

    def sse(self, name: str, data: dict[str, Any]) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def drop(self) -> None:
        """Close the connection abruptly (RST), mid-response."""
        self.wfile.flush()
        sock = self.connection
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        sock.close()


def serve_main(make: Callable[[list[Step], Path | None], MockServer], argv: Sequence[str]) -> None:
    """Command-line entry: ``--script FILE [--log FILE] [--port-file FILE]``.

    Serves until SIGINT/SIGTERM; the chosen port is written to ``--port-file``.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", help="JSON list of steps (default: one text step)")
    parser.add_argument("--log", type=Path)
    parser.add_argument("--port-file", type=Path)
    args = parser.parse_args(list(argv))
    steps = json.loads(Path(args.script).read_text()) if args.script else []
    server = make(steps, args.log)
    if args.port_file:
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(str(server.port))
        tmp.replace(args.port_file)
    with contextlib.suppress(KeyboardInterrupt):
        server.httpd.serve_forever()
