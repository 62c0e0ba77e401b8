"""Pushes that asking again cannot fix are tried once and say the fix: a
pre-push hook that prints its own ``fatal:`` line, a remote refusing the
credentials (a real http server on 127.0.0.1 answering 401), a remote URL with
no repository; a remote git cannot reach is still retried."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from prompt_runner.runner import push
from tests.runner.test_t8_push_refusals import git, new_commit, with_remote

HOOK = (
    "#!/bin/sh\necho run >> {count}\necho 'collecting tests'\n"
    "echo 'fatal: 3 tests failed' >&2\necho 'see test_x'\nexit 1\n"
)


def test_a_pre_push_hook_printing_fatal_is_not_retried(tmp_path: Path) -> None:
    _, repo, remote = with_remote(tmp_path)
    before = git(remote, "rev-parse", "main")
    new_commit(repo)
    count = tmp_path / "count"
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(HOOK.format(count=count))
    hook.chmod(0o755)
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 and waits == []
    assert count.read_text().splitlines() == ["run"]
    assert "rejected by the repo's pre-push hook" in (outcome.error or "")
    assert "fatal: 3 tests failed" in (outcome.error or "")
    assert git(remote, "rev-parse", "main") == before


def test_a_remote_url_with_no_repository_is_tried_once(tmp_path: Path) -> None:
    _, repo, _ = with_remote(tmp_path)
    nowhere = tmp_path / "nosuch" / "remote.git"
    git(repo, "remote", "add", "backup", str(nowhere))
    git(repo, "config", "branch.main.pushRemote", "backup")
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 and waits == []
    error = outcome.error or ""
    assert error.startswith("git push backup main failed: ")
    assert f"the remote 'backup' points at {nowhere}, where there is no repository" in error
    assert "git remote set-url backup URL" in error


class _Server:
    def __init__(self, code: int) -> None:
        self.requests: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append(self.path)
                self.send_response(code)
                if code == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_POST = do_GET

            def log_message(self, *_args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/app.git"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[_Server]:
    srv = _Server(request.param)
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


@pytest.mark.parametrize("server", [401], indirect=True)
def test_a_remote_refusing_credentials_is_tried_once(tmp_path: Path, server: _Server) -> None:
    _, repo, _ = with_remote(tmp_path)
    git(repo, "remote", "set-url", "origin", server.url)
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 and waits == []
    assert len(server.requests) == 1, server.requests  # one try, one request
    error = outcome.error or ""
    assert "terminal prompts disabled" in error
    assert f"the remote 'origin' ({server.url}) refused the credentials" in error


@pytest.mark.parametrize("server", [404], indirect=True)
def test_a_remote_with_no_such_repository_is_tried_once(tmp_path: Path, server: _Server) -> None:
    _, repo, _ = with_remote(tmp_path)
    git(repo, "remote", "set-url", "origin", server.url)
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 and waits == []
    assert len(server.requests) == 1, server.requests
    assert f"the remote 'origin' points at {server.url}, where there is no repository" in (
        outcome.error or ""
    )


def test_a_refused_connection_is_still_retried(tmp_path: Path) -> None:
    _, repo, _ = with_remote(tmp_path)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    git(repo, "remote", "set-url", "origin", f"http://127.0.0.1:{port}/app.git")
    waits: list[float] = []
    outcome = push.push_repo(repo, sleep=waits.append)
    assert not outcome.ok and outcome.attempts == 1 + len(push.BACKOFF_S)
    assert waits == list(push.BACKOFF_S)
    assert "refused the credentials" not in (outcome.error or "")
