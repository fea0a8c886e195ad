"""What the fake model does, read from the prompt: one instruction per line.

    DELAY <seconds>     wait this long before each answer (a real model takes a while)
    CUT                 break every streamed answer half-way (plain JSON answers stay whole)
    TOOL <command>      call the runtime's shell tool with <command> (one step per TOOL line, in order)
    ASK <question>      ask the person a question: Claude's AskUserQuestion, else Coxswain's MCP tool `ask_question`
    MCP <tool> <json>   call a tool of Coxswain's MCP server (`start_task`, `read_task_output`, …) with these arguments
    TODO <a>=done; <b>  write a todo list (items `=done` are completed) through the runtime's todo tool
    SAY <text>          the final answer (default: "finished after N steps")
    AGAIN MCP <tool> <json>  in each background continuation of this conversation, call this tool first
    FAIL <status>       answer every call with that HTTP error (401: authentication, 429: rate limit)

The step is how many tool results the conversation holds since the last prompt with a script, so the server keeps
no state, a resumed CLI that re-sends its history carries on where it stopped, and the next prompt of a continued
session starts its own script from its first step.
"""

import json
import re
from dataclasses import dataclass

KEYWORD = re.compile(r"^(TOOL|TODO|ASK|MCP|SAY|FAIL|DELAY|CUT|AGAIN)\b[ :]*(.*)$", re.M)


@dataclass(frozen=True)
class Step:
    kind: str  # tool | todo | ask | mcp
    argument: str

    def mcp_call(self, names: set[str]) -> tuple[str, dict[str, object]]:
        """(the name under which the CLI offers the tool, its arguments) of an MCP step."""
        tool, _, arguments = self.argument.partition(" ")
        name = next((n for n in sorted(names) if n == tool or n.endswith(f"__{tool}") or n.endswith(f"-{tool}")), tool)
        return name, json.loads(arguments or "{}")


@dataclass(frozen=True)
class Script:
    steps: list[Step]
    say: str | None
    fail: int | None
    delay: float = 0.0
    cut: bool = False
    again: tuple[Step, ...] = ()  # what each background continuation of the conversation does first

    @classmethod
    def parse(cls, prompt: str) -> "Script":
        steps, say, fail, delay, cut, again = [], None, None, 0.0, False, []
        for keyword, rest in KEYWORD.findall(prompt):
            if keyword == "AGAIN":
                again.append(Step("mcp", rest.strip().removeprefix("MCP").strip()))
                continue
            if keyword == "TOOL":
                steps.append(Step("tool", rest.strip()))
            elif keyword == "TODO":
                steps.append(Step("todo", rest.strip()))
            elif keyword == "ASK":
                steps.append(Step("ask", rest.strip()))
            elif keyword == "MCP":
                steps.append(Step("mcp", rest.strip()))
            elif keyword == "SAY":
                say = rest.strip()
            elif keyword == "DELAY":
                delay = float(rest.strip() or 0)
            elif keyword == "CUT":
                cut = True
            else:
                fail = int(rest.strip() or 500)
        return cls(steps, say, fail, delay, cut, tuple(again))

    def final_text(self, last_result: str) -> str:
        if self.say:
            return self.say
        tail = last_result.strip().splitlines()[-1] if last_result.strip() else ""
        return "finished" + (f"; last output: {tail}" if tail else "")

    @staticmethod
    def todos(argument: str) -> list[tuple[str, bool]]:
        items = [part.strip() for part in argument.split(";") if part.strip()]
        return [(item.removesuffix("=done").strip(), item.endswith("=done")) for item in items]


def find_prompt(texts: list[str]) -> str:
    """The last user text that holds a script (a session's next prompt brings a new one); else the last user text."""
    for text in reversed(texts):
        if KEYWORD.search(text):
            return text
    return texts[-1] if texts else ""


def woken(text: str) -> bool:
    """A background continuation's prompt (what ended, what watched sessions did): it has no script of its own."""
    told = ("you started ha" in text and " ended" in text) or "sessions you watch" in text
    return told and not KEYWORD.search(text)


def starts_turn(text: str) -> bool:
    """A user text that begins a new turn of steps: a prompt with a script, or a background continuation."""
    return bool(KEYWORD.search(text)) or woken(text)


def script_of(texts: list[str]) -> Script:
    """What to do now: the prompt's script, or in a background continuation its AGAIN steps."""
    script = Script.parse(find_prompt(texts))
    if texts and woken(texts[-1]):
        return Script(list(script.again), None, None, script.delay)
    return script


def final_answer(texts: list[str], script: Script, results: list[str]) -> str:
    """The turn's last answer. A background continuation (a later prompt, without a script, saying what ended) is
    answered as a model reviewing it would: 'Reviewed: T1 (test run) failed (exit 1) after 2 s.'"""
    newest = texts[-1] if texts else ""
    if woken(newest):
        ended = next((line for line in newest.splitlines() if re.match(r"T\d+\b|- S\d+", line)), "")
        return f"Reviewed: {ended.removeprefix('- ')}"
    return script.final_text(results[-1] if results else "")


def question_tool(names: set[str]) -> str:
    """The name under which a CLI offers Coxswain's MCP `ask_question` tool (each CLI prefixes it its own way)."""
    return next((name for name in sorted(names) if name.endswith("ask_question")), "ask_question")


def question_arguments(question: str) -> dict[str, object]:
    return {"question": question, "options": ["Yes", "No"]}
