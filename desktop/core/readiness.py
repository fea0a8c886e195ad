"""Whether each agent can run here ("ready", or what is missing), kept between reads: finding out reads the keyring
(every provider key) and looks for each CLI on the PATH. An agent is known by what its readiness depends on (its
runtime and its own environment); everything is found out afresh after `forget` (a provider key was stored, an
agent changed) and once what is known is older than `max_age` (a CLI installed or signed in outside Coxswain)."""

import json
from collections.abc import Callable

from desktop.store.rows import AgentRow

MAX_AGE = 60.0  # seconds


class Readiness:
    def __init__(
        self, find_out: Callable[[list[AgentRow]], list[str]], mono: Callable[[], float], max_age: float = MAX_AGE
    ) -> None:
        self._find_out, self._mono, self._max_age = find_out, mono, max_age
        self._known: dict[str, str] = {}
        self._since = 0.0

    def of(self, agents: list[AgentRow]) -> list[str]:
        if self._known and self._mono() - self._since > self._max_age:
            self._known.clear()
        unknown = list({_key(a): a for a in agents if _key(a) not in self._known}.items())
        if unknown:
            if not self._known:
                self._since = self._mono()
            found = self._find_out([agent for _, agent in unknown])  # one read of the keyring for all of them
            self._known.update(zip((key for key, _ in unknown), found, strict=True))
        return [self._known[_key(a)] for a in agents]

    def forget(self, *_: object) -> None:
        self._known.clear()


def _key(agent: AgentRow) -> str:
    return json.dumps([agent.runtime, agent.options.get("env")], sort_keys=True, default=str)
