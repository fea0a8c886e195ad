"""The room in a real browser (Debian's Chromium, headless, at phone size) against a real daemon: what a teammate
and the owner see, live, without reloading; and that nothing a prompt or an agent's output says runs in the page."""

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.daemon_process import DaemonProcess
from tests.room_browser import Phone, browser

__all__ = ["browser"]
SAMPLE = Path(__file__).parents[1] / "fixtures" / "testruns" / "pytest"
PYTEST = f"cd {SAMPLE} && {sys.executable} -m pytest -p no:cacheprovider --color=yes -v test_sample.py"
STEPS = "for i in 1 2 3 4 5 6; do printf '\\033[32mstep %s\\033[0m\\n' $i; sleep 0.7; done; echo finished"


@pytest.fixture
def phones(browser: Browser) -> Iterator[list[Phone]]:
    opened: list[Phone] = []
    yield opened
    for phone in opened:
        phone.close()


def phone(phones: list[Phone], browser: Browser, daemon: DaemonProcess) -> Phone:
    made = Phone(browser, daemon.url + "/")
    phones.append(made)
    return made


def test_a_teammate_asks_the_owner_approves_and_both_watch_it_run(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    sarah = phone(phones, browser, daemon)
    page = sarah.sign_in(daemon.add_person("sarah"))
    page.evaluate("window.sameDocument = true")  # gone if the page ever reloads
    expect(page.locator("#you")).to_have_text("sarah")
    expect(page.locator("#agents li")).to_contain_text(["shell · shell"])
    page.fill("#prompt", STEPS)
    page.get_by_role("button", name="Send").click()
    mine = page.locator("#requests li").first
    expect(mine).to_contain_text("pending")
    expect(mine).to_contain_text("sarah → shell")
    request_id = daemon.newest_request()["id"]
    expect(page.locator("#status")).to_have_text(f"Sent as {request_id}: it waits for the owner's approval.")
    sarah.shot("teammate-sent")

    # the owner signs in with a one-time link (the code after '#': never sent to a server)
    owner = phone(phones, browser, daemon)
    link = daemon.post("/api/room/link", {"person": "owner"}).json()["url"]
    assert link.startswith(daemon.url + "/#code=")
    owner.page.goto(link)
    owner.page.wait_for_selector("#home:not([hidden])")
    assert "code=" not in owner.page.url, "the used code is not left in the address bar or history"
    card = owner.page.locator("#approvals .card")
    expect(card).to_contain_text(f"{request_id.replace(request_id[:10], 'R-')} · sarah asks shell")
    expect(card.locator(".prompt")).to_have_text(STEPS)
    expect(card.locator(".left")).to_have_text("23 h 59 min left")
    owner.shot("owner-approval")
    assert owner.page.evaluate("document.documentElement.scrollWidth") <= 375
    card.get_by_role("button", name="Approve").focus()  # the keyboard is enough
    owner.page.keyboard.press("Enter")
    expect(card).to_have_count(0)

    # the teammate's page moves by itself: running, the console live, then done
    expect(mine).to_contain_text("running")
    page.locator(f"#requests a[href='#/r/{request_id}']").click()
    expect(page.locator("#r-meta .state")).to_have_text("running")
    expect(page.locator("#console")).to_contain_text("step 2")
    assert "finished" not in page.locator("#console").inner_text(), "the console was read while it ran"
    sarah.shot("teammate-running")
    expect(page.locator("#r-meta .state")).to_have_text("done", timeout=20_000)
    expect(page.locator("#console")).to_contain_text("finished")
    assert page.locator("#console").inner_text().count("step 3") == 1, "each line once"
    green = page.locator("#console span", has_text="step 1").evaluate("e => getComputedStyle(e).color")
    assert green == "rgb(13, 188, 121)", "the console keeps the colours"
    expect(page.locator("#r-timeline")).to_contain_text(["approved by owner"])
    assert page.evaluate("window.sameDocument") is True, "nothing was reloaded"
    assert page.evaluate("document.documentElement.scrollWidth") <= 375, "nothing wider than the phone"
    sarah.shot("teammate-done")

    # a retry, and a new request that mentions the first
    page.get_by_role("button", name="Retry").click()
    expect(page.locator("#r-meta")).to_contain_text(f"retry of {request_id}")
    page.get_by_role("link", name="← All requests").click()
    page.fill("#prompt", f"echo follow-up to {request_id}")
    page.keyboard.press("Tab")
    page.get_by_role("button", name="Send").press("Enter")
    expect(page.locator("#requests li")).to_have_count(3)
    page.locator("#requests li a").first.click()
    expect(page.locator("#r-meta")).to_contain_text(f"mentions {request_id}")
    # the teammate can cancel their own waiting request; the owner's own requests skip approval
    page.get_by_role("button", name="Cancel").click()
    expect(page.locator("#r-meta .state")).to_have_text("cancelled")
    assert sarah.errors == [] and owner.errors == []


def test_nothing_a_prompt_or_an_agent_prints_runs_in_anyone_elses_room(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    hostile = (
        "<script>window.pwned='script'</script>",
        "<img src=x onerror=\"window.pwned='img'\">",
        "<a href=\"javascript:window.pwned='link'\">click me</a>",
        "<svg onload=\"window.pwned='svg'\">",
    )
    prompt = "printf '%s\\n' " + " ".join("'" + text.replace("'", "'\\''") + "'" for text in hostile)
    mallory = phone(phones, browser, daemon)
    mallory.sign_in(daemon.add_person("mallory")).fill("#prompt", prompt)
    mallory.page.get_by_role("button", name="Send").click()
    expect(mallory.page.locator("#requests li")).to_contain_text(["pending"])

    owner = phone(phones, browser, daemon).sign_in(daemon.token)
    card = owner.locator("#approvals .card")
    expect(card.locator(".prompt")).to_have_text(prompt)
    card.get_by_role("button", name="Approve").click()
    owner.locator("#requests a").first.click()
    expect(owner.locator("#r-meta .state")).to_have_text("done", timeout=20_000)
    console = owner.locator("#console")
    for text in hostile:
        expect(console).to_contain_text(text)  # shown as the text it is
    expect(owner.locator("#r-result")).to_contain_text(hostile[0])
    console.get_by_text("click me").click()
    for page in (owner, mallory.page):
        assert page.locator("main script, main img, main svg, main a[href^='javascript']").count() == 0
        assert page.evaluate("window.pwned") is None
    phones[-1].shot("owner-hostile-output")


def test_revoking_a_teammate_signs_their_open_page_out_at_once(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    sarah = phone(phones, browser, daemon)
    page = sarah.sign_in(daemon.add_person("sarah"))
    assert daemon.post("/api/people/sarah/revoke").status_code == 200
    expect(page.locator("#signin")).to_be_visible(timeout=10_000)
    expect(page.locator("#signin-note")).to_have_text("Your session ended; sign in again.")  # news, not an error
    page.fill("#token", "not-her-token-any-more")
    page.press("#token", "Enter")
    expect(page.locator("#signin-error")).to_have_text("that token is not valid (it may have been revoked)")


def test_a_background_task_console_with_test_counts_earlier_pages_and_live_lines(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    done = daemon.post(
        "/api/tasks", {"agent": "shell", "command": f"seq 1 3000; {PYTEST}", "description": "pytest sample"}
    ).json()
    live = daemon.post(
        "/api/tasks",
        {"agent": "shell", "command": "for i in 1 2 3 4 5; do echo tick $i; sleep 0.6; done", "description": "ticks"},
    ).json()
    page = phone(phones, browser, daemon).sign_in(daemon.token)
    page.locator(f"#tasks a[href='#/t/{live['id']}']").click()
    expect(page.locator("#console")).to_contain_text("tick 1")
    expect(page.locator("#console")).to_contain_text("tick 5", timeout=15_000)
    assert page.locator("#console div:not(.pending)").count() == 5

    page.get_by_role("link", name="← All requests").click()
    deadline = time.monotonic() + 30
    while daemon.get(f"/api/tasks/{done['id']}").json()["state"] != "ended":
        assert time.monotonic() < deadline, "the test run did not end"
        time.sleep(0.05)
    page.locator(f"#tasks a[href='#/t/{done['id']}']").click()  # opens on the last 500 lines
    chip = page.locator("#chip")
    expect(chip).to_have_text("✓ 3 ✘ 1", timeout=15_000)
    assert chip.get_attribute("title") == "pytest: 3 passed, 1 failed, 1 skipped"
    expect(page.locator("#console")).to_contain_text("1 failed, 3 passed, 1 skipped")
    lines = page.locator("#console div:not(.pending)")
    expect(lines).to_have_count(500)
    assert "2600" in page.locator("#console").inner_text() and "2400" not in page.locator("#console").inner_text()
    red = page.locator("#console span", has_text="FAILED").first.evaluate("e => getComputedStyle(e).color")
    assert red in ("rgb(205, 49, 49)", "rgb(241, 76, 76)")
    page.get_by_role("button", name="Load earlier").click()
    expect(lines).to_have_count(1000)
    assert "2400" in page.locator("#console").inner_text()
    phones[-1].shot("task-console")


def test_a_requests_console_pages_back_and_shows_a_line_still_being_drawn(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    page = phone(phones, browser, daemon).sign_in(daemon.token)
    page.fill("#prompt", "seq 1 1500; printf 'downloading 10%%'; sleep 4; printf '\\rdownloading 100%%\\n'; echo ok")
    page.get_by_role("button", name="Send").click()
    request_id = daemon.newest_request()["id"]
    deadline = time.monotonic() + 15
    while daemon.get(f"/api/requests/{request_id}/console").json()["pending"] != "downloading 10%":
        assert time.monotonic() < deadline, "the command did not get to its progress bar"
        time.sleep(0.05)
    page.locator("#requests a").first.click()  # the page opens on the last 500 of the 1500 lines
    expect(page.locator("#console .pending")).to_have_text("downloading 10%", timeout=15_000)
    lines = page.locator("#console div:not(.pending)")
    expect(lines).to_have_count(500)
    assert page.locator("#console").inner_text().startswith("1001\n")
    expect(page.locator("#r-meta .state")).to_have_text("done", timeout=15_000)
    expect(lines.last).to_have_text("ok")
    expect(lines.nth(-2)).to_have_text("downloading 100%")
    expect(page.locator("#console .pending")).to_have_text("")
    page.get_by_role("button", name="Load earlier").click()
    expect(lines).to_have_count(1002)  # 500 earlier, the 500 first shown, and the two that came live
    assert page.locator("#console").inner_text().startswith("501\n")


def test_a_teammate_answers_the_agents_question_from_the_room(
    claude_daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    """The real Claude Code against the scripted model asks through its AskUserQuestion; Sarah answers on her
    phone and the answer reaches the model."""
    daemon = claude_daemon
    page = phone(phones, browser, daemon).sign_in(daemon.add_person("sarah"))
    page.select_option("#agent", "claude")
    page.fill("#prompt", "ASK Shall I deploy to staging?")
    page.get_by_role("button", name="Send").click()
    request_id = daemon.newest_request()["id"]
    daemon.post(f"/api/requests/{request_id}/approve")
    page.locator(f"#requests a[href='#/r/{request_id}']").click()
    expect(page.locator("#r-question-text")).to_have_text(
        "claude asks: Shall I deploy to staging? [Yes / No]", timeout=60_000
    )
    page.fill("#answer", "No, wait for the release")
    page.keyboard.press("Enter")
    expect(page.locator("#r-meta .state")).to_have_text("done", timeout=60_000)
    expect(page.locator("#r-question")).to_be_hidden()
    assert "wait for the release" in daemon.show(request_id)["result"]
    expect(page.locator("#r-timeline")).to_contain_text(["answered by sarah"])


def test_the_owner_approves_a_session_an_agent_wants_from_the_phone(
    claude_daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    """The card of a session an agent wants names it, its runtime and folder, its group and the accounts line."""
    import json
    import threading

    import httpx

    daemon = claude_daemon
    daemon.post("/api/settings", {"key": "agent_sessions", "value": "yes"})
    daemon.post("/api/session-groups", {"name": "Release 2.4"})
    parent = daemon.request("sleep 60 # release checks", agent="shell")
    daemon.wait_state(parent["id"], "running")
    token = (daemon.home / "tasks" / f"{parent['id']}.1" / "turn.token").read_text()
    answers: list[dict[str, object]] = []
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "start_session",
            "arguments": {"prompt": "echo <b>from S1</b>", "title": "Check deps", "group": "Release 2.4"},
        },
    }

    def start() -> None:  # as the agent's CLI would: the call waits for the owner
        answer = httpx.post(
            daemon.url + "/mcp",
            json=call,
            timeout=60,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        )
        answers.append(json.loads(answer.json()["result"]["content"][0]["text"]))

    caller = threading.Thread(target=start)
    caller.start()
    owner = phone(phones, browser, daemon)
    owner.page.goto(daemon.post("/api/room/link", {"person": "owner"}).json()["url"])
    card = owner.page.locator("#approvals .card")
    expect(card.locator("strong")).to_contain_text("an agent wants a session: Check deps", timeout=30_000)
    expect(card.locator(".session")).to_have_text(
        f"Session S1 · shell in {daemon.home / 'workspace'} · Group: Release 2.4 · via agent · sleep 60 # release "
        "checks"
    )
    expect(card.locator(".accounts")).to_contain_text("Sessions it starts use this machine's accounts")
    expect(card.locator(".prompt")).to_have_text("echo <b>from S1</b>")
    assert owner.page.evaluate("document.documentElement.scrollWidth") <= 375, "a long folder wraps"
    owner.shot("session-card")
    card.get_by_role("button", name="Approve").click()
    caller.join(30)
    assert answers and answers[0]["session"] == "S1"
    expect(owner.page.locator("#requests li").first).to_contain_text("via agent · sleep 60 # release checks → S1")
    daemon.post(f"/api/requests/{parent['id']}/cancel", {})
