"""OpenAI Chat Completions, as Copilot CLI calls a BYO provider: POST /v1/chat/completions, streamed."""

import json
from collections.abc import Iterator
from typing import Any

from tests.fakes.model.script import (
    Step,
    final_answer,
    question_arguments,
    question_tool,
    script_of,
    starts_turn,
)


def conversation(body: dict[str, Any]) -> tuple[list[str], list[str]]:
    texts: list[str] = []
    results: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        if message.get("role") == "user":
            texts.append(str(content or ""))
            if starts_turn(texts[-1]):
                results.clear()
        elif message.get("role") == "tool":  # without the CLI's own <shellId: …> notes
            results.append("\n".join(line for line in str(content or "").splitlines() if not line.startswith("<")))
    return texts, results


def call_for(step: Step, tools: set[str]) -> tuple[str, dict[str, object]]:
    if step.kind == "ask":
        return question_tool(tools), question_arguments(step.argument)
    return "bash", {"command": step.argument, "description": "a scripted step"}


def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(HTTP status, an error body or the assistant message)."""
    texts, results = conversation(body)
    script = script_of(texts)
    if script.fail:
        code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(script.fail)
        return script.fail, {
            "error": {"message": f"fake model: HTTP {script.fail}", "type": "invalid_request_error", "code": code}
        }
    tools = {str(t.get("function", {}).get("name")) for t in body.get("tools", [])}
    steps = [s for s in script.steps if s.kind != "todo"]  # Copilot has no todo tool of its own
    if len(results) < len(steps) and "bash" in tools:
        name, arguments = call_for(steps[len(results)], tools)
        call = {
            "id": f"call_{len(results) + 1}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return 200, {"role": "assistant", "content": None, "tool_calls": [call]}
    return 200, {"role": "assistant", "content": final_answer(texts, script, results)}


def as_chunks(message: dict[str, Any], model: str) -> Iterator[dict[str, Any]]:
    base = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": model}
    if message.get("tool_calls"):
        calls = [{"index": i, **call} for i, call in enumerate(message["tool_calls"])]
        yield {
            **base,
            "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": calls}, "finish_reason": None}],
        }
        finish = "tool_calls"
    else:
        yield {
            **base,
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": message["content"]}, "finish_reason": None}
            ],
        }
        finish = "stop"
    yield {
        **base,
        "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
    }
