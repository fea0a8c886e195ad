"""The owner's settings and provider keys: a change is checked, stored, audited and published, and whoever acts on
it is told."""

from collections.abc import Callable

from desktop.core import settings
from desktop.core.actors import Actor
from desktop.core.audit_log import AuditLog
from desktop.core.errors import Forbidden
from desktop.core.events import EventBus, SettingChanged
from desktop.store.db import Store


class OwnerSettings:
    def __init__(
        self,
        store: Store,
        events: EventBus,
        audit: AuditLog,
        wall: Callable[[], float],
        *,
        check: Callable[[str, str], None],
        changed: Callable[[str], None],
        keep_secret: Callable[[str, str], None],
        secret_kept: Callable[[str], None],
    ) -> None:
        """`check` refuses a value the daemon cannot act on now (in words); `changed` acts on a stored change;
        `keep_secret` puts a provider key in the keyring; `secret_kept` is told its name afterwards."""
        self._store, self._events, self._audit, self._wall = store, events, audit, wall
        self._check, self._changed = check, changed
        self._keep_secret, self._secret_kept = keep_secret, secret_kept

    def effective(self) -> dict[str, str]:
        return settings.effective(self._store)

    def change(self, key: str, value: str, who: Actor) -> None:
        if who.is_owner:
            self._check(key, value)
        settings.change(self._store, key, value, who, self._wall())
        self._events.publish(SettingChanged(key, value))
        self._changed(key)

    def keep_secret(self, name: str, value: str, who: Actor) -> None:
        if not who.is_owner:
            raise Forbidden("only the owner can do this")
        self._keep_secret(name, value)
        self._audit.record(who, "set_secret", f"stored {name} in the keyring")
        self._secret_kept(name)
