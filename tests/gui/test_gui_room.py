"""The tray shows where the room is reached, and Settings → Room shows its QR code (read back with a real QR
decoder), opens it to another address over HTTPS with the certificate's fingerprint, and signs in the owner's phone
with a one-time link."""

import socket
from typing import Any

import httpx
import zxingcpp
from PySide6.QtGui import QImage, QPixmap

from tests.fakes.dbus import until
from tests.gui_fixture import SHOTS, run


def qr_text(pixmap: QPixmap) -> str:
    image = pixmap.toImage().convertToFormat(QImage.Format.Format_Grayscale8)
    rows = memoryview(bytes(image.constBits())[: image.bytesPerLine() * image.height()]).cast(
        "B", (image.height(), image.bytesPerLine())
    )
    found = zxingcpp.read_barcodes(rows)
    assert len(found) == 1, "one QR code, readable"
    return str(found[0].text)


def free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def test_the_rooms_address_qr_code_and_network_address(desktop: Any, qloop: Any) -> None:
    app, _ = desktop
    local = f"{app.daemon.url}/"

    async def scenario() -> None:
        assert app.tray.room_action.text() == f"Room: {local}"
        assert app.tray.room_action in app.tray.menu.actions()
        app.tray.room_action.trigger()
        await until(lambda: app.settings_window is not None and app.settings_window.room.address.text() == local)
        panel = app.settings_window.room
        assert app.settings_window.tabs.currentWidget() is panel
        assert qr_text(panel.qr.pixmap()) == local
        assert panel.about.text().startswith("Only this computer can open this address.")

        port = free_port("127.0.0.2")
        panel.listen.setCurrentText("127.0.0.2")
        panel.port.setText(str(port))
        await panel.save_choice()
        room = (await app.api.get("/api/room")).json()
        assert room["url"] == f"https://127.0.0.2:{port}/" == panel.address.text()
        assert qr_text(panel.qr.pixmap()) == room["url"]
        assert room["fingerprint"] in panel.about.text() and panel.status.text() == "Saved."
        await until(lambda: app.tray.room_action.text() == f"Room: {room['url']}")
        SHOTS.mkdir(parents=True, exist_ok=True)
        app.settings_window.grab().save(str(SHOTS / "settings-room.png"))

        await panel.sign_in_phone()
        link = qr_text(panel.qr.pixmap())
        assert link.startswith(f"{room['url']}#code=") and "once" in panel.about.text()
        async with httpx.AsyncClient(verify=False) as phone:
            signed = await phone.post(f"{room['url']}room/exchange", json={"code": link.split("#code=")[1]})
            assert signed.json()["you"] == "owner"
            assert (await phone.get(f"{room['url']}room/me")).json()["owner"] is True

        panel.listen.setCurrentText("the-office")
        await panel.save_choice()
        assert panel.status.text() == ("Address: 'the-office' is not an IP address (or 'loopback': this computer only)")
        panel.listen.setCurrentText("loopback")
        await panel.save_choice()
        assert panel.address.text() == local and (await app.api.get("/api/room")).json()["url"] is None
        await until(lambda: app.tray.room_action.text() == f"Room: {local}")

    run(qloop, scenario())
