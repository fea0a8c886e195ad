"""The owner's chat connectors as the API offers them: list, add (tokens checked, then kept in the keyring), say
which chat user is which person, remove; each change audited."""

from collections.abc import Callable
from typing import Any

from desktop.connectors import setup
from desktop.connectors.service import Chat
from desktop.core import audit
from desktop.core.actors import Actor
from desktop.core.errors import NotFound
from desktop.core.principals import check_name
from desktop.platform.secrets import Secrets
from desktop.store import chat as sql
from desktop.store import directory
from desktop.store.db import Store


class ChatSetup:
    def __init__(
        self, chat: Chat, store: Store, secrets: Secrets, problems: dict[str, str], wall: Callable[[], float]
    ) -> None:
        """`problems`: connectors that could not start, and why."""
        self._chat, self._store, self._secrets, self._problems, self._wall = chat, store, secrets, problems, wall

    def listing(self) -> list[dict[str, Any]]:
        return setup.listing(self._chat, self._store, self._problems)

    async def add(self, kind: str, tokens: dict[str, str], config: dict[str, Any], who: Actor) -> str:
        """What the chat said the tokens are (e.g. the workspace and bot)."""
        said = await setup.add(self._chat, self._store, self._secrets, kind, tokens, config, self._wall())
        self._problems.pop(kind, None)
        with self._store.transaction() as conn:
            audit.append(conn, self._wall(), who, "add_connector", None, f"connected {kind} ({said})")
        return said

    def map_person(self, name: str, chat_user: str, person: str | None, who: Actor) -> None:
        """`person` None: forget this chat user."""
        if name not in sql.connectors(self._store.conn):
            raise NotFound(f"there is no connector '{name[:20]}'")
        if person is not None:
            check_name(person, "person")
            row = directory.principal(self._store.conn, person)
            if row is None or row.revoked_at is not None or row.kind not in ("person", "owner"):
                raise NotFound(f"there is no person '{person}'")
        with self._store.transaction() as conn:
            sql.map_person(conn, name, chat_user, person)
            audit.append(
                conn, self._wall(), who, "map_chat_user", None, f"{name} user {chat_user} is {person or 'nobody now'}"
            )

    async def remove(self, name: str, who: Actor) -> None:
        await self._chat.remove(name)
        with self._store.transaction() as conn:
            sql.remove_connector(conn, name)
            audit.append(conn, self._wall(), who, "remove_connector", None, f"removed {name}")
