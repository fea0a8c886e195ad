"""Who is acting: the owner, a person, a machine, an agent in its turn, or the daemon itself."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Actor:
    name: str
    kind: str  # owner | person | machine | agent | system
    request_id: str | None = None  # an agent acts for the one running request whose turn token it holds
    turn_key: str | None = None  # which turn's token (a short form of its hash)

    @property
    def is_owner(self) -> bool:
        return self.kind == "owner"


SYSTEM = Actor("coxswain", "system")
