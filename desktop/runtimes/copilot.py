"""GitHub Copilot CLI (`copilot -p … --output-format json --allow-all-tools`). The conversation's id (its session
id) is chosen before launch (`--session-id`) and resumed with `-r`. Cancel interrupts the process group right after a
tool call completes. Copilot has no todo or plan tool, so it reports no progress."""

import json
import uuid
from pathlib import Path
from typing import Any

from desktop.runtimes.base import (
    CancelMode,
    Event,
    Launch,
    TurnTools,
    context_block,
    executable,
    json_line,
    missing_cli,
    model_and_args,
)
from desktop.runtimes.claude import CONTINUE
from desktop.store.rows import AgentRow, RequestRow

CREDENTIALS = ("COPILOT_PROVIDER_API_KEY", "COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN")


class CopilotRuntime:
    name = "copilot"
    cancel_mode: CancelMode = "after_tool"
    permission_modes: tuple[str, ...] = ()
    efforts: tuple[str, ...] = ()
    resumable = True
    executable = "copilot"

    def missing(self, env: dict[str, str]) -> str | None:
        signed_in = (Path(env.get("HOME", "~")).expanduser() / ".copilot" / "config.json").exists()
        return missing_cli(self.executable, env, CREDENTIALS, signed_in, no_key="not signed in (no token)")

    def launch(
        self,
        request: RequestRow,
        agent: AgentRow,
        references: list[dict[str, Any]],
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
    ) -> Launch:
        conversation = str(uuid.uuid4())
        prompt = context_block(references) + request.prompt
        return Launch(self._argv(agent, env, tools, ["--session-id", conversation, "-p", prompt]), {}, conversation)

    def resume(
        self,
        request: RequestRow,
        agent: AgentRow,
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
        prompt: str | None = None,
    ) -> Launch | None:
        if not request.conversation_ref:
            return None
        argv = self._argv(agent, env, tools, ["-r", request.conversation_ref, "-p", prompt or CONTINUE])
        return Launch(argv, {}, request.conversation_ref)

    def _argv(self, agent: AgentRow, env: dict[str, str], tools: TurnTools, turn: list[str]) -> list[str]:
        mcp = json.dumps(tools.stdio_config(type="local", tools=["*"]))
        return [
            executable(self.executable, env),
            *turn,
            "--output-format",
            "json",
            "--allow-all-tools",
            "--additional-mcp-config",
            mcp,
            *model_and_args(agent, "--model"),
        ]

    def parser(self) -> "CopilotParser":
        return CopilotParser()


class CopilotParser:
    def __init__(self) -> None:
        self._last_message = ""
        self._last_error = ""

    def feed(self, line: str) -> list[Event]:
        message = json_line(line)
        if message is None or message.get("ephemeral"):
            return []
        kind, data = message.get("type"), message.get("data") or {}
        if kind == "assistant.turn_start":
            return [Event("turn_started")]
        if kind == "assistant.message":
            if data.get("content"):
                self._last_message = str(data["content"])
                return [Event("text", self._last_message)]
            return []
        if kind == "tool.execution_start":
            return [Event("tool_started", f"{data.get('toolName')}: {data.get('arguments', {})}"[:300])]
        if kind == "tool.execution_complete":
            return [Event("tool_finished", str(data.get("toolCallId", "")), is_error=not data.get("success", True))]
        if kind == "session.error":
            self._last_error = str(data.get("message", "the session failed"))
            fatal = data.get("errorType") == "authentication"
            return [Event("error", self._last_error, is_error=True, data={"fatal": fatal})]
        if kind == "result":
            ok = message.get("exitCode") == 0
            events = [Event("conversation", str(message.get("sessionId", "")))] if message.get("sessionId") else []
            text = self._last_message if ok else self._last_error or f"copilot exited with {message.get('exitCode')}"
            return [*events, Event("usage", data=message.get("usage") or {}), Event("result", text, is_error=not ok)]
        return []
