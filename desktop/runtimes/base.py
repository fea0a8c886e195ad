"""The one small interface every agent runtime adapter implements, and the events adapters report."""

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from desktop.store.rows import AgentRow, RequestRow

CancelMode = Literal["now", "hook", "after_tool"]


@dataclass(frozen=True)
class Launch:
    """What to run: the command line, the environment it adds, and the conversation reference if known up
    front (the runtime's own conversation: Claude Code, Gemini and Copilot call it a session, Codex a thread)."""

    argv: list[str]
    env: dict[str, str]
    conversation_ref: str | None = None


@dataclass(frozen=True)
class TurnTools:
    """How the runtime starts Coxswain's MCP relay (desktop.reentry.relay_command) for this turn; its tools are named
    `ask_question` and `permission_prompt` on the server `coxswain`."""

    command: str
    args: list[str]
    server: str = "coxswain"

    def stdio_config(self, **extra: Any) -> dict[str, Any]:
        """The `mcpServers` entry most CLIs read."""
        return {"mcpServers": {self.server: {"command": self.command, "args": self.args, **extra}}}


@dataclass(frozen=True)
class Event:
    """One thing a runtime reported. kind: conversation | turn_started | tool_started | tool_finished | text |
    progress | question | result | error | usage."""

    kind: str
    text: str = ""
    value: float | None = None
    is_error: bool = False
    data: dict[str, Any] = field(default_factory=dict)


class Parser(Protocol):
    def feed(self, line: str) -> list[Event]: ...


class Runtime(Protocol):
    name: str
    cancel_mode: CancelMode
    permission_modes: tuple[str, ...]
    efforts: tuple[str, ...]  # how hard the model thinks, where the CLI lets one choose
    resumable: bool  # an interrupted turn continues its conversation; otherwise the exit code is the outcome

    def missing(self, env: dict[str, str]) -> str | None:
        """What stops this runtime from working here ("not installed", "no API key"), or None."""
        ...

    def launch(
        self,
        request: RequestRow,
        agent: AgentRow,
        references: list[dict[str, Any]],
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
    ) -> Launch: ...

    def resume(
        self,
        request: RequestRow,
        agent: AgentRow,
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
        prompt: str | None = None,
    ) -> Launch | None:
        """The command that continues `request.conversation_ref` with `prompt` (default: carry on where the turn broke
        off), or None if this runtime cannot resume."""
        ...

    def parser(self) -> Parser: ...


def executable(name: str, env: dict[str, str]) -> str:
    """The CLI's full path on the agent's PATH (or its bare name, which then fails to start with a clear error)."""
    return shutil.which(name, path=env.get("PATH")) or name


def missing_cli(
    name: str, env: dict[str, str], keys: tuple[str, ...], signed_in: bool = False, no_key: str = "no API key"
) -> str | None:
    """ "not installed", `no_key` when none of the credential variables is set (and no sign-in), else None."""
    if shutil.which(name, path=env.get("PATH")) is None:
        return "not installed"
    if not signed_in and not any(env.get(key) for key in keys):
        return no_key
    return None


def model_and_args(agent: AgentRow, model_flag: str) -> list[str]:
    """The agent's model option and extra arguments, as command-line arguments."""
    extra = [model_flag, str(agent.options["model"])] if agent.options.get("model") else []
    args = agent.options.get("args") or []
    return extra + [str(a) for a in args] if isinstance(args, list) else extra


def context_block(references: list[dict[str, Any]]) -> str:
    """Referenced requests as a block at the start of an agent's prompt."""
    if not references:
        return ""
    lines = ["Context: this request mentions earlier requests. Their prompt, state and result:"]
    for ref in references:
        lines.append(f"--- {ref['id']} ({ref['state']})\nPrompt: {ref['prompt']}\nResult: {ref['result'] or '(none)'}")
    return "\n".join(lines) + "\n--- end of context\n\n"


def json_line(line: str) -> dict[str, Any] | None:
    """A JSON object from one output line, or None for anything else (CLIs print the odd warning)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def readable_error(text: str) -> str:
    """An error as words: a CLI that quotes the provider's JSON error body (`[API Error: {"error": {"message": …`)
    gives its message (and code); anything else stays as it is."""
    start = text.find("{")
    if start < 0:
        return text
    try:
        body, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return text
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, str):
        message, code = error, None
    elif isinstance(error, dict) and isinstance(error.get("message"), str):
        message, code = error["message"], error.get("code") or error.get("status")
    else:
        return text
    before = text[:start].strip().strip("[:").strip()
    words = f"{before}: {message}" if before else message
    return f"{words} ({code})" if code is not None and str(code) not in message else words
