"""The daemon's MCP server for agent sessions (`cox mcp`, stdio). Each runtime starts one per turn through its MCP
config; it speaks to the daemon's API with a token good for that one running request and nothing else.

Tools: `ask_question` (any runtime), `permission_prompt` (Claude Code's `--permission-prompt-tool`, which routes
its own AskUserQuestion here), and the background task tools `start_task`, `list_tasks`, `read_task_output`,
`stop_task` (the agent's own tasks only)."""

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
        asked: dict[str, Any] = await self.call("POST", "/api/session/questions",
                                                json={"question": question, "options": options})
        if "error" in asked:  # an empty question, too many options, …
            return f"The question was not asked: {asked['error']}"
        while asked["answered_at"] is None:
            asked = await self._call("GET", f"/api/session/questions/{asked['id']}", params={"wait": POLL_SECONDS})
        return WITHDRAWN if asked["withdrawn"] else str(asked["answer"])

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One call to the daemon; its error text (a refusal, a bad argument) comes back as the tool's answer."""
        try:
            return await self._call(method, path, **kwargs)
        except httpx.HTTPStatusError as error:
            try:
                return {"error": error.response.json().get("error", error.response.text)}
            except ValueError:
                return {"error": error.response.text}

    async def _call(self, method: str, path: str, **kwargs: Any) -> Any:
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
            return response.json()


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

    @server.tool(structured_output=False)
    async def start_task(command: str, description: str = "", monitor: bool = False) -> str:
        """Start a shell command in the background, in this agent's folder, and return at once with its task id.
        For dev servers, long builds, test runs, and (monitor=true) commands whose output is the point, such as
        `tail -f`. Read it with read_task_output; it stops at the owner's background task timeout."""
        body = {"command": command, "description": description, "kind": "monitor" if monitor else "command"}
        return _shown(await session.call("POST", "/api/session/tasks", json=body), TASK_FIELDS)

    @server.tool(structured_output=False)
    async def list_tasks() -> str:
        """This agent's state (running_turn, background_only, idle) and its background tasks: running ones, and
        those that ended in the last hour."""
        agent = await session.call("GET", "/api/session/agent")
        tasks = _shown(await session.call("GET", "/api/session/tasks"), TASK_FIELDS)
        return f"agent {agent.get('name')}: {agent.get('state')}\n{tasks}"

    @server.tool(structured_output=False)
    async def read_task_output(task_id: str, lines: int = 100) -> str:
        """The last `lines` lines of a task's output, as its console shows them (secrets redacted, progress bars
        collapsed, repeated lines counted), with its state and test counts."""
        task = await session.call("GET", f"/api/session/tasks/{task_id}")
        if "error" in task:
            return str(task["error"])
        page = await session.call("GET", f"/api/session/tasks/{task_id}/output",
                                  params={"lines": max(1, min(lines, 2000)), "plain": "true"})
        if "error" in page:
            return str(page["error"])
        head = f"{task['id']} · {task['status']}" + (f" · tests {task['tests']}" if task["tests"] else "")
        body = [*page["lines"], *([page["pending"]] if page["pending"] else [])]
        return "\n".join([head, *body, *([f"({page['note']})"] if page["note"] else [])])

    @server.tool(structured_output=False)
    async def stop_task(task_id: str) -> str:
        """Stop a background task: SIGTERM to its processes, SIGKILL if they are still there after a grace period."""
        return _shown(await session.call("POST", f"/api/session/tasks/{task_id}/stop", json={}), TASK_FIELDS)

    return server


TASK_FIELDS = ("id", "kind", "status", "description", "command", "started_at", "exit_code", "tests")


def _shown(answer: Any, fields: tuple[str, ...]) -> str:
    """A task (or a list of them) as compact JSON with the fields an agent needs; an error as its text."""
    if isinstance(answer, dict) and "error" in answer:
        return str(answer["error"])
    if isinstance(answer, list):
        return json.dumps([{key: item.get(key) for key in fields} for item in answer])
    return json.dumps({key: answer.get(key) for key in fields})


def serve(daemon_json: Path, token_file: Path) -> None:
    build(DaemonSession(daemon_json, token_file.read_text().strip())).run("stdio")
