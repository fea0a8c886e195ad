"""Claude Code (`claude -p … --output-format stream-json --verbose`).

The conversation's id (Claude's session id) is chosen before launch (`--session-id`), so it is on the request from
the first moment. Cancel stops at a safe point through a PreToolUse hook: before each tool call it looks for the task's
cancel flag and, when it is there, denies the call and ends the turn. Progress comes from the Task tools (TaskCreate /
TaskUpdate). Questions: Claude's own AskUserQuestion reaches Coxswain's MCP server through `--permission-prompt-tool`,
which answers it with the person's answer."""

import json
import shlex
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
from desktop.store.rows import AgentRow, RequestRow

CONTINUE = (
    "The session was interrupted (the process stopped before the turn ended). Continue the task where you "
    "left off; do not repeat steps that already completed."
)
DENY = {
    "continue": False,
    "stopReason": "cancelled by the owner in Coxswain",
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "the request was cancelled",
    },
}
FATAL = {
    "authentication_failed": "Failed to authenticate: the API key was refused",
    "billing_error": "The model provider refused the request for billing reasons",
}
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1",
    "ENABLE_TOOL_SEARCH": "false",
    "MCP_TOOL_TIMEOUT": str(7 * 24 * 3600 * 1000),
}  # a question waits for its answer as long as it takes


class ClaudeRuntime:
    name = "claude"
    cancel_mode: CancelMode = "hook"
    permission_modes: tuple[str, ...] = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
    efforts: tuple[str, ...] = ("low", "medium", "high", "xhigh", "max")
    resumable = True
    executable = "claude"
    key_variable = "ANTHROPIC_API_KEY"

    def missing(self, env: dict[str, str]) -> str | None:
        return missing_cli(self.executable, env, (self.key_variable,))

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
        argv = self._argv(agent, task_dir, env, tools, ["--session-id", conversation, "-p", prompt])
        return Launch(argv, dict(QUIET), conversation)

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
        argv = self._argv(agent, task_dir, env, tools, ["--resume", request.conversation_ref, "-p", prompt or CONTINUE])
        return Launch(argv, dict(QUIET), request.conversation_ref)

    def _argv(
        self, agent: AgentRow, task_dir: Path, env: dict[str, str], tools: TurnTools, turn: list[str]
    ) -> list[str]:
        flag = task_dir.parent / (task_dir.name.rsplit(".", 1)[0] + ".cancel")
        (task_dir / "deny.json").write_text(json.dumps(DENY))
        hook = f"[ -e {shlex.quote(str(flag))} ] && cat {shlex.quote(str(task_dir / 'deny.json'))} || true"
        settings = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": hook}]}]}}
        argv = [
            executable(self.executable, env),
            *turn,
            "--output-format",
            "stream-json",
            "--verbose",
            "--settings",
            json.dumps(settings),
            "--mcp-config",
            json.dumps(tools.stdio_config()),
            "--permission-prompt-tool",
            f"mcp__{tools.server}__permission_prompt",
            "--allowedTools",
            f"Bash,Read,Edit,Write,TaskCreate,TaskUpdate,mcp__{tools.server}",
        ]
        if agent.options.get("permission_mode"):
            argv += ["--permission-mode", str(agent.options["permission_mode"])]
        if agent.options.get("effort"):
            argv += ["--effort", str(agent.options["effort"])]
        return argv + model_and_args(agent, "--model")

    def parser(self) -> "ClaudeParser":
        return ClaudeParser()


class ClaudeParser:
    def __init__(self) -> None:
        self._tasks: dict[str, bool] = {}  # task id -> completed
        self._tools: dict[str, str] = {}  # tool_use id -> name

    def feed(self, line: str) -> list[Event]:
        message = json_line(line)
        if message is None:
            return []
        kind = message.get("type")
        if kind == "system" and message.get("subtype") == "init":
            return [Event("conversation", message.get("session_id", "")), Event("turn_started")]
        if kind == "system" and message.get("subtype") == "api_retry":
            error, status = message.get("error"), message.get("error_status")
            if error in FATAL:
                return [
                    Event(
                        "error",
                        f"{FATAL[error]} (the model API answered {status})",
                        is_error=True,
                        data={"fatal": True},
                    )
                ]
            return [Event("error", f"the model API failed ({error}, {status}); retry {message.get('attempt')}")]
        if kind == "assistant":
            return self._assistant(message)
        if kind == "user":
            return self._tool_results(message)
        if kind == "result":
            text = str(message.get("result") or "; ".join(str(e) for e in message.get("errors") or []))
            events = [
                Event(
                    "result",
                    text,
                    is_error=bool(message.get("is_error")),
                    data={"terminal_reason": message.get("terminal_reason")},
                )
            ]
            if message.get("total_cost_usd") is not None:
                events.append(Event("usage", value=float(message["total_cost_usd"]), data=message.get("usage") or {}))
            return events
        return []

    def _assistant(self, message: dict[str, Any]) -> list[Event]:
        events = []
        for block in message.get("message", {}).get("content", []):
            if block.get("type") == "text" and block.get("text"):
                events.append(Event("text", block["text"]))
            elif block.get("type") == "tool_use":
                self._tools[block.get("id", "")] = block.get("name", "")
                described = block.get("input", {}).get("description") or block.get("input", {}).get("subject") or ""
                events.append(Event("tool_started", f"{block.get('name')}: {described}".rstrip(": ")))
        return events

    def _tool_results(self, message: dict[str, Any]) -> list[Event]:
        events = []
        result = message.get("tool_use_result")
        if isinstance(result, dict):
            if isinstance(result.get("task"), dict):
                self._tasks[str(result["task"].get("id"))] = False
            if result.get("taskId") is not None and isinstance(result.get("statusChange"), dict):
                self._tasks[str(result["taskId"])] = result["statusChange"].get("to") == "completed"
        for block in message.get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                name = self._tools.get(block.get("tool_use_id", ""), "tool")
                events.append(Event("tool_finished", name, is_error=bool(block.get("is_error"))))
        if self._tasks and events:
            events.append(Event("progress", value=round(100 * sum(self._tasks.values()) / len(self._tasks), 1)))
        return events
