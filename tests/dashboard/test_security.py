"""Who may talk to the dashboard: the token off loopback, CSRF and Origin on POSTs, the Host.

Every request goes to 127.0.0.1 (the only address a test may reach); the
server is bound to every address (``--host 0.0.0.0``), so it demands its
token whoever connects -- the peer's address is never trusted.
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx

from tests.dashboard.conftest import make_packet, serve

TOKEN = "s3cret-token-for-tests"


def _csrf(page: str) -> str:
    found = re.search(r'name="pr-csrf" content="([^"]+)"', page)
    assert found, page
    return found.group(1)


def test_off_loopback_every_request_needs_the_token(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    with serve(packet, args=("--host", "0.0.0.0", "--token", TOKEN)) as dash:
        assert dash.token == TOKEN
        base = dash.base
        for path in ("/", "/api/overview", "/api/stream", "/static/dashboard.js", "/runs/demo"):
            response = httpx.get(base + path)
            assert response.status_code == 401, path
            assert "token" in response.text
        assert httpx.get(base + "/api/overview?token=wrong-token-1").status_code == 401
        assert (
            httpx.get(base + "/", headers={"Authorization": "Bearer nope-nope"}).status_code == 401
        )

        # a ?token= link sets the cookie and drops the token from the address
        with httpx.Client(base_url=base) as browser:
            first = browser.get(f"/runs/demo?token={TOKEN}")
            assert first.status_code == 303
            assert first.headers["location"] == "/runs/demo"
            cookie = first.headers["set-cookie"]
            assert f"pr_dashboard_{dash.port}={TOKEN}" in cookie
            assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
            page = browser.get("/runs/demo")
            assert page.status_code == 200 and "pr-csrf" in page.text
            assert browser.get("/api/overview").json()["runs"][0]["key"] == "demo"
        assert httpx.get(
            base + "/api/overview", headers={"Authorization": f"Bearer {TOKEN}"}
        ).is_success


def test_a_post_with_the_token_but_a_foreign_origin_is_forbidden(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    with serve(packet, args=("--host", "0.0.0.0", "--token", TOKEN)) as dash:
        auth = {"Authorization": f"Bearer {TOKEN}"}
        csrf = _csrf(httpx.get(dash.base + "/", headers=auth).text)
        steer = dash.base + "/api/runs/demo/actions/view"
        body = {"diff": "full"}
        own = f"http://127.0.0.1:{dash.port}"
        cases = {
            "foreign Origin": {**auth, "Origin": "http://evil.example", "X-CSRF-Token": csrf},
            "no Origin": {**auth, "X-CSRF-Token": csrf},
            "other port": {**auth, "Origin": "http://127.0.0.1:1", "X-CSRF-Token": csrf},
            "no CSRF token": {**auth, "Origin": own},
            "wrong CSRF token": {**auth, "Origin": own, "X-CSRF-Token": "x" + csrf},
        }
        for name, headers in cases.items():
            response = httpx.post(steer, json=body, headers=headers)
            assert response.status_code == 403, name
        assert not (packet / ".prompt_runner" / "control" / "requests").exists()  # nothing written
        ok = httpx.post(steer, json=body, headers={**auth, "Origin": own, "X-CSRF-Token": csrf})
        assert ok.status_code == 200 and ok.json()["state"] == "pending"
        (request,) = (packet / ".prompt_runner" / "control" / "requests").iterdir()
        assert request.name == ok.json()["request"]


def test_a_generated_token_is_printed_and_required(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    with serve(packet, args=("--host", "0.0.0.0")) as dash:
        printed = "".join(dash.output)
        assert dash.token and f"?token={dash.token}" in dash.url
        assert len(dash.token) >= 24
        assert httpx.get(dash.base + "/api/overview").status_code == 401
        headers = {"Authorization": f"Bearer {dash.token}"}
        assert httpx.get(dash.base + "/api/overview", headers=headers).is_success
    assert "127.0.0.1" in printed


def test_the_host_header_is_checked_against_dns_rebinding(tmp_path: Path) -> None:
    packet = make_packet(tmp_path, {"01": {}})
    with serve(packet) as dash:  # loopback: no token needed
        assert dash.token is None
        assert httpx.get(dash.base + "/api/overview").is_success
        for host in ("localhost", f"localhost:{dash.port}", f"[::1]:{dash.port}"):
            assert httpx.get(dash.base + "/api/overview", headers={"Host": host}).is_success
        rebound = httpx.get(
            dash.base + "/api/overview", headers={"Host": f"evil.example:{dash.port}"}
        )
        assert rebound.status_code == 403
        # loopback still guards state changes: Origin and CSRF
        csrf = _csrf(httpx.get(dash.base + "/").text)
        url = dash.base + "/api/runs/demo/actions/view"
        assert (
            httpx.post(url, json={"diff": "full"}, headers={"X-CSRF-Token": csrf}).status_code
            == 403
        )
        own = {"Origin": f"http://127.0.0.1:{dash.port}", "X-CSRF-Token": csrf}
        assert httpx.post(url, json={"diff": "full"}, headers=own).status_code == 200
        # every response carries the policy that forbids inline script
        policy = httpx.get(dash.base + "/").headers["content-security-policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy


def test_only_the_runs_given_can_be_read_or_written(tmp_path: Path) -> None:
    packet = make_packet(tmp_path / "a", {"01": {}})
    other = make_packet(tmp_path / "b", {"01": {}}, name="other")
    with serve(packet) as dash:
        csrf = _csrf(httpx.get(dash.base + "/").text)
        own = {"Origin": f"http://127.0.0.1:{dash.port}", "X-CSRF-Token": csrf}
        for key in ("other", "..", "%2e%2e", "demo%2F..%2F..%2Fb%2Fother"):
            assert httpx.get(f"{dash.base}/api/runs/{key}").status_code == 404, key
            posted = httpx.post(
                f"{dash.base}/api/runs/{key}/actions/view", json={"diff": "full"}, headers=own
            )
            assert posted.status_code == 404, key
        assert (
            httpx.post(f"{dash.base}/api/runs/demo/actions/rm", json={}, headers=own).status_code
            == 404
        )
        assert httpx.get(f"{dash.base}/static/../api_dashboard.py").status_code == 404
        assert httpx.get(f"{dash.base}/api/runs/demo/commits/app/{'a' * 40}").status_code == 404
    assert not (other / ".prompt_runner").exists()
