"""/openapi.json of a real daemon describes every answer: each operation's success has a schema a client can read
(an object with its fields, a list of such, a map of typed values), the event stream its own media type."""

from typing import Any

from tests.daemon_process import DaemonProcess


def resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        found: dict[str, Any] = document
        for part in schema["$ref"].removeprefix("#/").split("/"):
            found = found[part]
        schema = found
    return schema


def untyped(document: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """What a client could not know from `schema`, or None."""
    schema = resolved(document, schema)
    if "anyOf" in schema:
        return next((why for s in schema["anyOf"] if (why := untyped(document, s))), None)
    kind = schema.get("type")
    if kind == "array":
        return untyped(document, schema.get("items", {}))
    if kind == "object" or (kind is None and "properties" in schema):
        if schema.get("properties"):
            return None
        values = schema.get("additionalProperties")
        if not isinstance(values, dict) or not values:
            return "an object with neither fields nor typed values"
        return untyped(document, values)
    if kind in ("string", "integer", "number", "boolean", "null"):
        return None
    return f"no type ({sorted(schema) or 'an empty schema'})"


def test_every_success_of_every_operation_has_a_typed_schema(daemon: DaemonProcess) -> None:
    document = daemon.get("/openapi.json").json()
    problems, checked = [], 0
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            successes = {code: answer for code, answer in operation["responses"].items() if code.startswith("2")}
            if not successes:
                problems.append(f"{method.upper()} {path}: no success answer is described")
            for code, answer in successes.items():
                checked += 1
                where = f"{method.upper()} {path} {code}"
                content = answer.get("content", {})
                if "text/event-stream" in content:
                    if len(answer.get("description", "")) < 40:
                        problems.append(f"{where}: the event stream is not described")
                    continue
                if "application/json" not in content or "schema" not in content["application/json"]:
                    problems.append(f"{where}: no JSON schema")
                elif why := untyped(document, content["application/json"]["schema"]):
                    problems.append(f"{where}: {why}")
    assert checked >= 47
    assert not problems, "\n".join(problems)


def test_the_event_stream_is_documented_as_one(daemon: DaemonProcess) -> None:
    answer = daemon.get("/openapi.json").json()["paths"]["/api/events"]["get"]["responses"]["200"]
    assert list(answer["content"]) == ["text/event-stream"]
    assert "hello" in answer["description"]
