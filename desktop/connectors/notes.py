"""What a request's chat thread is told when the request changes: pure, the same words for every chat. What a
requester, an agent or a program wrote is made visible (desktop.core.visible); each chat escapes its own markup.
A background continuation is told in the thread of the request it continues: it opens with what ended, and what it
says after names it, as others share that thread."""

from dataclasses import dataclass

from desktop.console.redact import redact
from desktop.core.states import Action, State
from desktop.core.visible import one_line, visible
from desktop.store.rows import RequestRow, TimelineRow

RESULT_CHARS = 1500
PROMPT_CHARS = 3000  # a longer prompt is not shown whole in a thread, so it gets no Approve there
ANSWERS = {Action.APPROVE, Action.DENY, Action.EXPIRE, Action.CANCEL, Action.REVOKE}
SAID = ANSWERS | {Action.DISPATCH, Action.FAIL, Action.STOP, Action.INTERRUPT, Action.RESUME, Action.ANSWER}


@dataclass(frozen=True)
class Note:
    kind: str  # open | answered | say
    text: str
    buttons: bool = False  # (open) Approve and Deny, for the owner


def title(request: RequestRow) -> str:
    return visible(f"{request.id} · {request.agent} · ") + one_line(request.prompt, 60)


def notes(
    request: RequestRow,
    action: Action,
    said: TimelineRow | None,
    question: str | None = None,
    progress_step: bool = False,
) -> list[Note]:
    """The thread messages for one change; `said` is the timeline entry the change wrote."""
    found = _notes(request, action, said, question, progress_step)
    if request.continuation_of is None or action == Action.CREATE:
        return found
    return [Note(n.kind, n.text if n.kind == "answered" else f"{request.id}: {n.text}", n.buttons) for n in found]


def _notes(
    request: RequestRow, action: Action, said: TimelineRow | None, question: str | None, progress_step: bool
) -> list[Note]:
    if action == Action.CREATE:
        lines = (
            _continued(request, said)
            if request.continuation_of
            else [title(request), f"Asked by {visible(request.requester)}."]
        )
        if request.retry_of:
            lines.append(f"Retry of {request.retry_of}.")
        if request.state != State.PENDING:
            return [Note("open", "\n".join(lines))]
        # Approve and Deny only under the whole prompt as it will run: a title's first line could hide the rest
        prompt = visible(request.prompt)
        if len(prompt) > PROMPT_CHARS:
            lines.append(
                f"Waiting for the owner's approval. The prompt is {len(prompt):,} characters, too long to "
                f"show whole here: review it in the room, the tray or `cox show {request.id}`."
            )
            return [Note("open", "\n".join(lines))]
        lines += ["Prompt:", prompt, "Waiting for the owner's approval."]
        return [Note("open", "\n".join(lines), buttons=True)]
    found: list[Note] = []
    if action in ANSWERS and said is not None:  # the approval message loses its buttons
        found.append(Note("answered", f"{request.id}: {visible(said.text)}"))
    if action == Action.ASK and question:
        found.append(
            Note(
                "say",
                f"Question from {visible(request.agent)}: {visible(redact(question))}\n"
                f"Answer with `cox answer {request.id} …` or in the room.",
            )
        )
    elif action == Action.PROGRESS and progress_step and request.progress is not None:
        found.append(Note("say", f"{round(request.progress)}% done."))
    elif action == Action.SUCCEED:
        found.append(Note("say", "Done." + _result(request)))
    elif action in SAID and said is not None:
        text = visible(said.text)
        found.append(Note("say", text[:1].upper() + text[1:] + (_result(request) if action == Action.FAIL else "")))
    return found


def _continued(request: RequestRow, said: TimelineRow | None) -> list[str]:
    """'Background continuation of R-07: T1 (unit tests) failed (exit 1) after 4 s', then who reviews it."""
    ended = "; ".join(ended_lines(request.prompt))
    if not ended:
        ended = said.text.partition(": ")[2] if said is not None else "background work ended"
    return [
        visible(f"Background continuation of {request.continuation_of}: {ended}."),
        visible(f"{request.id} · {request.agent} reviews it for {request.requester}."),
    ]


def ended_lines(prompt: str) -> list[str]:
    """What a continuation's prompt (desktop.tasks.continuations) says ended: each task's line above its command,
    not what a console printed between fences."""
    found, fenced, previous = [], False, ""
    for line in prompt.split("\n"):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("Command: ") and previous:
            found.append(previous.removesuffix("."))
        previous = "" if fenced else line
    return found


def _result(request: RequestRow) -> str:
    text = visible(redact((request.result or "").strip()))
    if not text:
        return ""
    if len(text) > RESULT_CHARS:
        text = text[:RESULT_CHARS] + "…"
    return f"\n{text}\nThe whole console: `cox logs {request.id}` or the room."
