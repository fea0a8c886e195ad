"""Where the tray's menu is drawn. On Linux, Qt exports the tray icon over D-Bus (a StatusNotifierItem, its menu
as com.canonical.dbusmenu, drawn by the shell: KDE, GNOME's AppIndicator extension) when a StatusNotifierWatcher is
on the session bus as the icon is made, and otherwise draws it itself (an XEmbed tray). The two read a menu item's
text differently (desktop.core.visible.menu_label), so the tray asks the same question Qt asks, at the same time."""

import logging
import sys

log = logging.getLogger(__name__)
WATCHER = "org.kde.StatusNotifierWatcher"


def menu_over_dbus() -> bool:
    """Whether Qt hands the tray's menu to the desktop shell over D-Bus (Qt 6: a StatusNotifierWatcher is
    registered on the session bus; QGenericUnixTheme::createPlatformSystemTrayIcon)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        from jeepney import DBusAddress, new_method_call  # type: ignore[import-untyped]
        from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

        bus = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")
        with open_dbus_connection("SESSION") as connection:
            reply = connection.send_and_get_reply(new_method_call(bus, "NameHasOwner", "s", (WATCHER,)), timeout=2)
        return bool(reply.body[0])
    except Exception:  # no session bus: Qt draws the tray itself
        log.debug("no session bus to ask for a StatusNotifierWatcher", exc_info=True)
        return False
