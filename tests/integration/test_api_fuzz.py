"""Every operation of the API, called with what its OpenAPI document allows and with what it does not (schemathesis
makes both), by the owner, against a real daemon: never a 5xx, the daemon answers afterwards, its log holds no
traceback, and a refused call stores nothing (no row of the database changes).
Deterministic (Hypothesis derandomized, no example database) and bounded: EXAMPLES calls per run of each kind."""

import contextlib
import hashlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.daemon_process import DaemonProcess

EXAMPLES = 2000  # about a minute on two busy cores
LONG = "9" * 5000  # more digits than int() takes from text
# what generated text rarely holds: values that broke the daemon once, names that exist, numbers past every limit
SPICE = [
    "²",
    "٣٠",
    LONG,
    f"R-{LONG}",
    f"R20260101-{LONG}",
    f"see R-{LONG} and R-01",
    "::ffff:0.0.0.0",
    "0",
    "-1",
    str(10**30),
    "\x00",
    "\u202e",
    "R-01",
    "R-1",
    "T1",
    "S1",
    "shell",
    "loopback",
    "127.0.0.1",
    "1e400",
    "NaN",
    "",
]
NUMBERS = [10**30, -(10**30), 2**63, -1, 0, LONG]
SETTINGS = [
    "approval_ttl",
    "room_port",
    "room_address",
    "room_certificate",
    "task_timeout",
    "quiet_after",
    "session_wait_max",
    "notify_failed",
]  # agents_paused is not among them: the agents stay paused
NOT_FUZZED = [
    "/api/events",  # an event stream: it answers, then never ends
    "/api/agents/resume",  # the agents stay paused: no prompt the fuzzer writes runs as the shell agent's command
]


@pytest.fixture
def fuzzed(tmp_path: Path) -> Iterator[DaemonProcess]:
    # no keyring of this machine's is touched, whatever names the fuzzer gives secrets
    daemon = DaemonProcess(tmp_path / "home").start(
        env={
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
        }
    )
    try:
        assert daemon.post("/api/agents/pause").status_code == 200
        yield daemon
    finally:
        daemon.stop()
        daemon.kill_runners()


def stored(daemon: DaemonProcess) -> str:
    """A digest of every row of every table of the daemon's database."""
    digest = hashlib.sha256()
    with contextlib.closing(sqlite3.connect(f"file:{daemon.home / 'coxswain.db'}?mode=ro", uri=True)) as db:
        tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in tables:
            digest.update(f"{table}: {sorted(map(repr, db.execute(f'SELECT * FROM {table}')))}".encode())
    return digest.hexdigest()


def test_no_input_gets_a_server_error_or_changes_anything_when_refused(fuzzed: DaemonProcess) -> None:
    document = fuzzed.get("/openapi.json").json()
    schema = schemathesis.openapi.from_dict(document)
    for path in NOT_FUZZED:
        schema = schema.exclude(path=path)
    cases = st.one_of(schema.as_strategy(GenerationMode.POSITIVE), schema.as_strategy(GenerationMode.NEGATIVE))
    owner = {"Authorization": f"Bearer {fuzzed.token}"}
    seen: dict[int, int] = {}

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        print_blob=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases, data=st.data())
    def call(case: Any, data: st.DataObject) -> None:
        spice(case, data)
        before = stored(fuzzed)
        answer = case.call(base_url=fuzzed.url, headers=owner, timeout=30)
        seen[answer.status_code] = seen.get(answer.status_code, 0) + 1
        what = f"{case.method} {case.formatted_path[:100]} {str(case.query)[:100]} {str(case.body)[:200]}"
        assert answer.status_code < 500, f"{what}: {answer.status_code} {answer.text}"
        if answer.status_code >= 400:
            assert stored(fuzzed) == before, f"{what} was refused ({answer.status_code}) and stored something"

    call()
    assert fuzzed.get("/api/health").status_code == 200
    print(sorted(seen.items()))
    assert seen.get(200, 0) + seen.get(201, 0) > 0 and sum(n for code, n in seen.items() if code >= 400) > 0, seen
    fuzzed.stop()
    log = (fuzzed.home / "logs" / "daemon.log").read_text(errors="replace") + fuzzed.output()
    assert "Traceback" not in log and "internal error" not in log


def spice(case: Any, data: st.DataObject) -> None:
    """Now and then, put a known name or a value of SPICE where the generated one was."""

    def maybe(value: Any, choices: list[Any]) -> Any:
        return data.draw(st.one_of(st.just(value), st.sampled_from(choices)))

    for name, value in (case.path_parameters or {}).items():
        case.path_parameters[name] = maybe(value, SPICE)
    for name, value in (case.query or {}).items():
        case.query[name] = maybe(value, NUMBERS + SPICE)
    if isinstance(case.body, dict):
        for name, value in case.body.items():
            if name == "key":
                case.body[name] = maybe(value, SETTINGS)
            elif name == "agent" and case.path == "/api/tasks":
                continue  # never a real agent: no generated command runs
            elif isinstance(value, str):
                case.body[name] = maybe(value, SPICE)
