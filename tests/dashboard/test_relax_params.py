"""A relax POSTed with ``drop`` that is not a list of clause names is refused saying
so (new-user tester t4): ``{"drop": "files_exist"}`` was refused as "name what to
relax" (the string was dropped), and a list holding a number lost the number
silently. One string is refused naming its type, as ``control_relax`` refuses it."""

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


def test_a_relax_whose_drop_is_not_a_list_of_names_is_refused_naming_the_type(
    tmp_path: Path,
) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    prompts = {p: p.read_bytes() for p in (packet / "prompts").iterdir()}
    base = {"prompt_id": "01", "reason": "flaky", "confirm": True}
    with serve(packet) as dash:
        for drop, named in (("files_exist", "str 'files_exist'"), (["files_exist", 5], "list")):
            answer = _post(dash, "/api/runs/demo/actions/relax", {**base, "drop": drop}, 400)
            assert answer["state"] == "refused", answer
            assert f"drop must be a list of clause names, not {named}" in answer["reason"], answer
            assert '["files_exist"]' in answer["reason"], answer
        answer = _post(dash, "/api/runs/demo/actions/relax", {**base, "remove": "files_exist"}, 400)
        assert answer["state"] == "refused", answer
        assert "remove must be an object, not str 'files_exist'" in answer["reason"], answer
    assert {p: p.read_bytes() for p in (packet / "prompts").iterdir()} == prompts
