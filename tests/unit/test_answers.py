"""The API's answers as `cox` and the tray read them, also from a daemon older than the `cox` reading it."""

from desktop.client.shapes import Request

OLD_ANSWER = {  # GET /api/requests/{id} from a daemon before schema 10, which named the conversation session_ref
    "id": "R20261201-03",
    "state": "done",
    "agent": "claude",
    "requester": "owner",
    "prompt": "fix the build",
    "retry_of": None,
    "references": [],
    "session_ref": "5f0c6e0e-0f5b-4a5e-9a59-3f7f2f3b9d11",
    "progress": None,
    "result": "fixed",
    "exit_code": 0,
    "cancel_requested": False,
    "created_at": "2026-12-01T10:00:00Z",
    "expires_at": None,
    "approved_at": None,
    "started_at": "2026-12-01T10:00:01Z",
    "ended_at": "2026-12-01T10:02:00Z",
}


def test_a_request_from_a_daemon_before_the_rename_keeps_its_conversation() -> None:
    request = Request.model_validate(OLD_ANSWER)
    assert request.conversation_ref == OLD_ANSWER["session_ref"]
    assert request.model_dump()["conversation_ref"] == OLD_ANSWER["session_ref"]


def test_a_request_now_reads_as_it_is_sent() -> None:
    now = {k: v for k, v in OLD_ANSWER.items() if k != "session_ref"} | {"conversation_ref": "thread-1"}
    assert Request.model_validate(now).conversation_ref == "thread-1"
