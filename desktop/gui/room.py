"""Settings → Room: where teammates' phones (and the owner's) reach the room, its QR code, the certificate's
fingerprint to compare on the phone, a one-time sign-in link for the owner's own phone, and the choice of address.
The tray's "Room: <address>" item opens this tab."""

import asyncio
import io

import segno
from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication, QPixmap
from PySide6.QtNetwork import QAbstractSocket, QNetworkInterface
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.client import DaemonError, api
from desktop.client.shapes import Room
from desktop.client.transport import AsyncClient
from desktop.gui.form import bottom_bar, heading, labelled, say, status
from desktop.gui.work import Work

LOOPBACK = "loopback"
LABELS = {"room_address": "Address", "room_port": "HTTPS port", "room_certificate": "Certificate"}


def qr_pixmap(text: str, scale: int = 5) -> QPixmap:
    picture = io.BytesIO()
    segno.make(text, error="m").save(picture, kind="png", scale=scale, border=2)
    pixmap = QPixmap()
    pixmap.loadFromData(picture.getvalue(), "PNG")
    return pixmap


def machine_addresses() -> list[str]:
    """This computer's addresses another device could reach (no loopback, no IPv6 link-local)."""
    return [
        address.toString()
        for address in QNetworkInterface.allAddresses()
        if not address.isLoopback()
        and not address.isLinkLocal()
        and address.protocol()
        in (QAbstractSocket.NetworkLayerProtocol.IPv4Protocol, QAbstractSocket.NetworkLayerProtocol.IPv6Protocol)
    ]


class RoomPanel(QWidget):
    def __init__(self, client: AsyncClient, work: Work) -> None:
        super().__init__()
        self._client, self.work = client, work
        self.shown_url = ""
        self._sign_in_after_save = False  # asked on loopback: the code shows once an address is saved
        self._saved: dict[str, str] = {}  # the address, port and certificate as the daemon has them
        form = QFormLayout()
        self.address = QLabel()
        self.address.setTextInteractionFlags(self.address.textInteractionFlags().TextSelectableByMouse)
        self.address.setStyleSheet("font-size: 15px; font-weight: 600;")
        form.addRow(self.address)
        self.qr = QLabel()
        self.qr.setToolTip("Point the phone's camera at it")
        form.addRow(self.qr)
        self.about = status()
        form.addRow(self.about)
        buttons = QHBoxLayout()
        self.copy = QPushButton("Copy address")
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.shown_url))
        self.open = QPushButton("Open in browser")
        self.open.clicked.connect(lambda: QDesktopServices.openUrl(QUrl(self.shown_url)))
        self.phone = QPushButton("Sign in my phone…")
        self.phone.setToolTip("A QR code with a one-time sign-in link for you, good for 15 minutes")
        self.phone.clicked.connect(lambda: self.work.start(self.sign_in_phone()))
        for button in (self.copy, self.open, self.phone):
            buttons.addWidget(button)
        buttons.addStretch(1)
        form.addRow(buttons)

        form.addRow(heading("Open the room to"))
        self.listen = QComboBox()
        self.listen.setEditable(True)  # a tailnet address may not be listed yet
        self.listen.setToolTip("'loopback': this computer only. Any other address is served over HTTPS only.")
        form.addRow(LABELS["room_address"], self.listen)
        self.port = QLineEdit()
        form.addRow(LABELS["room_port"], self.port)
        certificate = QHBoxLayout()
        self.certificate = QLineEdit()
        self.certificate.setToolTip("'generated': the daemon makes its own; or a PEM file with certificate and key")
        browse = QPushButton("Choose…")
        browse.clicked.connect(self._choose_certificate)
        certificate.addWidget(self.certificate)
        certificate.addWidget(browse)
        form.addRow(LABELS["room_certificate"], certificate)
        self.save = QPushButton("Save")
        self.save.clicked.connect(lambda: self.work.start(self.save_choice()))
        self.status = status()
        self.listen.currentTextChanged.connect(self._changed)
        self.port.textChanged.connect(self._changed)
        self.certificate.textChanged.connect(self._changed)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addStretch(1)
        layout.addLayout(bottom_bar(self.status, self.save))
        self._changed()

    async def load(self) -> None:
        settings = await self._client.call(api.settings())
        self._saved = {key: settings[key] for key in LABELS}
        self.listen.clear()
        self.listen.addItems([LOOPBACK, *machine_addresses()])
        self.listen.setCurrentText(settings["room_address"])
        self.port.setText(settings["room_port"])
        self.certificate.setText(settings["room_certificate"])
        self.show_room(await self._client.call(api.room()))
        self._changed()

    def _wanted(self) -> dict[str, str]:
        return {
            "room_port": self.port.text().strip(),
            "room_certificate": self.certificate.text().strip(),
            "room_address": self.listen.currentText().strip(),
        }  # the address last: it restarts the listener

    def _changed(self) -> None:
        """Save is there to press only while the choice differs from what is saved."""
        self.save.setEnabled(self._wanted() != self._saved)

    def show_room(self, room: Room) -> None:
        self.shown_url = room.url or room.local_url
        self.address.setText(self.shown_url)
        self.qr.setPixmap(qr_pixmap(self.shown_url))
        if room.url:
            about = (
                f"Phones on your network open this address. Its certificate's SHA-256 fingerprint is "
                f"{room.fingerprint}: check that the phone shows the same before you sign in."
            )
        else:
            about = (
                "Only this computer can open this address. To let phones in, choose one of this computer's "
                "addresses below (the room is then served there over HTTPS)."
            )
        if room.problem:
            about = f"{room.problem}\n{about}"
        say(self.about, about, failed=bool(room.problem))

    async def sign_in_phone(self) -> None:
        if (await self._client.call(api.room())).url is None:
            self._offer_address()
            return
        self._sign_in_after_save = False
        try:
            link = await self._client.call(api.room_link("owner"))
        except DaemonError as error:
            say(self.about, str(error), failed=True)
            return
        self.qr.setPixmap(qr_pixmap(link.url))
        say(self.about, "Scan this with your phone to sign in as you. It works once, for 15 minutes; don't share it.")

    def _offer_address(self) -> None:
        """On loopback a sign-in code would hold 127.0.0.1, which a phone opens on itself: say so, and open the list
        of this computer's addresses instead (once one is saved, the code shows)."""
        addresses = machine_addresses()
        self.qr.clear()  # the address's own code would not open on a phone either
        if not addresses:
            say(
                self.about,
                f"A phone cannot open {self.shown_url}: that address is this computer only, and this "
                "computer has no other address now. Join a network, then choose its address below.",
            )
            return
        self._sign_in_after_save = True
        say(
            self.about,
            f"A phone cannot open {self.shown_url}: that address is this computer only. Choose one of this "
            "computer's addresses below and Save; the sign-in code for your phone shows then.",
        )
        self.listen.setFocus()
        self.listen.showPopup()

    async def save_choice(self) -> None:
        """The address, port and certificate as chosen; what the daemon refuses is said by its label."""
        self.save.setEnabled(False)
        current = await self._client.call(api.settings())
        wanted = self._wanted()
        problems = []
        for key, value in wanted.items():
            if value != current[key]:
                try:
                    await self._client.call(api.change_setting(key, value))
                except DaemonError as error:
                    problems.append(labelled(str(error), LABELS))
        room = await self._client.call(api.room())
        for _ in range(50):  # the daemon starts or stops the HTTPS listener just after the change
            if (room.url is not None) == (wanted["room_address"] != LOOPBACK) or room.problem:
                break
            await asyncio.sleep(0.1)
            room = await self._client.call(api.room())
        self.show_room(room)
        settings = await self._client.call(api.settings())
        self._saved = {key: settings[key] for key in LABELS}
        say(self.status, "\n".join(problems) or "Saved.", failed=bool(problems))
        self._changed()
        if self._sign_in_after_save and room.url and not problems:
            await self.sign_in_phone()

    def _choose_certificate(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(self, "The room's certificate and key (PEM)", "", "PEM (*.pem)")
        if chosen:
            self.certificate.setText(chosen)
