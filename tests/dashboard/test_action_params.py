"""An action POSTed with a value of the wrong JSON type is refused saying so: a steer
whose ``text`` is 5 is told text must be a string (not "needs something to say")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx

from tests.dashboard.conftest import Dashboard, make_packet, serve


def _post(dash: Dashboard, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    csrf = re.search(r'name="pr-csrf" content="([^"]+)"', httpx.get(dash.base + "/").text)
    assert csrf
    headers = {"Origin": f"http://127.0.0.1:{dash.port}", "X-CSRF-Token": csrf.group(1)}
    response = httpx.post(dash.base + path, json=body, headers=headers)
    assert response.status_code == status, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_steer_text_that_is_not_a_string_is_refused_saying_so(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    with serve(packet) as dash:
        for wrong in (5, ["go on"]):
            answer = _post(dash, "/api/runs/demo/actions/steer", {"text": wrong}, 400)
            assert answer["state"] == "refused", answer
            assert "text must be a string" in answer["reason"], answer
            assert "needs something to say" not in answer["reason"]
        blank = _post(dash, "/api/runs/demo/actions/steer", {"text": "  "})
        assert blank["state"] == "refused" and "needs something to say" in blank["reason"]
