"""The dashboard in a real browser (Playwright driving Debian's chromium) over real runs.

Playwright's own browser download is not reachable, so these launch
``/usr/bin/chromium`` (``scripts/install_browser.sh`` installs it; ``.ci/run``
calls that) and skip, saying so, only where it is missing.

``PROMPT_RUNNER_DASHBOARD_SCREENSHOT=docs/dashboard.png`` makes the steer test
save the run page it ends on (the README's picture).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prompt_runner.control.store import ControlStore
from tests.dashboard.conftest import (
    FAST,
    NOREPAIR,
    make_packet,
    serve,
    snapshot,
    start_run,
    wait_for,
)
from tests.helpers.cli import cli

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason="Debian's chromium is not installed (scripts/install_browser.sh installs it)",
)

SCREENSHOT = "PROMPT_RUNNER_DASHBOARD_SCREENSHOT"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    opened = context.new_page()
    opened.set_default_timeout(20_000)
    yield opened
    context.close()


def _steps(n: int, delay_ms: int) -> dict[str, dict[str, Any]]:
    return {
        f"0{i}": {
            "simulate": {
                "attempts": [
                    {
                        "delay_ms": delay_ms,
                        "messages": [f"step {i} done"],
                        "writes": [{"path": f"f{i}.txt", "text": f"{i}\n"}],
                    }
                ]
            },
            "verify": {"files_exist": [f"f{i}.txt"]},
        }
        for i in range(1, n + 1)
    }


def _row(page: Any, key: str) -> Any:
    return page.locator(f'#runs tr[data-key="{key}"]')


def test_the_overview_follows_two_live_runs_without_a_reload(
    tmp_path: Path, page: Any, stop_later: Any
) -> None:
    from playwright.sync_api import expect

    one = make_packet(tmp_path / "a", _steps(3, 1500), name="alpha")
    two = make_packet(tmp_path / "b", _steps(3, 1500), name="beta")
    with serve(one, two) as dash:
        page.goto(dash.url)
        page.evaluate("window.__loadedOnce = true")
        runs = [stop_later(start_run(p, "--no-commit")) for p in (one, two)]
        for key in ("alpha", "beta"):
            expect(_row(page, key).locator("td.state")).to_have_text("running")
            expect(_row(page, key).locator("td.prompt")).to_contain_text("1/3 · 01 Step 01")
        for key in ("alpha", "beta"):
            expect(_row(page, key).locator("td.prompt")).to_contain_text("2/3 · 02 Step 02")
            expect(_row(page, key).locator("td.attempt")).to_have_text("#1 run")
        for key in ("alpha", "beta"):
            expect(_row(page, key).locator("td.state")).to_have_text("completed", timeout=30_000)
            expect(_row(page, key).locator("td.prompt")).to_contain_text("03 Step 03")
        assert page.evaluate("window.__loadedOnce") is True  # the same page all along
        for run in runs:
            assert run.wait(timeout=30) == 0


def test_steer_view_and_relax_from_the_run_page(tmp_path: Path, page: Any, stop_later: Any) -> None:
    from playwright.sync_api import expect

    packet = make_packet(
        tmp_path,
        {
            "01": {
                "simulate": {
                    "attempts": [{"delay_ms": 60_000, "messages": ["never said"]}],
                    "resume": {
                        "messages": ["reading NOTES.md as you asked"],
                        "writes": [{"path": "NOTES.md", "text": "steered\n"}],
                    },
                },
                "verify": {"files_exist": ["NOTES.md"]},
            }
        },
        manifest={"recovery": {**FAST, **NOREPAIR, "max_steers": 2}},
    )
    with serve(packet) as dash:
        run = stop_later(start_run(packet))
        page.goto(f"{dash.base}/runs/demo")
        expect(page.locator("#runs td.state")).to_have_text("running")
        expect(page.locator("#events")).to_contain_text("session sim-01")

        # a view switch: pending, then applied by the runner (its snapshot changes)
        page.select_option("#view-diff", "full")
        page.select_option("#view-log_mode", "verbose")
        page.click("#view-send")
        view = page.locator('#answers li[data-action="view"]')
        expect(view).to_have_attribute("data-state", "applied")
        assert view.get_attribute("data-history") == "pending applied"
        wait_for(lambda: snapshot(packet).get("view", {}).get("diff") == "full")
        assert snapshot(packet)["view"]["log_mode"] == "verbose"

        # a relax without the confirmation is refused (and nothing is relaxed)
        page.select_option("#relax-prompt", "01")
        page.fill("#relax-clause", "files_exist")
        page.fill("#relax-reason", "flaky check")
        page.click("#relax-send")
        relax = page.locator('#answers li[data-action="relax"]')
        expect(relax).to_have_attribute("data-state", "refused")
        expect(relax).to_contain_text("confirm")
        assert not (packet / ".prompt_runner" / "amendments" / "01.jsonl").exists()

        # a steer typed into the page reaches the live session
        page.fill("#author", "ada")
        page.fill("#steer-text", "look at NOTES.md")
        page.click("#steer-send")
        steer = page.locator('#answers li[data-action="steer"]')
        expect(steer).to_have_attribute("data-state", "applied")
        assert steer.get_attribute("data-history") == "pending applied"
        expect(page.locator('#events .ev[data-kind="steer"]')).to_contain_text("look at NOTES.md")
        expect(page.locator("#events")).to_contain_text("reading NOTES.md as you asked")
        logged = page.locator('#log .entry[data-command="steer"]')
        expect(logged).to_contain_text("applied")
        expect(logged).to_contain_text("by ada")
        expect(page.locator("#runs td.state")).to_have_text("completed", timeout=30_000)
        expect(page.locator("#runs td.steers")).to_have_text("1")
        expect(page.locator('details.prompt[data-id="01"]')).to_have_attribute(
            "data-status", "completed"
        )
        if os.environ.get(SCREENSHOT):
            page.locator('details.prompt[data-id="01"]').evaluate("d => d.open = true")
            time.sleep(0.5)
            page.screenshot(path=os.environ[SCREENSHOT], full_page=False)
        assert run.wait(timeout=30) == 0
    entries = ControlStore(packet / ".prompt_runner").read_log()
    steered = [e for e in entries if e.get("command") == "steer"]
    assert [(e["outcome"], e["author"]) for e in steered] == [("applied", "ada")]
    assert (packet.parent / "repo" / "NOTES.md").read_text() == "steered\n"


def test_a_killed_runner_reads_down_within_2_s_and_the_page_keeps_working(
    tmp_path: Path, page: Any, stop_later: Any
) -> None:
    from playwright.sync_api import expect

    doomed = make_packet(tmp_path / "a", _steps(1, 60_000), name="doomed")
    other = make_packet(tmp_path / "b", _steps(3, 1500), name="other")
    with serve(doomed, other) as dash:
        page.goto(dash.url)
        victim = stop_later(start_run(doomed, "--no-commit"))
        stop_later(start_run(other, "--no-commit"))
        expect(_row(page, "doomed").locator("td.state")).to_have_text("running")
        expect(_row(page, "other").locator("td.state")).to_have_text("running")
        # running is read from run.pid; what the page shows of the dead run below (its
        # prompt, its session) is written just after: kill once it is
        expect(_row(page, "doomed").locator("td.prompt")).to_contain_text("01 Step 01")
        stream = doomed / ".prompt_runner" / "control" / "events.jsonl"
        wait_for(lambda: stream.exists() and '"session_started"' in stream.read_text())
        os.kill(victim.pid, signal.SIGKILL)
        killed = time.monotonic()
        expect(_row(page, "doomed").locator("td.state")).to_have_text("DOWN", timeout=5_000)
        assert time.monotonic() - killed < 2.0
        expect(_row(page, "doomed").locator("td.prompt")).to_contain_text("01 Step 01")
        # the page keeps working: the other run goes on updating, the dead run's page opens
        expect(_row(page, "other").locator("td.state")).to_have_text("completed", timeout=30_000)
        page.click('#runs tr[data-key="doomed"] a')
        expect(page.locator("#runs td.state")).to_have_text("DOWN")
        expect(page.locator('details.prompt[data-id="01"]')).to_have_attribute(
            "data-status", "interrupted"
        )
        expect(page.locator("#events")).to_contain_text("session sim-01")
        assert dash.proc.poll() is None


def test_agent_text_is_shown_as_text_never_run(tmp_path: Path, page: Any) -> None:
    from playwright.sync_api import expect

    script = "<script>document.title='x'</script>"
    image = "<img src=x onerror=\"document.title='y'\">"
    packet = make_packet(
        tmp_path,
        {"01": {"simulate": {"attempts": [{"messages": [script, image]}]}, "verify": {}}},
    )
    assert cli("run", packet, "--no-commit").returncode == 0
    with serve(packet, args=("--host", "0.0.0.0", "--token", "browser-token-1")) as dash:
        page.goto(f"{dash.base}/runs/demo?token=browser-token-1")  # the cookie, then the page
        assert page.url == f"{dash.base}/runs/demo"
        expect(page.locator("#events")).to_contain_text(script)
        expect(page.locator("#events")).to_contain_text(image)
        assert page.title() == "Prompt Runner · demo"
        assert page.locator("#events script, #events img").count() == 0
        time.sleep(0.3)
        assert page.title() == "Prompt Runner · demo"


def test_wake_from_the_page_ends_a_usage_limit_wait(tmp_path: Path, page: Any) -> None:
    """A fake Claude Code replays a rejected five-hour window resetting in 10 minutes: the
    overview reads "waiting until T"; wake on the run page is pending, then applied, and
    the run resumes the session and completes long before the reset."""
    from playwright.sync_api import expect

    from tests.runner.test_usage_limits import (
        NO_BUDGET,
        PROMPT,
        Run,
        claude_rejected,
        claude_success,
    )

    run = Run(tmp_path, [claude_rejected(600), claude_success()], PROMPT, {"recovery": NO_BUDGET})
    with serve(run.packet) as dash:
        proc = run.start()
        try:
            page.goto(dash.url)
            row = _row(page, "demo")
            until = wait_for(lambda: snapshot(run.packet).get("waiting_until"), timeout=60)
            shown = page.evaluate("iso => new Date(iso).toLocaleString()", until)
            expect(row.locator("td.state")).to_have_text(f"waiting until {shown}")
            assert row.locator("td.state").get_attribute("data-state") == "waiting"

            page.click('#runs tr[data-key="demo"] a')
            expect(page.locator("#runs td.state")).to_have_text(f"waiting until {shown}")
            wake = page.locator("#wake-send")
            expect(wake).to_be_visible()
            woke = time.monotonic()
            page.fill("#author", "night shift")
            wake.click()
            answer = page.locator('#answers li[data-action="wake"]')
            expect(answer).to_have_attribute("data-state", "applied")
            assert answer.get_attribute("data-history") == "pending applied"
            expect(page.locator("#runs td.state")).to_have_text("completed", timeout=60_000)
            expect(wake).to_be_hidden()
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, out + err
            assert time.monotonic() - woke < 60  # not the 600 s of the window
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    store = ControlStore(run.packet / ".prompt_runner")
    logged = [e for e in store.read_log() if e.get("command") == "wake"]
    assert [(e["outcome"], e["author"]) for e in logged] == [("applied", "night shift")]
    lines = store.events_path.read_text(encoding="utf-8").splitlines()
    ended = [e for e in map(json.loads, lines) if e.get("kind") == "usage_wait_ended"]
    assert ended and ended[0]["woken"] is True
    assert run.prompt()["status"] == "completed"
    assert run.commits()[0] == "feat: hello"


def test_a_fleet_is_one_group_on_the_overview_and_each_member_links_to_its_run(
    tmp_path: Path, page: Any, stop_later: Any
) -> None:
    """A local fleet of 3 workspaces over bare remotes, 2 at a time: the overview lists
    every member under the fleet with its state (queued, running, completed) as
    `fleet submit` drives them, and a member's row opens its run page."""
    import subprocess
    import sys

    from playwright.sync_api import expect

    from tests.helpers.fleets import make_fleet, sleepy_prompts

    path = make_fleet(
        tmp_path, 3, prompts=sleepy_prompts(2, delay_ms=1500), fleet={"concurrency": 2}
    )
    members = ["mig-t0", "mig-t1", "mig-t2"]
    with serve(args=("--fleet", str(path))) as dash:
        page.goto(dash.url)
        head = page.locator('#runs tbody[data-fleet="mig"] tr.fleet-head')
        expect(head).to_have_text("fleet mig · 3 members · 3 queued")
        group = page.locator('#runs tbody[data-fleet="mig"] tr[data-key]')
        expect(group).to_have_count(3)
        assert [r.get_attribute("data-key") for r in group.all()] == members
        submit = stop_later(
            subprocess.Popen(
                [sys.executable, "-m", "prompt_runner", "fleet", "submit", str(path)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        # two members run at once while the third waits its turn
        expect(_row(page, "mig-t0").locator("td.state")).to_have_text("running")
        expect(_row(page, "mig-t1").locator("td.state")).to_have_text("running")
        expect(_row(page, "mig-t2").locator("td.state")).to_have_text("queued")
        expect(head).to_contain_text("2 running")
        expect(_row(page, "mig-t0").locator("td.prompt")).to_contain_text("/2 · 0")
        for key in members:
            expect(_row(page, key).locator("td.state")).to_have_text("completed", timeout=60_000)
        expect(head).to_have_text("fleet mig · 3 members · 3 completed")
        assert submit.wait(timeout=60) == 0

        page.click('#runs tr[data-key="mig-t2"] a')
        assert page.url == f"{dash.base}/runs/mig-t2"
        expect(page.locator("#run-name")).to_have_text("mig \u203a mig-t2")
        expect(page.locator("#runs td.state")).to_have_text("completed")
        expect(page.locator("#events")).to_contain_text("session sim-01")
        for prompt_id in ("01", "02"):
            expect(page.locator(f'details.prompt[data-id="{prompt_id}"]')).to_have_attribute(
                "data-status", "completed"
            )
