"""Settings → Room's "Sign in my phone…" while the room is open to this computer only: a one-time link to 127.0.0.1
opens on the phone itself, so none is made; it says why and opens the list of this computer's addresses, and once
one is saved the QR code is the sign-in link at that address (read back with a real QR decoder)."""

import socket
from typing import Any

import pytest

from tests.fakes.dbus import until
from tests.gui.test_gui_room import qr_text
from tests.gui_fixture import SHOTS, run


def free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def test_sign_in_my_phone_on_loopback_explains_and_offers_an_address(
    desktop: Any, qloop: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from desktop.gui import room as settings_room

    app, _ = desktop
    local = f"{app.daemon.url}/"
    monkeypatch.setattr(settings_room, "machine_addresses", lambda: ["127.0.0.2"])  # this machine's, here

    async def scenario() -> None:
        app.tray.room_action.trigger()
        await until(lambda: app.settings_window is not None and app.settings_window.room.address.text() == local)
        window = app.settings_window
        panel = window.room
        panel.phone.click()
        await until(lambda: panel.about.text().startswith("A phone cannot open"))
        assert panel.about.text() == (
            f"A phone cannot open {local}: that address is this computer only. Choose one "
            "of this computer's addresses below and Save; the sign-in code for your phone "
            "shows then."
        )
        assert panel.qr.pixmap().isNull(), "no QR code a phone cannot open"
        assert panel.listen.view().isVisible(), "the addresses to choose from are open"
        assert [panel.listen.itemText(i) for i in range(panel.listen.count())] == ["loopback", "127.0.0.2"]
        SHOTS.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(SHOTS / "settings-room-phone-on-loopback.png"))

        panel.listen.hidePopup()
        panel.listen.setCurrentIndex(1)
        panel.port.setText(str(free_port("127.0.0.2")))
        panel.save.click()
        await until(lambda: panel.about.text().startswith("Scan this with your phone"))
        room = (await app.api.get("/api/room")).json()
        assert room["url"].startswith("https://127.0.0.2:") and panel.status.text() == "Saved."
        assert qr_text(panel.qr.pixmap()).startswith(f"{room['url']}#code=")
        window.grab().save(str(SHOTS / "settings-room-phone-signed-in.png"))

        await panel.save_choice()  # saved again later: no new sign-in link unasked
        assert panel.about.text().startswith("Phones on your network open this address")

    run(qloop, scenario())


def test_with_no_other_address_it_says_so(desktop: Any, qloop: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from desktop.gui import room as settings_room

    app, _ = desktop
    monkeypatch.setattr(settings_room, "machine_addresses", lambda: [])

    async def scenario() -> None:
        panel = (await app.open_settings(room=True)).room
        await panel.sign_in_phone()
        assert panel.about.text().endswith(
            "this computer has no other address now. Join a network, then choose its address below."
        )
        assert not panel.listen.view().isVisible() and panel.qr.pixmap().isNull()

    run(qloop, scenario())
