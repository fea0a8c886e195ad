"""The daemon's MCP server for the agents of running turns, at `POST /mcp` (stateless streamable HTTP, the `mcp`
SDK). Agent CLIs reach it through the stdio relay they start (`desktop/mcp/relay.py`), with a token good for their one
running request; the tools run here, in the daemon, on the ledger and the background tasks directly.

Tools: `ask_question` (any runtime), `permission_prompt` (Claude Code's `--permission-prompt-tool`, which routes its
own AskUserQuestion here), `start_task`, `list_tasks`, `read_task_output`, `stop_task` (the agent's own tasks, and
the tasks of sessions it can see), and the session tools of desktop/sessions/tools.py."""

import json
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from desktop.console.redact import redact
from desktop.core.actors import Actor
from desktop.core.errors import CoxError, Forbidden
from desktop.core.events import EventBus
from desktop.core.ledger import Ledger
from desktop.core.visible import has_nul
from desktop.mcp.endpoint import CALLER
from desktop.sessions import tools as session_tools
from desktop.sessions.rules import Sessions
from desktop.tasks.background import BackgroundTasks, TaskView, task_status
from desktop.tasks.paging import console_page

WITHDRAWN = (
    "No answer: the question was withdrawn (the request was cancelled, or the turn was interrupted). "
    "Do not wait for an answer; stop here."
)


def session_manager(
    ledger: Ledger, tasks: BackgroundTasks, events: EventBus, sessions: Sessions
) -> StreamableHTTPSessionManager:
    """The SDK's handler of stateless streamable HTTP calls to our tools."""
    server = build(ledger, tasks, events, sessions)
    # Host and Origin are checked by the daemon's own middleware, before this
    server.streamable_http_app(
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    return server.session_manager


def build(ledger: Ledger, tasks: BackgroundTasks, events: EventBus, sessions: Sessions) -> MCPServer:
    server = session_tools.CoxswainServer(
        "coxswain",
        log_level="WARNING",
        instructions="Coxswain hosts this session for its owner's team. Ask the person behind the "
        "request with ask_question when you cannot go on alone.",
    )

    async def ask(question: str, options: list[str], ctx: Context, part: int = 0) -> str:
        """Ask and wait. The same call made again (the relay repeats it after a daemon restart) finds its question
        by the turn's token, the call's id and the question's place in the call."""
        agent = _agent()
        key = f"{agent.turn_key}:{ctx.request_id}:{part}" if agent.turn_key else None
        try:
            asked = ledger.ask(agent.request_id or "", agent, redact(question), [redact(o) for o in options], key)
        except CoxError as error:
            return f"The question was not asked: {error}"
        question_id = asked.id

        def answered() -> str | None:
            question = ledger.question(question_id)
            return None if question.answered_at is None else question.answer or WITHDRAWN

        return await events.until(answered) or WITHDRAWN

    @server.tool(structured_output=False)
    async def ask_question(question: str, ctx: Context, options: list[str] | None = None) -> str:
        """Ask the person who sent this request a question and wait for their answer. Give a few short `options`
        when the answer is a choice; they may still answer in their own words."""
        return await ask(question, options or [], ctx)

    @server.tool(structured_output=False)
    async def permission_prompt(
        tool_name: str, input: dict[str, Any], ctx: Context, tool_use_id: str | None = None
    ) -> str:
        """Claude Code asks here before a tool its permission settings do not allow already."""
        if tool_name != "AskUserQuestion":
            return json.dumps(
                {
                    "behavior": "deny",
                    "message": f"{tool_name} is not allowed for this agent; its permission mode in Coxswain decides",
                }
            )
        answers: dict[str, str] = {}
        for part, item in enumerate(input.get("questions") or []):
            labels = [str(o.get("label", "")) for o in item.get("options") or [] if isinstance(o, dict)]
            answers[str(item.get("question", ""))] = await ask(str(item.get("question", "")), labels, ctx, part)
        return json.dumps({"behavior": "allow", "updatedInput": {**input, "answers": answers}})

    @server.tool(structured_output=False)
    async def start_task(command: str, description: str = "", monitor: bool = False) -> str:
        """Start a shell command in the background, in this agent's folder, and return at once with its task id.
        For dev servers, long builds, test runs, and (monitor=true) commands whose output is the point, such as
        `tail -f`. Read it with read_task_output; it stops at the owner's background task timeout."""
        agent = _agent()
        if has_nul(command):
            return "the command holds a NUL byte, which cannot be passed to a program"
        return _answer(
            lambda: _task(
                tasks.view(tasks.start(agent, agent.name, command, description, "monitor" if monitor else "command"))
            )
        )

    @server.tool(structured_output=False)
    async def list_tasks() -> str:
        """This agent's state (running_turn, background_only, idle) and its background tasks: running ones, and
        those that ended in the last hour."""
        agent = _agent()
        listed = json.dumps([_task(view) for view in tasks.listing(agent)])
        return f"agent {agent.name}: {tasks.agent_states().get(agent.name, 'idle')}\n{listed}"

    @server.tool(structured_output=False)
    async def read_task_output(task_id: str, lines: int = 100) -> str:
        """The last `lines` lines of a task's output, as its console shows them (secrets redacted, progress bars
        collapsed, repeated lines counted), with its state and test counts."""

        def read() -> str:
            agent = _agent()
            try:
                row = tasks.visible(task_id, agent)
            except Forbidden:
                row = tasks.get(task_id)
                if not sessions.readable(agent, row.agent or ""):
                    raise
            view = tasks.view(row)
            page = console_page(Path(view.row.dir) / "output", lines, plain=True, note=view.note)
            head = f"{view.row.id} · {task_status(view)}" + (f" · tests {view.tests}" if view.tests else "")
            return "\n".join(
                [
                    head,
                    *page.lines,
                    *([page.pending] if page.pending else []),
                    *([f"({page.note})"] if page.note else []),
                ]
            )

        return _answer(read)

    @server.tool(structured_output=False)
    async def stop_task(task_id: str) -> str:
        """Stop a background task: SIGTERM to its processes, SIGKILL if they are still there after a grace period."""
        try:
            return json.dumps(_task(tasks.view(await tasks.stop(task_id, _agent()))))
        except CoxError as error:
            return str(error)

    session_tools.register(server, sessions)
    return server


def _agent() -> Actor:
    return CALLER.get()


def _answer(work: Any) -> str:
    """What `work()` returns, or the daemon's refusal in words (a task of another agent, an empty command, …)."""
    try:
        answer = work()
    except CoxError as error:
        return str(error)
    return answer if isinstance(answer, str) else json.dumps(answer)


def _task(view: TaskView) -> dict[str, Any]:
    row = view.row
    return {
        "id": row.id,
        "kind": row.kind,
        "status": task_status(view),
        "description": row.description,
        "command": row.command,
        "exit_code": row.exit_code,
        "tests": view.tests,
    }
