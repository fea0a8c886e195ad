"""Secrets the daemon must use (provider API keys), kept in the OS keyring: never in the database, logs, files or
URLs. Only allowlisted backends are used; there is no silent fall-back to plaintext."""

import logging
import secrets as secrets_module
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # keyring is imported, and its backend found, at the first use: the idle daemon needs neither
    from keyring.backend import KeyringBackend

log = logging.getLogger(__name__)
T = TypeVar("T")
SERVICE = "coxswain"
PROBE = "coxswain-round-trip-probe"
# the names people use -> the environment variable the agent CLIs read
SECRETS = {
    "anthropic_api_key": "ANTHROPIC_API_KEY",
    "openai_api_key": "OPENAI_API_KEY",
    "gemini_api_key": "GEMINI_API_KEY",
    "copilot_token": "COPILOT_GITHUB_TOKEN",
}
CHAT_SECRETS = ("slack_app_token", "slack_bot_token", "feishu_app_secret")  # the connectors' own; never given to agents
SECURE_BACKENDS = (
    "keyring.backends.SecretService",
    "keyring.backends.libsecret",
    "keyring.backends.kwallet",
    "keyring.backends.macOS",
    "keyring.backends.Windows",
)


class SecretStoreError(Exception):
    """A sentence for people: no secure keyring, a locked one, an unknown secret name."""


class Secrets:
    def __init__(self, backend: "KeyringBackend | None" = None) -> None:
        self._found = backend

    @property
    def _backend(self) -> "KeyringBackend":
        if self._found is None:
            import keyring

            self._found = keyring.get_keyring()
        return self._found

    @_backend.setter
    def _backend(self, backend: "KeyringBackend") -> None:
        self._found = backend

    def problem(self) -> str | None:
        """None if secrets can be kept here, else why not."""
        names = [type(b).__module__ for b in _leaves(self._backend)]
        if not any(name.startswith(SECURE_BACKENDS) for name in names):
            return (
                "no secure keyring is available (found: " + (", ".join(names) or "none") + "); on Linux, "
                "run a Secret Service such as GNOME Keyring or KWallet"
            )
        return None

    def round_trip(self) -> str | None:
        """Write, read back and delete a probe entry: None if the keyring really works, else why not."""
        problem = self.problem()
        if problem:
            return problem
        probe = secrets_module.token_urlsafe(16)
        try:
            self._call(lambda: self._backend.set_password(SERVICE, PROBE, probe))
            read = self._call(lambda: self._backend.get_password(SERVICE, PROBE))
            self._call(lambda: self._backend.delete_password(SERVICE, PROBE))
        except SecretStoreError as error:
            return str(error)
        return None if read == probe else "the keyring did not give back what was stored"

    def set(self, name: str, value: str) -> None:
        self._check(name)
        if not value.strip():
            raise SecretStoreError(f"the value for {name} is empty")
        self._call(lambda: self._backend.set_password(SERVICE, name, value.strip()))

    def set_chat(self, name: str, value: str) -> None:
        self._check(name, CHAT_SECRETS)
        if not value.strip():
            raise SecretStoreError(f"the value for {name} is empty")
        self._call(lambda: self._backend.set_password(SERVICE, name, value.strip()))

    def chat(self, name: str) -> str | None:
        self._check(name, CHAT_SECRETS)
        return self._read(name)

    def stored(self) -> list[str]:
        if self.problem():
            return []
        return [name for name in SECRETS if self._read(name)]

    def environment(self) -> dict[str, str]:
        """The stored secrets as the environment variables the agent CLIs read. A keyring that fails here counts
        as holding nothing (the agent then shows "no API key"); the failure is logged."""
        if self.problem():
            return {}
        found = {}
        for name, variable in SECRETS.items():
            try:
                value = self._read(name)
            except SecretStoreError as error:
                log.warning("cannot read %s from the keyring: %s", name, error)
                continue
            if value:
                found[variable] = value
        return found

    def _read(self, name: str) -> str | None:
        return self._call(lambda: self._backend.get_password(SERVICE, name))

    def _check(self, name: str, known: Iterable[str] = SECRETS) -> None:
        if name not in known:
            raise SecretStoreError(f"'{name[:40]}' is not a secret Coxswain keeps; known: {', '.join(known)}")
        problem = self.problem()
        if problem:
            raise SecretStoreError(problem)

    @staticmethod
    def _call(action: Callable[[], T]) -> T:
        from keyring.errors import KeyringError, KeyringLocked

        try:
            return action()
        except KeyringLocked:
            raise SecretStoreError("the keyring is locked; unlock it (sign in to your desktop) and try again") from None
        except KeyringError as error:
            raise SecretStoreError(f"the keyring failed: {error}") from None
        except Exception as error:  # a backend's own failure (e.g. its D-Bus session went away) is a failure too
            raise SecretStoreError(f"the keyring failed: {error.__class__.__name__}: {error}") from None


def _leaves(backend: "KeyringBackend") -> Iterable["KeyringBackend"]:
    inner = getattr(backend, "backends", None)
    if inner is None:
        return [backend]
    return [leaf for b in inner for leaf in _leaves(b)]
