"""Gemini API, as Gemini CLI calls it: POST /v1beta/models/M:generateContent (JSON) and :streamGenerateContent (SSE)."""

from typing import Any

from tests.fakes.model.script import (
    Script,
    final_answer,
    question_arguments,
    question_tool,
    script_of,
    starts_turn,
)


def conversation(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    texts: list[str] = []
    results: list[str] = []
    seen: set[str] = set()
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            if content.get("role") == "user" and "text" in part and not part["text"].lstrip().startswith("<"):
                texts.append(part["text"])
                if starts_turn(part["text"]):
                    results.clear()
            elif "functionResponse" in part and part["functionResponse"].get("id") not in seen:
                seen.add(part["functionResponse"].get("id"))  # a resumed CLI repeats an interrupted response
                response = part["functionResponse"].get("response", {})
                results.append(shell_output(str(response.get("output", response))))
    return texts, results


def shell_output(text: str) -> str:
    """What the command printed, out of the CLI's report (Command:, Output:, Exit Code:, … in <untrusted_context>)."""
    lines = [line for line in text.splitlines() if not line.startswith("<")]
    if not any(line.startswith("Output:") for line in lines):
        return "\n".join(lines)
    kept, inside = [], False
    for line in lines:
        if line.startswith("Output:"):
            inside, line = True, line.removeprefix("Output:").strip()
        elif inside and line.split(":")[0] in ("Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID"):
            break
        if inside:
            kept.append(line)
    return "\n".join(kept)


def calls(script: Script, tools: set[str]) -> list[tuple[str, dict[str, Any]]]:
    flat: list[tuple[str, dict[str, Any]]] = []
    for step in script.steps:
        if step.kind == "tool":
            flat.append(("run_shell_command", {"command": step.argument, "description": "a scripted step"}))
        elif step.kind == "ask":
            flat.append((question_tool(tools), question_arguments(step.argument)))
        elif "write_todos" in tools:
            todos = [
                {"description": item, "status": "completed" if done else "pending"}
                for item, done in Script.todos(step.argument)
            ]
            flat.append(("write_todos", {"todos": todos}))
    return flat


def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(HTTP status, the response body: a GenerateContentResponse or an error)."""
    texts, results = conversation(body)
    script = script_of(texts)
    if script.fail:
        statuses = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 429: "RESOURCE_EXHAUSTED"}
        status = statuses.get(script.fail, "INTERNAL")
        message = "API key not valid. Please pass a valid API key." if script.fail in (400, 401) else "fake model"
        return script.fail, {"error": {"code": script.fail, "message": message, "status": status}}
    tools = {f.get("name", "") for t in body.get("tools", []) for f in t.get("functionDeclarations", [])}
    pending = calls(script, tools)[len(results) :] if tools else []
    if pending:
        name, arguments = pending[0]
        part: dict[str, Any] = {"functionCall": {"name": name, "args": arguments}}
    elif not tools and "json" in str(body.get("generationConfig", {}).get("responseMimeType", "")):
        part = {"text": '{"reasoning": "scripted", "model_choice": "pro"}'}  # the CLI's model router asks this
    else:
        part = {"text": final_answer(texts, script, results)}
    return 200, {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 7, "totalTokenCount": 19},
    }
