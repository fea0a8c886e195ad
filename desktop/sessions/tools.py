"""The session tools of the daemon's MCP server: an agent starts and drives other sessions (desktop.sessions.rules
holds the rules). Every answer is JSON; a refusal is `{"error": <code>, "message": <words>}` flagged as an error,
also for arguments of the wrong type (`CoxswainServer.call_tool`)."""

import json
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from desktop.mcp.endpoint import CALLER
from desktop.sessions.rules import Caller, SessionError, Sessions

TOOLS = (
    "list_sessions",
    "read_session",
    "start_session",
    "send_prompt",
    "wait",
    "answer_question",
    "stop_turn",
    "archive_session",
    "watch_session",
    "unwatch_session",
)


class CoxswainServer(MCPServer):
    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Arguments a session tool cannot take are `invalid_input` in its own words, like every other refusal."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            if name not in TOOLS or not isinstance(error.__cause__, ValidationError):
                raise
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in error.__cause__.errors()
            )
            return refused(SessionError("invalid_input", f"{name} cannot take these arguments: {problems}"))


def refused(error: SessionError) -> CallToolResult:
    body = json.dumps({"error": error.code, "message": str(error)})
    return CallToolResult(content=[TextContent(type="text", text=body)], is_error=True)


def register(server: MCPServer, sessions: Sessions) -> None:
    async def run(
        tool: str,
        change: bool,
        work: Callable[[Caller], Awaitable[dict[str, Any]]],
        about: str = "",
        ctx: Context | None = None,
    ) -> CallToolResult:
        actor = CALLER.get()
        key = f"{actor.turn_key}:{ctx.request_id}" if ctx is not None and actor.turn_key else None
        try:
            answer = await sessions.call(actor, tool, change, work, about, key)
        except SessionError as error:
            return refused(error)
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(answer, ensure_ascii=False))])

    async def done(value: dict[str, Any]) -> dict[str, Any]:
        return value

    @server.tool()
    async def list_sessions() -> CallToolResult:
        """The sessions started for the person behind this request (not archived): id, title, state, runtime,
        folder, model, group, who started it, may_create_sessions, and an open question if one waits."""
        return await run("list_sessions", False, lambda caller: done(sessions.listing(caller)))

    @server.tool()
    async def read_session(session: str) -> CallToolResult:
        """One session in detail: its settings, its prompts with their results, and its latest turn's timeline."""
        return await run("read_session", False, lambda caller: done(sessions.read(caller, session)), f" {session}")

    @server.tool()
    async def start_session(
        prompt: str,
        ctx: Context,
        title: str | None = None,
        runtime: str | None = None,
        folder: str | None = None,
        model: str | None = None,
        permission_mode: str | None = None,
        effort: str | None = None,
        group: str | None = None,
    ) -> CallToolResult:
        """Start another agent session on this machine with `prompt` (it knows nothing of this conversation, only
        the prompt). Anything not given follows this session (runtime, folder; model, permission mode and effort
        when the runtime is the same). `group` must be one the owner made. The first start of a conversation
        waits for the owner's approval. Returns the session id (S1, …) at once; then call wait."""
        arguments = {
            "prompt": prompt,
            "title": title,
            "runtime": runtime,
            "folder": folder,
            "model": model,
            "permission_mode": permission_mode,
            "effort": effort,
            "group": group,
        }
        return await run("start_session", True, lambda caller: sessions.start(caller, arguments), ctx=ctx)

    @server.tool()
    async def send_prompt(
        session: str,
        prompt: str,
        ctx: Context,
        model: str | None = None,
        permission_mode: str | None = None,
        effort: str | None = None,
    ) -> CallToolResult:
        """Send the next prompt to a session; it continues the same conversation (queued behind a turn still
        running). `model`, `permission_mode`, `effort` change the session's settings from this prompt on."""
        changes = {"model": model, "permission_mode": permission_mode, "effort": effort}
        return await run(
            "send_prompt", True, lambda caller: sessions.send(caller, session, prompt, changes), f" {session}", ctx
        )

    @server.tool()
    async def wait(session: str, seconds: float | None = None) -> CallToolResult:
        """Wait until the session's latest prompt ends or asks a question, or `seconds` pass (at most the owner's
        longest wait, 10 minutes unless changed), and return what is there; call again to go on waiting."""
        return await run("wait", False, lambda caller: sessions.wait(caller, session, seconds), f" {session}")

    @server.tool()
    async def watch_session(session: str, events: list[str] | None = None) -> CallToolResult:
        """Be woken, in a new turn of this conversation, when the session does one of `events`: task_failed and
        turn_finished unless named (also task_started, task_finished, question, all_idle). Instead of polling with
        wait: end the turn; the news comes. It lasts until unwatch_session, also across restarts."""
        return await run("watch_session", True, lambda caller: sessions.watch(caller, session, events), f" {session}")

    @server.tool()
    async def unwatch_session(session: str) -> CallToolResult:
        """Stop being woken by the session."""
        return await run("unwatch_session", True, lambda caller: sessions.unwatch(caller, session), f" {session}")

    @server.tool()
    async def answer_question(session: str, answer: str) -> CallToolResult:
        """Answer the question a session waits on. Only as the owner said: a session's question is theirs."""
        return await run(
            "answer_question", True, lambda caller: sessions.answer(caller, session, answer), f" {session}"
        )

    @server.tool()
    async def stop_turn(session: str) -> CallToolResult:
        """Stop what the session is doing (at its next safe point) and drop its queued prompts."""
        return await run("stop_turn", True, lambda caller: sessions.stop(caller, session), f" {session}")

    @server.tool()
    async def archive_session(session: str) -> CallToolResult:
        """Put a session away: what it does is stopped and it takes no more prompts."""
        return await run("archive_session", True, lambda caller: sessions.archive(caller, session), f" {session}")
