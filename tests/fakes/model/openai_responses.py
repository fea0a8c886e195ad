"""OpenAI Responses API, as Codex calls it: POST /v1/responses, streamed as server-sent events."""

import json
from collections.abc import Iterator
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
    for item in body.get("input", []):
        if item.get("type") == "message" and item.get("role") == "user":
            for part in item.get("content", []):
                text = part.get("text", "")
                if part.get("type") == "input_text" and not text.lstrip().startswith("<"):
                    texts.append(text)
                    if starts_turn(text):
                        results.clear()
        elif item.get("type") == "function_call_output":
            output = item.get("output")
            results.append(output if isinstance(output, str) else json.dumps(output))
    return texts, results


def tool_names(body: dict[str, Any]) -> dict[str, str]:
    """Every offered function's name -> its namespace ("" outside one); MCP tools come in a namespace."""
    names: dict[str, str] = {}
    for tool in body.get("tools", []):
        if tool.get("type") == "namespace":
            names.update({inner.get("name", ""): tool["name"] for inner in tool.get("tools", [])})
        elif tool.get("name"):
            names[tool["name"]] = ""
    return names


def calls(script: Script, tools: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    flat: list[tuple[str, dict[str, Any]]] = []
    for step in script.steps:
        if step.kind == "tool":
            flat.append(("exec_command", {"cmd": step.argument}))
        elif step.kind == "ask":
            flat.append((question_tool(set(tools)), question_arguments(step.argument)))
        elif step.kind == "mcp":
            flat.append(step.mcp_call(set(tools)))
        elif "update_plan" in tools:
            items = Script.todos(step.argument)
            plan = [{"step": item, "status": "completed" if done else "pending"} for item, done in items]
            flat.append(("update_plan", {"plan": plan}))
    return flat


def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None, list[dict[str, Any]]]:
    texts, results = conversation(body)
    script = script_of(texts)
    if script.fail:
        code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(script.fail)
        error = {"message": f"fake model: HTTP {script.fail}", "type": "invalid_request_error", "code": code}
        return script.fail, {"error": error}, []
    tools = tool_names(body)
    pending = calls(script, tools)[len(results) :]
    n = len(results) + 1
    if pending and pending[0][0] in tools:
        name, arguments = pending[0]
        call = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        return 200, None, [{**call, "namespace": tools[name]} if tools[name] else call]
    text = final_answer(texts, script, results)
    return (
        200,
        None,
        [
            {
                "type": "message",
                "id": f"msg_{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        ],
    )


def as_events(items: list[dict[str, Any]], model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    response = {"id": "resp_fake", "object": "response", "model": model, "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": response}
    for index, item in enumerate(items):
        yield (
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": index, "item": {**item, "status": "in_progress"}},
        )
        if item["type"] == "message":
            text = item["content"][0]["text"]
            yield (
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": text,
                },
            )
        yield "response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}
    usage = {
        "input_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 7,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 19,
    }
    yield (
        "response.completed",
        {
            "type": "response.completed",
            "response": {**response, "status": "completed", "output": items, "usage": usage},
        },
    )
