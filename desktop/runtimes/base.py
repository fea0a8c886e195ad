"""The one small interface every agent runtime adapter implements."""

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from desktop.store.rows import AgentRow, RequestRow


@dataclass(frozen=True)
class Launch:
    """What to run for a request: the command line and the environment it adds."""

    argv: list[str]
    env: dict[str, str]


class Runtime(Protocol):
    name: str

    def launch(self, request: RequestRow, agent: AgentRow, references: Path | None) -> Launch:
        """The command for `request`; `references` is a JSON file of the requests its prompt mentions."""
        ...
