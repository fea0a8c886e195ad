"""The built-in shell agent: the prompt is a command, run in the agent's folder. Works with no agent CLI."""

import json
import os
from pathlib import Path
from typing import Any

from desktop.runtimes.base import CancelMode, Event, Launch, TurnTools
from desktop.store.rows import AgentRow, RequestRow


class _NoEvents:
    def feed(self, line: str) -> list[Event]:
        return []


class ShellRuntime:
    name = "shell"
    cancel_mode: CancelMode = "now"
    permission_modes: tuple[str, ...] = ()
    efforts: tuple[str, ...] = ()
    resumable = False

    def missing(self, env: dict[str, str]) -> str | None:
        return None

    def launch(
        self,
        request: RequestRow,
        agent: AgentRow,
        references: list[dict[str, Any]],
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
    ) -> Launch:
        argv = ["cmd.exe", "/c", request.prompt] if os.name == "nt" else ["/bin/sh", "-c", request.prompt]
        extra = {"COX_REQUEST_ID": request.id, "COX_AGENT": agent.name}
        if references:
            path = task_dir / "references.json"
            path.write_text(json.dumps(references, indent=2))
            extra["COX_REFERENCES"] = str(path)
        return Launch(argv, extra)

    def resume(
        self,
        request: RequestRow,
        agent: AgentRow,
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
        prompt: str | None = None,
    ) -> Launch | None:
        return None  # a shell command is never run a second time

    def parser(self) -> _NoEvents:
        return _NoEvents()
