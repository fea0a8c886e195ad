"""The room's loose ends (issue 20), as a person sees them in Chromium at phone size: a failed request's summary,
the console's "Load earlier" and its edges, which agent "Ask an agent" offers, what an agent that runs reads, a
denied request, and signing out."""

from playwright.sync_api import Browser, Locator, Page, expect

from tests.daemon_process import DaemonProcess
from tests.integration.test_room_browser import phone, phones
from tests.room_browser import Phone, browser

__all__ = ["browser", "phones"]
RED, GREEN, MUTED = "rgb(207, 34, 46)", "rgb(26, 127, 55)", "rgb(89, 99, 110)"  # --bad, --ok, --muted


def style(locator: Locator, name: str) -> str:
    return str(locator.evaluate(f"(node) => getComputedStyle(node).{name}"))


def open_request(page: Page, request_id: str) -> None:
    page.locator(f"#requests a[href='#/r/{request_id}']").click()
    expect(page.locator("#r-title")).to_contain_text(request_id)


def test_a_failed_requests_summary_says_why_in_red_in_the_consoles_font(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    failed = daemon.request("seq 1 30; echo boom >&2; exit 3")["id"]
    done = daemon.request("echo all good")["id"]
    daemon.wait_state(failed, "failed")
    daemon.wait_state(done, "done")
    owner = phone(phones, browser, daemon)
    page = owner.sign_in(daemon.token)
    open_request(page, failed)
    expect(page.locator("#console")).to_contain_text("boom")
    summary = page.locator("#r-result")
    expect(summary).to_have_text("Failed: exit code 3")  # the console's last lines are below it, not here again
    assert style(summary, "borderLeftColor") == RED == style(page.locator("#r-meta .state"), "color")
    assert style(summary, "fontFamily") == style(page.locator("#console"), "fontFamily")
    assert "monospace" in style(summary, "fontFamily")
    owner.shot("failed-summary")

    page.get_by_role("link", name="← All requests").click()
    open_request(page, done)
    expect(summary).to_have_text("all good")  # a done request's result is as it was: green, the page's font
    assert style(summary, "borderLeftColor") == GREEN
    assert style(summary, "fontFamily") == style(page.locator("#r-prompt"), "fontFamily")
    assert owner.errors == []


FIRST_AND_LAST_SEEN = """(box) => {
  const area = box.getBoundingClientRect(), top = area.top + box.clientTop, bottom = top + box.clientHeight;
  const seen = Array.from(box.children).filter((line) => {
    const r = line.getBoundingClientRect();
    return r.height > 0 && r.bottom > top && r.top < bottom;
  }).map((line) => line.getBoundingClientRect());
  return {top, bottom, first: seen[0].top, last: seen[seen.length - 1].bottom};
}"""


def whole_lines_seen(console: Locator) -> dict[str, float]:
    """The console's scroll area and its first and last lines in sight: neither is cut by the area's edges."""
    seen: dict[str, float] = console.evaluate(FIRST_AND_LAST_SEEN)
    assert seen["first"] >= seen["top"] - 0.01, f"the first line in sight is cut at the top: {seen}"
    assert seen["last"] <= seen["bottom"] + 0.01, f"the last line in sight is cut at the bottom: {seen}"
    return seen


def test_load_earlier_lines_up_with_the_console_whose_lines_are_never_cut(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    request_id = daemon.request("seq 1 700")["id"]
    daemon.wait_state(request_id, "done")
    owner = phone(phones, browser, daemon)
    page = owner.sign_in(daemon.token)
    open_request(page, request_id)
    console, lines = page.locator("#console"), page.locator("#console div:not(.pending)")
    expect(lines).to_have_count(500)
    earlier = page.get_by_role("button", name="Load earlier")
    earlier.scroll_into_view_if_needed()
    button, area, heading = earlier.bounding_box(), console.bounding_box(), page.locator("#request h2").last
    assert button and area and (title := heading.bounding_box())
    assert abs(button["x"] - area["x"]) < 0.5 and abs(button["x"] - title["x"]) < 0.5, "flush with the console"
    assert button["y"] + button["height"] <= area["y"], "above the console, not over its first line"
    whole_lines_seen(console)  # opened at its end
    owner.shot("console-load-earlier")

    earlier.click()
    expect(lines).to_have_count(700)
    expect(earlier).to_be_hidden()
    whole_lines_seen(console)
    console.evaluate("(box) => { box.scrollTop = 0; }")
    expect(lines.first).to_have_text("1")
    first = lines.first.bounding_box()
    assert first and whole_lines_seen(console)["first"] == first["y"], "the first line is the first in sight"
    owner.shot("console-earliest")
    assert owner.errors == []


def test_ask_an_agent_offers_one_that_is_ready_and_an_agent_that_runs_reads_working(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    added = daemon.post("/api/agents", {"name": "claude", "runtime": "claude", "folder": str(daemon.home)})
    assert added.status_code == 201, added.text  # listed first, and its CLI is not on this daemon's PATH
    sarah_token = daemon.add_person("sarah")
    sarah = phone(phones, browser, daemon)
    page = sarah.sign_in(sarah_token)
    agents = page.locator("#agent option")
    expect(agents).to_have_text(["claude · claude: not installed", "shell"])
    expect(page.locator("#agent")).to_have_value("shell")

    running = daemon.request("sleep 60")["id"]  # the owner's: it runs at once
    daemon.wait_state(running, "running")
    daemon.request("echo after it", token=sarah_token)  # waits for the owner's approval
    shell = page.locator("#agents li", has_text="shell · shell")
    expect(page.locator("#requests li")).to_have_count(1)  # hers; the owner's is not listed to her
    expect(shell.locator(".state")).to_have_text("working")
    expect(page.locator("#agent")).to_have_value("shell")
    sarah.shot("agents-working")

    page.select_option("#agent", "claude")  # her own choice stays hers as the page refreshes
    daemon.post(f"/api/requests/{running}/cancel")
    daemon.wait_state(running, "cancelled")
    daemon.post(f"/api/requests/{daemon.newest_request()['id']}/approve")
    expect(page.locator("#requests .state")).to_have_text("done", timeout=20_000)
    expect(page.locator("#agent")).to_have_value("claude")
    assert sarah.errors == []


def test_a_request_the_owner_denied_reads_denied_in_the_cancelled_colour(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    token = daemon.add_person("sarah")
    denied = daemon.request("echo deny me", token=token)["id"]
    cancelled = daemon.request("echo never mind", token=token)["id"]
    assert daemon.post(f"/api/requests/{denied}/deny").status_code == 200
    assert daemon.post(f"/api/requests/{cancelled}/cancel", token=token).status_code == 200
    assert daemon.show(denied)["state"] == "cancelled" and daemon.show(denied)["denied"] is True
    sarah = phone(phones, browser, daemon)
    page = sarah.sign_in(token)
    states = page.locator("#requests .state")
    expect(states).to_have_text(["cancelled", "denied"])  # newest first
    for prop in ("color", "borderColor", "backgroundColor"):
        assert style(states.nth(1), prop) == style(states.nth(0), prop)
    sarah.shot("denied-in-list")

    chip = page.locator("#r-meta .state")
    open_request(page, cancelled)
    expect(chip).to_have_text("cancelled")
    cancelled_colours = [style(chip, prop) for prop in ("color", "borderColor")]
    page.get_by_role("link", name="← All requests").click()
    open_request(page, denied)
    expect(chip).to_have_text("denied")
    assert [style(chip, prop) for prop in ("color", "borderColor")] == cancelled_colours
    expect(page.locator("#r-timeline")).to_contain_text(["denied by owner"])
    summary = page.locator("#r-result")
    expect(summary).to_have_text("denied by owner")
    assert style(summary, "borderLeftColor") not in (GREEN, RED), "a denial is no success, and no failure either"
    sarah.shot("denied-request")
    assert sarah.errors == []


def test_signing_out_is_said_plainly_not_as_an_error(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    sarah = phone(phones, browser, daemon)
    page = sarah.sign_in(daemon.add_person("sarah"))
    page.evaluate("say('Connection lost; reconnecting…', true)")  # as when the ended stream errs before the answer
    expect(page.locator("#status")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.locator("#signin")).to_be_visible()
    said = page.get_by_text("Signed out.", exact=True)
    expect(said).to_be_visible()
    assert style(said, "color") == MUTED
    expect(page.locator("#signin-error")).to_have_text("")
    expect(page.locator("#status")).to_be_hidden()  # no "Connection lost; reconnecting…" left from the stream
    sarah.shot("signed-out")

    page.fill("#token", "not-a-token")
    page.press("#token", "Enter")  # a refused token is an error, and the notice goes
    refused = page.get_by_text("that token is not valid (it may have been revoked)", exact=True)
    expect(refused).to_be_visible()
    assert style(refused, "color") == RED
    expect(said).to_be_hidden()
    assert sarah.errors == []
