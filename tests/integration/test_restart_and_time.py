"""Runners outlive the daemon; approvals expire while the daemon is down or frozen; the audit chain holds."""

import json
import os
import signal
import sqlite3
import time
from pathlib import Path

from desktop.store.db import Store
from desktop.store.schema import MIGRATIONS
from tests.daemon_process import DaemonProcess


def test_runner_outlives_a_killed_daemon_and_is_reattached(make_daemon: type[DaemonProcess], tmp_path: Path) -> None:
    out = tmp_path / "lines"
    daemon = make_daemon(tmp_path / "home").start()
    row = daemon.request(f"sleep 3; echo once >> {out}")  # still running when the new daemon re-attaches
    daemon.wait_state(row["id"], "running")
    daemon.stop(signal.SIGKILL)
    time.sleep(0.2)
    daemon.start()
    done = daemon.wait_state(row["id"], "done", timeout=15)
    assert out.read_text() == "once\n"
    kinds = [t["kind"] for t in done["timeline"]]
    assert kinds == ["state", "state", "interrupted", "resumed", "state"]
    assert "the daemon was not running since" in done["timeline"][2]["text"]


def test_command_that_ended_while_the_daemon_was_down_is_finished_normally(
    make_daemon: type[DaemonProcess], tmp_path: Path
) -> None:
    daemon = make_daemon(tmp_path / "home").start()
    row = daemon.request("sleep 0.5; echo bye; exit 4")
    daemon.wait_state(row["id"], "running")
    daemon.stop()
    time.sleep(1.0)
    daemon.start()
    failed = daemon.wait_state(row["id"], "failed")
    assert failed["exit_code"] == 4 and failed["result"] == "bye"


def test_runner_gone_means_outcome_unknown_never_a_second_run(make_daemon: type[DaemonProcess], tmp_path: Path) -> None:
    out = tmp_path / "lines"
    daemon = make_daemon(tmp_path / "home").start()
    row = daemon.request(f"echo run >> {out}; sleep 30")
    daemon.wait_state(row["id"], "running")
    while not out.exists():
        time.sleep(0.02)
    daemon.stop(signal.SIGKILL)
    daemon.kill_runners()  # the runner and its command die too (a crash of the whole machine, say)
    time.sleep(0.2)
    daemon.start()
    failed = daemon.wait_state(row["id"], "failed")
    assert "interrupted; outcome unknown" in failed["timeline"][-1]["text"]
    time.sleep(0.5)
    assert out.read_text() == "run\n"


def test_approval_expires_while_the_daemon_is_down_before_it_could_run(
    make_daemon: type[DaemonProcess], tmp_path: Path
) -> None:
    marker = tmp_path / "ran"
    daemon = make_daemon(tmp_path / "home").start()
    daemon.post("/api/settings", {"key": "approval_ttl", "value": "1s"})
    token = daemon.add_person("sarah")
    row = daemon.request(f"touch {marker}", token=token)
    daemon.stop()
    time.sleep(1.2)
    daemon.start()
    expired = daemon.show(row["id"])
    assert expired["state"] == "expired" and "approval TTL 1s" in expired["result"]
    assert daemon.post(f"/api/requests/{row['id']}/approve").status_code == 409
    actions = [a["action"] for a in daemon.get("/api/audit", params={"request_id": row["id"]}).json()]
    assert actions == ["create", "expire"]
    retried = daemon.post(f"/api/requests/{row['id']}/retry", token=token).json()
    assert retried["retry_of"] == row["id"] and retried["state"] == "pending"
    assert not marker.exists()


def test_scheduler_expires_while_running_and_after_a_freeze(daemon: DaemonProcess) -> None:
    daemon.post("/api/settings", {"key": "approval_ttl", "value": "1s"})
    token = daemon.add_person("sarah")
    live = daemon.request("true", token=token)
    assert daemon.wait_state(live["id"], "expired", timeout=5)["state"] == "expired"
    frozen = daemon.request("true", token=token)
    assert daemon.proc is not None
    os.kill(daemon.proc.pid, signal.SIGSTOP)
    time.sleep(1.3)
    os.kill(daemon.proc.pid, signal.SIGCONT)
    assert daemon.post(f"/api/requests/{frozen['id']}/approve").status_code == 409
    assert daemon.show(frozen["id"])["state"] == "expired"


def test_audit_verify_finds_a_row_edited_in_sqlite(daemon: DaemonProcess) -> None:
    for _ in range(3):
        daemon.wait_state(daemon.request("true")["id"], "done")
    ok = daemon.cox("audit", "verify")
    assert ok.returncode == 0 and "intact" in ok.stdout
    with sqlite3.connect(daemon.home / "coxswain.db") as db:
        try:
            db.execute("UPDATE audit SET reason = 'nothing happened' WHERE seq = 4")
            raise AssertionError("the audit table must refuse updates")
        except sqlite3.IntegrityError as refused:
            assert "append-only" in str(refused)
        db.execute("DROP TRIGGER audit_is_append_only_update")
        db.execute("UPDATE audit SET reason = 'nothing happened' WHERE seq = 4")
    bad = daemon.cox("audit", "verify")
    assert bad.returncode == 1
    assert "broken at record 4" in bad.stderr and "changed after it was written" in bad.stderr


def test_store_is_wal_versioned_and_backs_up_before_migrating(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db", tmp_path / "backups")
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.version == len(MIGRATIONS)
    with store.transaction() as conn:
        conn.execute("INSERT INTO settings (key, value) VALUES ('approval_ttl', '2h')")
    store.close()
    upgraded = Store(
        tmp_path / "c.db", tmp_path / "backups", [*MIGRATIONS, "ALTER TABLE agents ADD COLUMN colour TEXT;"]
    )
    assert upgraded.version == len(MIGRATIONS) + 1
    [backup] = (tmp_path / "backups").iterdir()
    assert backup.name.startswith(f"coxswain-v{len(MIGRATIONS)}-")
    with sqlite3.connect(backup) as old:
        assert old.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert old.execute("SELECT value FROM settings").fetchone()[0] == "2h"
    upgraded.close()


def test_requests_denied_before_the_denied_column_read_denied(tmp_path: Path) -> None:
    """Version 7 marks the requests an older Coxswain's owner denied, by the audit trail; a cancel stays a cancel."""
    older = Store(tmp_path / "c.db", tmp_path / "backups", MIGRATIONS[:6])
    with older.transaction() as conn:
        conn.execute("INSERT INTO principals (name, kind, token_hash, created_at) VALUES ('sam', 'person', 'x', 0)")
        conn.execute("INSERT INTO agents (name, runtime, folder, created_at) VALUES ('shell', 'shell', '/', 0)")
        for request_id, action in (("R20261201-01", "deny"), ("R20261201-02", "cancel")):
            conn.execute(
                "INSERT INTO requests (id, owner, agent, requester, prompt, state, created_at, updated_at) "
                "VALUES (?, 'owner', 'shell', 'sam', 'true', 'cancelled', 0, 0)",
                (request_id,),
            )
            conn.execute(
                "INSERT INTO audit (at, actor, action, request_id, reason, prev_hash, hash) "
                "VALUES (0, 'owner', ?, ?, '', '', '')",
                (action, request_id),
            )
    older.close()
    store = Store(tmp_path / "c.db", tmp_path / "backups")
    marks = dict(store.conn.execute("SELECT id, denied FROM requests").fetchall())
    assert marks == {"R20261201-01": 1, "R20261201-02": 0}
    store.close()


def test_a_newer_database_is_refused_with_a_sentence(tmp_path: Path) -> None:
    Store(tmp_path / "c.db", tmp_path / "b", [*MIGRATIONS, "CREATE TABLE later (x);"]).close()
    try:
        Store(tmp_path / "c.db", tmp_path / "b")
        raise AssertionError("must refuse")
    except RuntimeError as refused:
        assert "newer than this Coxswain knows" in str(refused)


def test_second_daemon_on_the_same_home_is_refused(daemon: DaemonProcess) -> None:
    second = daemon.cox("daemon", "--port", "0")
    assert second.returncode == 1 and "already running" in second.stderr
    assert json.loads((daemon.home / "daemon.json").read_text())["url"] == daemon.url
