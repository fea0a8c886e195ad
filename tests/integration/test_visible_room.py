"""What is shown is what runs, in the room (Debian's Chromium against a real daemon): the API hands over the text as
it was written and the page makes it visible (app.js's `visible`, the twin of desktop.core.visible), so the owner's
approval card, the request list and the request's page show every character of a teammate's prompt."""

from playwright.sync_api import Browser, expect

from desktop.core.visible import one_line, visible
from tests.daemon_process import DaemonProcess
from tests.hostile_text import BY_NAME, CORPUS, hidden
from tests.integration.test_room_browser import phone, phones
from tests.room_browser import Phone, browser

__all__ = ["browser", "phones"]


def test_the_room_shows_a_teammates_prompts_as_written(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    token = daemon.add_person("sarah")
    made = {h.name: daemon.request(h.text, token=token)["id"] for h in CORPUS}
    owner = phone(phones, browser, daemon)
    page = owner.sign_in(daemon.token)
    prompts = page.locator("#approvals .card .prompt")
    expect(prompts).to_have_count(len(CORPUS))
    newest_first = list(reversed(CORPUS))
    assert prompts.evaluate_all("nodes => nodes.map((n) => n.textContent)") == [h.seen for h in newest_first]
    lines = page.locator("#requests li a > div.what").evaluate_all("nodes => nodes.map((n) => n.textContent)")
    assert lines == [one_line(h.text, 90) for h in newest_first]
    assert lines[-1] == BY_NAME["markup"].seen and lines[0] == "echo first … 14 more lines"

    erase = BY_NAME["erase line"]
    page.locator(f"#requests a[href='#/r/{made['erase line']}']").click()
    expect(page.locator("#r-prompt")).to_have_text(erase.seen)
    assert page.locator("#r-prompt").evaluate("n => n.textContent") == erase.seen
    assert not hidden(page.locator("main").evaluate("n => n.textContent"))
    assert owner.errors == []


def test_the_rooms_visible_is_the_twin_of_the_python_one(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    page = phone(phones, browser, daemon).sign_in(daemon.token)
    singles = [chr(code) for code in range(0x110000) if hidden(chr(code)) and not 0xD800 <= code <= 0xDFFF]
    texts = [h.text for h in CORPUS] + singles
    in_js = page.evaluate("texts => texts.map((t) => [visible(t), firstLine(t, 50)])", texts)
    assert in_js == [[visible(t), one_line(t, 50)] for t in texts]
    # a lone surrogate (JSON can carry one as an escape; it cannot cross to the page as a string)
    assert page.evaluate("visible('a' + String.fromCharCode(0xd800) + 'b')") == "a⟨U+D800⟩b"
