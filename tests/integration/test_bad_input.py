"""Bad input gets a clear 4xx error, stores nothing, and the daemon keeps serving."""

import pytest

from tests.daemon_process import DaemonProcess

BAD_BODIES = [
    (b"{not json", 422, "not valid JSON"),
    (b'{"agent": "shell"}', 422, "'prompt' is missing"),
    (b'{"agent": "shell", "prompt": "true", "priority": 9}', 422, "unknown field 'priority'"),
    (b'{"agent": ["shell"], "prompt": "true"}', 422, "agent:"),
    (b'{"agent": "shell", "prompt": 42}', 422, "prompt:"),
    (b'["agent", "shell"]', 422, ""),
    (b'{"agent": "shell", "prompt": ""}', 422, "prompt:"),
    (b'{"agent": "nobody", "prompt": "true"}', 404, "there is no agent 'nobody'"),
    (b'{"agent": "shell", "prompt": "see R20260231-01"}', 400, "is not a date"),
    (b'{"agent": "shell", "prompt": "' + b"x" * 100_001 + b'"}', 422, "at most 100000 characters"),
    (b'{"agent": "shell", "prompt": "' + b"x" * 2_000_000 + b'"}', 413, "the limit is 1,048,576"),
]


@pytest.mark.parametrize(("body", "status", "words"), BAD_BODIES)
def test_bad_create_bodies(daemon: DaemonProcess, body: bytes, status: int, words: str) -> None:
    answer = daemon.http.post("/api/requests", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"]
    assert daemon.get("/api/requests").json() == []
    assert daemon.get("/api/health").status_code == 200


def test_bad_ids_settings_and_agents(daemon: DaemonProcess) -> None:
    cases = [
        (daemon.get("/api/requests/R-99"), 404, "there is no request R"),
        (daemon.get("/api/requests/DROP TABLE"), 400, "is not a request ID"),
        (daemon.post("/api/requests/R-99/approve"), 404, "there is no request"),
        (daemon.get("/api/requests", params={"state": "sleeping"}), 400, "is not a state"),
        (daemon.post("/api/settings", {"key": "approval_ttl", "value": "tomorrow"}), 400, "is not a duration"),
        (daemon.post("/api/settings", {"key": "approval_ttl", "value": "0s"}), 400, "out of range"),
        (daemon.post("/api/settings", {"key": "theme", "value": "dark"}), 404, "there is no setting 'theme'"),
        (daemon.post("/api/agents", {"name": "x", "runtime": "shell", "folder": "relative/path"}), 400, "absolute"),
        (daemon.post("/api/agents", {"name": "x", "runtime": "shell", "folder": "/no/such"}), 400, "does not exist"),
        (daemon.post("/api/agents", {"name": "x", "runtime": "cobol", "folder": "/tmp"}), 400, "is not a runtime"),
        (daemon.post("/api/agents", {"name": "../x", "runtime": "shell", "folder": "/tmp"}), 400, "not a valid"),
        (daemon.post("/api/agents", {"name": "shell", "runtime": "shell", "folder": "/tmp"}), 409, "already"),
        (
            daemon.post("/api/agents", {"name": "x", "runtime": "shell", "folder": "/tmp\0/x"}),
            422,
            "the folder holds a NUL byte",
        ),
        (
            daemon.post("/api/agents", {"name": "x", "runtime": "shell", "folder": "/tmp", "env": {"A": "b\0c"}}),
            422,
            "the variable holds a NUL byte",
        ),
        (
            daemon.post("/api/agents", {"name": "x", "runtime": "shell", "folder": "/tmp", "env": {"A\0": "b"}}),
            422,
            "the variable name holds a NUL byte",
        ),
        (
            daemon.post("/api/agents", {"name": "x", "runtime": "shell", "folder": "/tmp", "args": ["-v\0"]}),
            422,
            "the argument holds a NUL byte",
        ),
        (daemon.post("/api/people", {"name": "a b"}), 400, "not a valid person name"),
        (daemon.post("/api/people", {"name": "bob", "kind": "robot"}), 422, "kind"),
        (daemon.post("/api/people/nobody/revoke"), 404, "no person or machine"),
    ]
    for answer, status, words in cases:
        assert answer.status_code == status, answer.text
        assert words in answer.json()["error"], answer.text
    assert daemon.get("/api/settings").json()["approval_ttl"] == "24h"
    assert [a["name"] for a in daemon.get("/api/agents").json()] == ["shell"]
    assert daemon.get("/api/people").json() == []


def test_illegal_transitions_are_conflicts_naming_request_state_and_action(daemon: DaemonProcess) -> None:
    row = daemon.request("true")
    daemon.wait_state(row["id"], "done")
    answer = daemon.post(f"/api/requests/{row['id']}/approve")
    assert answer.status_code == 409
    assert answer.json()["error"] == f"{row['id']} is done; it cannot be approved"
    assert (
        daemon.post(f"/api/requests/{row['id']}/cancel").json()["error"]
        == f"{row['id']} is done; it cannot be cancelled"
    )


LONG = "9" * 5000  # more digits than int() takes from text (4,300): an unguarded int() raises, a 500


def test_numbers_too_long_or_not_ascii_are_refused_not_500(daemon: DaemonProcess) -> None:
    row = daemon.request("true")
    cases = [
        (daemon.get(f"/api/requests/R-{LONG}"), 400, "is not a request ID"),
        (daemon.get(f"/api/requests/R20260101-{LONG}"), 400, "is not a request ID"),
        (daemon.get("/api/requests/R-٠٣"), 400, "is not a request ID"),  # Arabic-Indic digits: int() takes them
        (daemon.get(f"/api/requests/{row['id']}/output", params={"offset": str(10**30)}), 422, "offset"),
        (daemon.get(f"/api/requests/{row['id']}/console", params={"before": str(10**30)}), 422, "before"),
        (daemon.get("/api/requests", params={"limit": LONG}), 422, "limit"),
        (daemon.post("/api/settings", {"key": "room_port", "value": "²"}), 400, "is not a port number"),
        (daemon.post("/api/settings", {"key": "room_port", "value": "٨٠٨٠"}), 400, "is not a port number"),
        (daemon.post("/api/settings", {"key": "room_port", "value": "9" * 250}), 400, "is not a port number"),
        (daemon.post("/api/settings", {"key": "approval_ttl", "value": "9" * 250 + "s"}), 400, "is not a duration"),
    ]
    for answer, status, words in cases:
        assert answer.status_code == status, answer.text
        assert words in answer.text, answer.text
    # a prompt mentioning such a thing mentions no request: it is taken, with no references
    made = daemon.request(f"echo after R-{LONG} and R20260101-{LONG}")
    assert made["references"] == []
    assert daemon.get("/api/settings").json()["room_port"] == "7432"
    assert daemon.get("/api/health").status_code == 200
    assert "Traceback" not in (daemon.home / "logs" / "daemon.log").read_text()


WILDCARDS = [
    "0",
    "0.0.0.0",
    "::",
    "[::]",
    "0:0::0",
    "::0.0.0.0",
    "::ffff:0:0",
    "::ffff:0.0.0.0",
    " :: ",
    "::%lo",
    "0000:0000:0000:0000:0000:0000:0000:0000",
    "224.0.0.1",
    "255.255.255.255",
    "127.1",
    "0x7f000001",
    "192.0.2.7",
    "2001:db8::1",
]


@pytest.mark.parametrize("address", WILDCARDS)
def test_room_address_refuses_wildcards_and_addresses_not_of_this_computer(daemon: DaemonProcess, address: str) -> None:
    answer = daemon.post("/api/settings", {"key": "room_address", "value": address})
    assert answer.status_code == 400, answer.text
    assert daemon.get("/api/settings").json()["room_address"] == "loopback"
    assert daemon.get("/api/room").json()["url"] is None


def test_sgr_codes_too_long_for_int_are_no_colour() -> None:
    from desktop.console import sgr

    assert sgr.styled(f"\x1b[{LONG}mred\x1b[1;31mbold") == [
        {"text": "red"},
        {"text": "bold", "fg": "#cd3131", "bold": True},
    ]
