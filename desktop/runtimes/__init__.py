"""Agent runtimes: one adapter per CLI behind the interface in `base`."""

from desktop.runtimes.base import Runtime
from desktop.runtimes.claude import ClaudeRuntime
from desktop.runtimes.codex import CodexRuntime
from desktop.runtimes.copilot import CopilotRuntime
from desktop.runtimes.gemini import GeminiRuntime
from desktop.runtimes.shell import ShellRuntime

RUNTIME_NAMES = {
    "claude": "Claude Code",
    "codex": "Codex",
    "gemini": "Gemini CLI",
    "copilot": "Copilot CLI",
    "shell": "Shell",
}  # as people know them; the API and the CLI say the runtime's own name


def builtin_runtimes() -> dict[str, Runtime]:
    runtimes: list[Runtime] = [ShellRuntime(), ClaudeRuntime(), CodexRuntime(), GeminiRuntime(), CopilotRuntime()]
    return {runtime.name: runtime for runtime in runtimes}
