"""Background continuations in the room, as a person sees them in Chromium at phone size: the list's row and the
request's page carry a "background continuation" badge whose origin ID opens the request it continues, and a
continuation that waits for the owner (a long chain) says so on its approval card."""

import time

from playwright.sync_api import Browser, expect

from desktop.core.ledger import Ledger
from desktop.store.db import Store
from tests.daemon_process import DaemonProcess
from tests.integration.test_room_browser import phone, phones
from tests.room_browser import Phone, browser

__all__ = ["browser", "phones"]


def continued(daemon: DaemonProcess, *made: tuple[str, str, bool]) -> list[str]:
    """Continuations (origin, prompt, approved) as the daemon makes them when tasks end; made while it is stopped,
    as no API makes one (the shell agent runs the prompt of an approved one once it is back)."""
    daemon.stop()
    store = Store(daemon.home / "coxswain.db", daemon.home / "backups")
    try:
        ledger = Ledger(store, time.time)
        ids = [
            ledger.create_continuation(ledger.get(origin), prompt, "T1 ended", approved).id
            for origin, prompt, approved in made
        ]
    finally:
        store.close()
    daemon.start()
    return ids


def short(request_id: str) -> str:
    return "R-" + request_id.split("-")[1]


def test_a_continuation_is_badged_in_the_list_and_on_its_page_and_links_to_its_origin(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    origin = daemon.request("echo started T1 in the background")["id"]
    daemon.wait_state(origin, "done")
    woken, waiting = continued(
        daemon, (origin, "echo 'T1 failed: 1 <b>test</b>'", True), (origin, "echo a second look", False)
    )
    daemon.wait_state(woken, "done")
    owner = phone(phones, browser, daemon)
    page = owner.sign_in(daemon.token)

    badge = f"↻ background continuation of {short(origin)}"
    expect(page.locator(f"#requests a[href='#/r/{woken}'] .badge")).to_have_text(badge)
    expect(page.locator(f"#requests a[href='#/r/{waiting}'] .badge")).to_have_text(badge)
    expect(page.locator(f"#requests a[href='#/r/{origin}'] .badge")).to_have_count(0)
    card = page.locator(f"#approvals [aria-label='Approve {waiting}?']")
    expect(card.locator(".hint")).to_have_text(f"↻ Background continuation of {short(origin)}")
    owner.shot("continuation-list")

    page.locator(f"#requests a[href='#/r/{woken}']").click()
    expect(page.locator("#r-title")).to_contain_text(woken)
    expect(page.locator("#r-meta .badge")).to_have_text(badge)
    expect(page.locator("#r-result")).to_have_text("T1 failed: 1 <b>test</b>")
    owner.shot("continuation-page")
    page.locator("#r-meta .badge a").click()
    expect(page.locator("#r-title")).to_contain_text(origin)
    expect(page.locator("#r-meta .badge")).to_have_count(0)
    expect(page.locator("#r-prompt")).to_have_text("echo started T1 in the background")
    assert owner.errors == []
