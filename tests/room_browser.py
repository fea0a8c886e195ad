"""Debian's Chromium, headless, driven by Playwright, for the room's browser tests. The flags keep it off the
network (its background connections would be refused here, many at a time, and it would look up Google's hosts)."""

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
]
PHONE = {"width": 375, "height": 812}
SHOTS = Path(__file__).resolve().parent.parent / ".cache" / "screenshots"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield launched
        finally:
            launched.close()


class Phone:
    """One person's browser (its own cookies) at phone size, with what its page reported as errors."""

    def __init__(self, browser: Browser, url: str, **options: object) -> None:
        self.context: BrowserContext = browser.new_context(
            viewport=PHONE, device_scale_factor=2, has_touch=True, **options
        )  # type: ignore[arg-type]
        self.page: Page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.url = url

    def sign_in(self, token: str) -> Page:
        self.page.goto(self.url)
        self.page.fill("#token", token)
        self.page.press("#token", "Enter")
        self.page.wait_for_selector("#home:not([hidden])")
        return self.page

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"room-{name}.png"))

    def close(self) -> None:
        self.context.close()
