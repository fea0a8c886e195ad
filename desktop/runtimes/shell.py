"""The built-in shell agent: the prompt is a command, run in the agent's folder. Works with no agent CLI."""

import os
from pathlib import Path

from desktop.runtimes.base import Launch
from desktop.store.rows import AgentRow, RequestRow


class ShellRuntime:
    name = "shell"

    def launch(self, request: RequestRow, agent: AgentRow, references: Path | None) -> Launch:
        argv = ["cmd.exe", "/c", request.prompt] if os.name == "nt" else ["/bin/sh", "-c", request.prompt]
        env = {"COX_REQUEST_ID": request.id, "COX_AGENT": agent.name}
        if references is not None:
            env["COX_REFERENCES"] = str(references)
        return Launch(argv, env)
