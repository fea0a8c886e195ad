"""Anthropic Messages API, as Claude Code calls it: POST /v1/messages, streaming (SSE) or plain JSON."""

import json
import uuid
from collections.abc import Iterator
from typing import Any

from tests.fakes.model.script import Script, final_answer, script_of, starts_turn


def conversation(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(user texts, tool results) in order; system-role entries and reminders are not the user's words."""
    texts: list[str] = []
    results: list[str] = []
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block.get("type") == "text" and not block["text"].lstrip().startswith("<system-reminder>"):
                texts.append(block["text"])
                if starts_turn(block["text"]):  # a new prompt of the same session: its steps from 0
                    results.clear()
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    inner = "".join(part.get("text", "") for part in inner)
                results.append(str(inner or ""))
    return texts, results


def wants_cut(body: dict[str, Any]) -> bool:
    texts, _ = conversation(body)
    return script_of(texts).cut


def calls(script: Script, tools: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The script as Claude Code tool calls, one per step."""
    flat: list[tuple[str, dict[str, Any]]] = []
    for step in script.steps:
        if step.kind == "mcp":
            flat.append(step.mcp_call(tools))
            continue
        if step.kind == "ask":
            options = [{"label": "Yes", "description": "go ahead"}, {"label": "No", "description": "stop here"}]
            asked = [
                {"question": question.strip(), "header": "Question", "options": options, "multiSelect": False}
                for question in step.argument.split("||")
            ]  # ASK a? || b?: two questions in one call
            flat.append(("AskUserQuestion", {"questions": asked}))
            continue
        if step.kind == "tool":
            flat.append(("Bash", {"command": step.argument, "description": f"run {step.argument[:40]}"}))
            continue
        items = Script.todos(step.argument)
        flat += [("TaskCreate", {"subject": item, "description": item, "activeForm": item}) for item, _ in items]
        flat += [
            ("TaskUpdate", {"taskId": str(n), "status": "completed"}) for n, (_, done) in enumerate(items, 1) if done
        ]
    return flat


def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None, list[dict[str, Any]]]:
    """(HTTP status, error body or None, content blocks)."""
    texts, results = conversation(body)
    script = script_of(texts)
    if script.fail:
        kinds = {401: "authentication_error", 429: "rate_limit_error", 402: "billing_error"}
        kind = kinds.get(script.fail, "api_error")
        return script.fail, {"type": "error", "error": {"type": kind, "message": f"fake model: {kind}"}}, []
    tools = {tool.get("name") for tool in body.get("tools", [])}
    pending = calls(script, tools)[len(results) :] if tools else []
    if pending and pending[0][0] in tools:
        name, arguments = pending[0]
        turn = sum(1 for text in texts if starts_turn(text))  # a continued session's ids must not repeat
        suffix = f"_t{turn}" if turn > 1 else ""
        block = {"type": "tool_use", "id": f"toolu_{len(results) + 1:02d}{suffix}", "name": name, "input": arguments}
        return 200, None, [block]
    return 200, None, [{"type": "text", "text": final_answer(texts, script, results)}]


def as_json(blocks: list[dict[str, Any]], model: str) -> dict[str, Any]:
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 12, "output_tokens": 7},
    }


def as_events(blocks: list[dict[str, Any]], model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    message = as_json([], model)
    message["stop_reason"] = None
    yield "message_start", {"type": "message_start", "message": message}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
            )
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": block["text"]}},
            )
        else:
            yield (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}},
            )
            yield (
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])},
                },
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    yield (
        "message_delta",
        {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 7}},
    )
    yield "message_stop", {"type": "message_stop"}
