"""Gemini CLI (`gemini -p … -o stream-json`). The conversation's id (its session id) is chosen before launch
(`--session-id`) and resumed with `-r`. Cancel interrupts the process group right after a tool call completes. Progress
from `write_todos`."""

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

# The owner has approved the request, and headless Gemini offers no shell tool in its default mode.
DEFAULT_MODE = "yolo"


class GeminiRuntime:
    name = "gemini"
    cancel_mode: CancelMode = "after_tool"
    permission_modes: tuple[str, ...] = ("default", "auto_edit", "yolo", "plan")
    efforts: tuple[str, ...] = ()
    resumable = True
    executable = "gemini"

    def missing(self, env: dict[str, str]) -> str | None:
        return missing_cli(self.executable, env, ("GEMINI_API_KEY", "GOOGLE_API_KEY"))

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
        argv = self._argv(agent, env, ["--session-id", conversation, "-p", prompt])
        return Launch(argv, self._env(task_dir, env, tools), conversation)

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
        return Launch(
            self._argv(agent, env, ["-r", request.conversation_ref, "-p", prompt or CONTINUE]),
            self._env(task_dir, env, tools),
            request.conversation_ref,
        )

    @staticmethod
    def _env(task_dir: Path, env: dict[str, str], tools: TurnTools) -> dict[str, str]:
        return {
            "GEMINI_CLI_TRUST_WORKSPACE": "true",  # the owner chose this folder for the agent
            "GEMINI_CLI_HOME": str(overlay_home(task_dir, env, tools)),
        }

    def _argv(self, agent: AgentRow, env: dict[str, str], turn: list[str]) -> list[str]:
        mode = str(agent.options.get("permission_mode") or DEFAULT_MODE)
        return [
            executable(self.executable, env),
            *turn,
            "-o",
            "stream-json",
            "--approval-mode",
            mode,
            *model_and_args(agent, "-m"),
        ]

    def parser(self) -> "GeminiParser":
        return GeminiParser()


def overlay_home(task_dir: Path, env: dict[str, str], tools: TurnTools) -> Path:
    """A home for one turn whose `.gemini` shows the user's own entry by entry (sessions, sign-in, history), except
    `settings.json`, which is the user's settings plus Coxswain's MCP server. Gemini reads MCP servers only from
    settings files, and a system settings file must belong to root; the user's own files stay untouched."""
    user = Path(env.get("GEMINI_CLI_HOME") or env.get("HOME") or Path.home()) / ".gemini"
    (user / "tmp").mkdir(parents=True, exist_ok=True)  # sessions are kept there, so a resume finds them
    overlay = task_dir / "gemini-home" / ".gemini"
    overlay.mkdir(parents=True)
    for entry in user.iterdir():
        if entry.name != "settings.json":
            (overlay / entry.name).symlink_to(entry)
    try:
        settings = json.loads((user / "settings.json").read_text())
    except FileNotFoundError:
        settings = {}
    except ValueError:  # settings with comments: keep them as they are, without Coxswain's tools
        (overlay / "settings.json").symlink_to(user / "settings.json")
        return overlay.parent
    servers = settings.setdefault("mcpServers", {})
    servers.update(tools.stdio_config(trust=True, timeout=7 * 24 * 3600 * 1000)["mcpServers"])
    (overlay / "settings.json").write_text(json.dumps(settings, indent=2))
    return overlay.parent


class GeminiParser:
    def __init__(self) -> None:
        self._text: list[str] = []

    def feed(self, line: str) -> list[Event]:
        message = json_line(line)
        if message is None:
            return []
        kind = message.get("type")
        if kind == "init":
            return [Event("conversation", str(message.get("session_id", ""))), Event("turn_started")]
        if kind == "message" and message.get("role") == "assistant":
            self._text.append(str(message.get("content", "")))
            return [Event("text", str(message.get("content", "")))]
        if kind == "tool_use":
            self._text.clear()  # the answer is what the model says after its last tool call
            events = [Event("tool_started", f"{message.get('tool_name')}: {message.get('parameters', {})}"[:300])]
            parameters = message.get("parameters") or {}
            todos = parameters.get("todos") if message.get("tool_name") == "write_todos" else None
            if todos:
                done = sum(1 for todo in todos if todo.get("status") == "completed")
                events.append(Event("progress", value=round(100 * done / len(todos), 1)))
            return events
        if kind == "tool_result":
            failed = message.get("status") != "success"
            return [Event("tool_finished", str(message.get("tool_id", "")), is_error=failed)]
        if kind == "error":
            return [Event("error", str(message.get("message", "")))]
        if kind == "result":
            ok = message.get("status") == "success"
            error = message.get("error") or {}
            text = "".join(self._text) if ok else str(error.get("message") or "the turn failed")
            return [Event("usage", data=message.get("stats") or {}), Event("result", text, is_error=not ok)]
        return []
