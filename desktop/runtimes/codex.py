"""Codex CLI (`codex exec --json`). The conversation is the thread id from the first event; resume is
`codex exec … resume <thread_id> PROMPT`. Codex has no usable hook to stop a turn, so cancel interrupts the whole
process group right after a tool call completes (the safe point). Progress comes from its plan (`todo_list`)."""

import json
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

SANDBOXES = ("read-only", "workspace-write", "danger-full-access")
QUIET = [
    "-c",
    "check_for_update_on_startup=false",
    "-c",
    "analytics.enabled=false",
    "-c",
    "features.plugins=false",
    "-c",
    "tools.update_plan.enabled=true",
]


class CodexRuntime:
    name = "codex"
    cancel_mode: CancelMode = "after_tool"
    permission_modes: tuple[str, ...] = SANDBOXES
    efforts: tuple[str, ...] = ("minimal", "low", "medium", "high", "xhigh")
    resumable = True
    executable = "codex"

    def missing(self, env: dict[str, str]) -> str | None:
        home = Path(env.get("CODEX_HOME") or Path(env.get("HOME", "~")).expanduser() / ".codex")
        return missing_cli(self.executable, env, ("OPENAI_API_KEY", "CODEX_API_KEY"), (home / "auth.json").exists())

    def launch(
        self,
        request: RequestRow,
        agent: AgentRow,
        references: list[dict[str, Any]],
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
    ) -> Launch:
        return Launch([*self._exec(agent, env, tools), context_block(references) + request.prompt], {})

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
            [*self._exec(agent, env, tools), "resume", request.conversation_ref, prompt or CONTINUE],
            {},
            request.conversation_ref,
        )

    def _exec(self, agent: AgentRow, env: dict[str, str], tools: TurnTools) -> list[str]:
        sandbox = str(agent.options.get("permission_mode") or "workspace-write")
        effort = (
            ["-c", f"model_reasoning_effort={json.dumps(agent.options['effort'])}"]
            if agent.options.get("effort")
            else []
        )
        return [
            executable(self.executable, env),
            "exec",
            "--json",
            "--skip-git-repo-check",
            *QUIET,
            *mcp_overrides(tools),
            "-s",
            sandbox,
            *effort,
            *model_and_args(agent, "-m"),
        ]

    def parser(self) -> "CodexParser":
        return CodexParser()


def mcp_overrides(tools: TurnTools) -> list[str]:
    """Coxswain's MCP server as `-c` config overrides (values are TOML; a JSON string is a TOML string). `required`:
    Codex waits for it before the first model call (else a server still starting is left out of the turn); its tools
    run without an approval prompt (exec has nobody to ask); a question may wait a week for its answer."""
    table = f"mcp_servers.{tools.server}"
    values = {
        "command": json.dumps(tools.command),
        "args": json.dumps(tools.args),
        "required": "true",
        "tool_timeout_sec": str(7 * 24 * 3600),
        "default_tools_approval_mode": '"approve"',
    }
    return [arg for key, value in values.items() for arg in ("-c", f"{table}.{key}={value}")]


class CodexParser:
    def __init__(self) -> None:
        self._last_message = ""

    def feed(self, line: str) -> list[Event]:
        message = json_line(line)
        if message is None:
            return []
        kind = message.get("type")
        if kind == "thread.started":
            return [Event("conversation", str(message.get("thread_id", "")))]
        if kind == "turn.started":
            return [Event("turn_started")]
        if kind in ("item.started", "item.updated", "item.completed"):
            return self._item(kind, message.get("item") or {})
        if kind == "turn.completed":
            usage = message.get("usage") or {}
            return [Event("usage", data=usage), Event("result", self._last_message)]
        if kind == "turn.failed":
            return [Event("result", str((message.get("error") or {}).get("message", "the turn failed")), is_error=True)]
        if kind == "error":
            return [Event("error", str(message.get("message", "")))]
        return []

    def _item(self, kind: str, item: dict[str, Any]) -> list[Event]:
        item_type = item.get("type")
        if item_type in ("command_execution", "mcp_tool_call", "file_change", "web_search"):
            described = str(item.get("command") or item.get("tool") or item_type)
            if kind == "item.started":
                return [Event("tool_started", f"{item_type}: {described}")]
            if kind == "item.completed":
                return [Event("tool_finished", described, is_error=item.get("status") == "failed")]
        if item_type == "agent_message" and kind == "item.completed":
            self._last_message = str(item.get("text", ""))
            return [Event("text", self._last_message)]
        if item_type == "todo_list":
            items = item.get("items") or []
            if items:
                done = sum(1 for entry in items if entry.get("completed"))
                return [Event("progress", value=round(100 * done / len(items), 1))]
        if item_type == "error":
            return [Event("error", str(item.get("message", "")))]
        return []
