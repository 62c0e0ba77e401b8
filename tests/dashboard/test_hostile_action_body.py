"""A dashboard action whose JSON body repeats a key or nests too deeply is refused
with 400 naming why, as a request file is: a repeated key was applied with its
last value, and a deep body was an internal server error (RecursionError)."""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.dashboard.conftest import Dashboard, make_packet, serve


def _post_raw(dash: Dashboard, path: str, body: bytes) -> httpx.Response:
    csrf = re.search(r'name="pr-csrf" content="([^"]+)"', httpx.get(dash.base + "/").text)
    assert csrf
    headers = {
        "Origin": f"http://127.0.0.1:{dash.port}",
        "X-CSRF-Token": csrf.group(1),
        "Content-Type": "application/json",
    }
    return httpx.post(dash.base + path, content=body, headers=headers)


def test_a_repeated_key_or_deep_nesting_in_an_action_body_is_refused(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    requests = packet / ".prompt_runner" / "control" / "requests"
    with serve(packet) as dash:
        view = "/api/runs/demo/actions/view"
        repeated = _post_raw(dash, view, b'{"log_mode": "verbose", "log_mode": "studio"}')
        assert repeated.status_code == 400, repeated.text
        assert repeated.json()["error"] == (
            "the body must be a JSON object (duplicate key 'log_mode')"
        )
        deep = _post_raw(dash, view, b'{"diff": ' + b"[" * 20_000 + b"]" * 20_000 + b"}")
        assert deep.status_code == 400, deep.text
        assert "nested too deeply to decode" in deep.json()["error"]
        shallow_deep = _post_raw(dash, view, b'{"diff": ' + b"[" * 100 + b"]" * 100 + b"}")
        assert shallow_deep.status_code == 400, shallow_deep.text
        assert "nested deeper than 64 levels" in shallow_deep.json()["error"]
        fine = _post_raw(dash, view, b'{"log_mode": "verbose"}')
        assert fine.status_code == 200, fine.text
        assert fine.json()["state"] in ("pending", "applied", "refused"), fine.text
    written = sorted(requests.glob("*.json")) if requests.is_dir() else []
    assert len(written) <= 1  # only the well-formed one can have been written
