"""One tray app per user and home: the first launch listens on a local socket named after its home; a second
launch finds it there, asks it to come forward, and exits."""

import hashlib
from collections.abc import Callable

from PySide6.QtNetwork import QLocalServer, QLocalSocket

from desktop.platform.paths import Home

SHOW = b"show\n"


def socket_name(home: Home) -> str:
    return "coxswain-" + hashlib.sha256(str(home.root.resolve()).encode()).hexdigest()[:16]


def ask_running_app(home: Home, timeout_ms: int = 500) -> bool:
    """True if a tray app already runs for `home` (it has been asked to come forward)."""
    socket = QLocalSocket()
    socket.connectToServer(socket_name(home))
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write(SHOW)
    socket.waitForBytesWritten(timeout_ms)
    socket.disconnectFromServer()
    return True


class Listener(QLocalServer):
    """The first launch's ear: `on_show` runs whenever a later launch asks for it."""

    def __init__(self, home: Home, on_show: Callable[[], None]) -> None:
        super().__init__()
        self._on_show = on_show
        QLocalServer.removeServer(socket_name(home))  # a socket file left by a crashed app
        if not self.listen(socket_name(home)):
            raise OSError(f"cannot listen for other launches: {self.errorString()}")
        self.newConnection.connect(self._accept)

    def _accept(self) -> None:
        while (connection := self.nextPendingConnection()) is not None:
            connection.readyRead.connect(self._on_show)
            connection.disconnected.connect(connection.deleteLater)
