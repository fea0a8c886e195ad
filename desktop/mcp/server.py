"""The daemon's MCP server for agent sessions (`cox mcp`, stdio). Each runtime starts one per turn through its MCP
config; it speaks to the daemon's API with a token good for that one running request and nothing else.

Tools: `ask_question` (any runtime), `permission_prompt` (Claude Code's `--permission-prompt-tool`, which routes
its own AskUserQuestion here)."""

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
from mcp.server.mcpserver import MCPServer

POLL_SECONDS = 50  # one long-poll; the daemon holds it at most 60 s
RETRY_SECONDS = (1, 2, 4, 8)  # while the daemon restarts
WITHDRAWN = ("No answer: the question was withdrawn (the request was cancelled, or the turn was interrupted). "
             "Do not wait for an answer; stop here.")
ENDED = "No answer: this request is no longer running."


class SessionEnded(Exception):
    pass


class DaemonSession:
    """The daemon's API as one running request's agent sees it. The daemon's address is read from its
    `daemon.json` before each call, so a restarted daemon (perhaps on another port) is found again."""

    def __init__(self, daemon_json: Path, token: str) -> None:
        self._daemon_json = daemon_json
        self._client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=POLL_SECONDS + 15)

    async def ask(self, question: str, options: list[str]) -> str:
        asked = await self._call("POST", "/api/session/questions", json={"question": question, "options": options})
        while asked["answered_at"] is None:
            asked = await self._call("GET", f"/api/session/questions/{asked['id']}", params={"wait": POLL_SECONDS})
        return WITHDRAWN if asked["withdrawn"] else str(asked["answer"])

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        attempt = 0
        while True:
            try:
                url = json.loads(self._daemon_json.read_text())["url"]
                response = await self._client.request(method, url + path, **kwargs)
            except (httpx.TransportError, OSError, ValueError, KeyError):  # the daemon restarts; the question stands
                await asyncio.sleep(RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)])
                attempt += 1
                continue
            if response.status_code == 401:
                raise SessionEnded
            response.raise_for_status()
            found: dict[str, Any] = response.json()
            return found


def build(session: DaemonSession) -> MCPServer:
    server = MCPServer("coxswain", instructions="Coxswain hosts this session for its owner's team. Ask the person "
                                                "behind the request with ask_question when you cannot go on alone.")

    @server.tool(structured_output=False)
    async def ask_question(question: str, options: list[str] | None = None) -> str:
        """Ask the person who sent this request a question and wait for their answer. Give a few short `options`
        when the answer is a choice; they may still answer in their own words."""
        try:
            return await session.ask(question, options or [])
        except SessionEnded:
            return ENDED

    @server.tool(structured_output=False)
    async def permission_prompt(tool_name: str, input: dict[str, Any], tool_use_id: str | None = None) -> str:
        """Claude Code asks here before a tool its permission settings do not allow already."""
        if tool_name != "AskUserQuestion":
            return json.dumps({"behavior": "deny", "message": f"{tool_name} is not allowed for this agent; its "
                                                              "permission mode in Coxswain decides"})
        answers: dict[str, str] = {}
        try:
            for item in input.get("questions") or []:
                labels = [str(o.get("label", "")) for o in item.get("options") or [] if isinstance(o, dict)]
                answers[str(item.get("question", ""))] = await session.ask(str(item.get("question", "")), labels)
        except SessionEnded:
            return json.dumps({"behavior": "deny", "message": ENDED})
        return json.dumps({"behavior": "allow", "updatedInput": {**input, "answers": answers}})

    return server


def serve(daemon_json: Path, token_file: Path) -> None:
    build(DaemonSession(daemon_json, token_file.read_text().strip())).run("stdio")
