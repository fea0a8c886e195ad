"""IDs, the transition table and the approval deadline, on a real SQLite file with a clock the test moves."""

from datetime import date
from pathlib import Path

import pytest

from desktop.core import ids
from desktop.core.durations import parse_duration
from desktop.core.errors import Conflict, Forbidden, Invalid, NotFound
from desktop.core.states import TRANSITIONS, Action, IllegalTransition, State, next_state
from desktop.store import audit as audit_sql
from desktop.store import requests as requests_sql
from tests.ledger_fixture import OWNER, SARAH, MovableClock, make_ledger

TODAY = date(2026, 9, 6)


def test_id_forms() -> None:
    assert ids.format_id(TODAY, 7) == "R20260906-07"
    assert ids.format_id(TODAY, 123) == "R20260906-123"
    assert ids.normalize("R-07", TODAY) == "R20260906-07"
    assert ids.normalize("r-7", TODAY) == "R20260906-07"
    assert ids.normalize("R20250101-03", TODAY) == "R20250101-03"
    assert ids.short_form("R20260906-07", TODAY) == "R-07"
    assert ids.short_form("R20260905-07", TODAY) == "R20260905-07"
    for bad in ("R-", "R-00", "X-01", "R20261340-01", "R-07; drop table", ""):
        with pytest.raises(Invalid):
            ids.normalize(bad, TODAY)


def test_mentions_in_free_text() -> None:
    text = "as in R-03 (and R20260901-12), not ERR-04 or R-5x; again R-03"
    assert ids.mentions(text, TODAY) == ["R20260906-03", "R20260901-12"]


@pytest.mark.parametrize(
    ("text", "seconds"), [("90s", 90), ("30m", 1800), ("24h", 86400), ("1h30m", 5400), ("2d", 172800)]
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "soon", "10", "-5m", "5 minutes", "1h30"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(Invalid, match="is not a duration"):
        parse_duration(text)


def test_every_pair_outside_the_table_is_refused_with_a_sentence() -> None:
    allowed = 0
    for state in State:
        for action in Action:
            if (state, action) in TRANSITIONS:
                allowed += 1
                continue
            with pytest.raises(IllegalTransition) as refused:
                next_state("R20260906-07", state, action)
            assert str(refused.value).startswith(f"R20260906-07 is {state.value}; it cannot be")
    assert allowed == len(TRANSITIONS)
    assert all(next_state("R", s, a) in State for (s, a) in TRANSITIONS)
    for terminal in (State.DONE, State.FAILED, State.CANCELLED, State.EXPIRED):
        assert not [a for (s, a) in TRANSITIONS if s == terminal]


def test_counting_restarts_each_utc_day(tmp_path: Path) -> None:
    clock = MovableClock()
    clock.advance(86400 - 2)  # 23:59:58 on 2026-09-06
    _, ledger = make_ledger(tmp_path, clock)
    assert ledger.create(OWNER, "api", "true").id == "R20260906-01"
    assert ledger.create(OWNER, "api", "true").id == "R20260906-02"
    clock.advance(3)
    assert ledger.create(OWNER, "api", "true").id == "R20260907-01"
    assert ledger.get("R-01").id == "R20260907-01"


def test_owner_requests_skip_pending_and_deny_names_who(tmp_path: Path) -> None:
    _, ledger = make_ledger(tmp_path, MovableClock())
    assert ledger.create(OWNER, "api", "true").state == State.APPROVED
    theirs = ledger.create(SARAH, "api", "true")
    assert theirs.state == State.PENDING and theirs.expires_at == theirs.created_at + 86400
    with pytest.raises(Forbidden):
        ledger.deny(theirs.id, SARAH)
    denied = ledger.deny(theirs.id, OWNER)
    assert denied.state == State.CANCELLED and denied.result == "denied by owner" and denied.denied
    assert not ledger.cancel(ledger.create(SARAH, "api", "true").id, SARAH).denied
    with pytest.raises(IllegalTransition, match="is cancelled; it cannot be approved"):
        ledger.approve(theirs.id, OWNER)


def test_a_late_approval_expires_instead_and_audit_shows_it(tmp_path: Path) -> None:
    clock = MovableClock()
    store, ledger = make_ledger(tmp_path, clock)
    waiting = ledger.create(SARAH, "api", "true")
    clock.advance(86400)  # exactly at the deadline: nothing was there to expire it (daemon down, laptop asleep)
    with pytest.raises(Conflict, match="expired before it was answered"):
        ledger.approve(waiting.id, OWNER)
    row = ledger.get(waiting.id)
    assert row.state == State.EXPIRED and row.queue_seq is None
    assert [r.action for r in audit_sql.records(store.conn, waiting.id)] == ["create", "expire"]
    again = ledger.retry(waiting.id, SARAH)
    assert again.retry_of == waiting.id and again.state == State.PENDING


def test_expire_overdue_takes_only_the_overdue(tmp_path: Path) -> None:
    clock = MovableClock()
    _, ledger = make_ledger(tmp_path, clock)
    first = ledger.create(SARAH, "api", "true")
    clock.advance(3600)
    second = ledger.create(SARAH, "api", "true")
    clock.advance(86400 - 1800)
    assert ledger.expire_overdue() == [first.id]
    assert ledger.get(second.id).state == State.PENDING


def test_references_must_exist_and_be_visible(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    owners = ledger.create(OWNER, "api", "true")
    with pytest.raises(NotFound, match="no request R20260906-09"):
        ledger.create(OWNER, "api", "follow up on R-09")
    with pytest.raises(Forbidden):
        ledger.create(SARAH, "api", f"look at {owners.id}")
    assert len(requests_sql.listing(store.conn)) == 1
    follow = ledger.create(OWNER, "api", "follow up on R-01")
    assert follow.refs == [owners.id]


def test_prompt_limits(tmp_path: Path) -> None:
    _, ledger = make_ledger(tmp_path, MovableClock())
    with pytest.raises(Invalid, match="the limit is 100,000"):
        ledger.create(OWNER, "api", "x" * 100_001)
    with pytest.raises(Invalid, match="empty"):
        ledger.create(OWNER, "api", "   ")
    with pytest.raises(NotFound, match="no agent"):
        ledger.create(OWNER, "web", "true")


def test_cancel_rules(tmp_path: Path) -> None:
    _, ledger = make_ledger(tmp_path, MovableClock())
    queued = ledger.create(OWNER, "api", "true")
    running = ledger.dispatch(queued.id)
    flagged = ledger.cancel(running.id, OWNER)
    assert flagged.state == State.RUNNING and flagged.cancel_requested and flagged.ended_at is None
    assert ledger.finish(running.id, 0, "").state == State.CANCELLED
    theirs = ledger.create(SARAH, "api", "true")
    mine = ledger.create(OWNER, "api", "true")
    with pytest.raises(Forbidden, match="only see and cancel your own"):
        ledger.cancel(mine.id, SARAH)
    assert ledger.cancel(theirs.id, SARAH).result == "cancelled by sarah"
