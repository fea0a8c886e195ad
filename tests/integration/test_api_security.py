"""The local API refuses what a web page, a stranger or a teammate must not do."""

import sqlite3
import stat
from pathlib import Path

import httpx

from tests.daemon_process import DaemonProcess


def test_binds_loopback_and_keeps_the_owner_credential_private(daemon: DaemonProcess) -> None:
    assert daemon.url.startswith("http://127.0.0.1:")
    mode = (daemon.home / "owner.token").stat().st_mode
    assert stat.S_IMODE(mode) == 0o600


def test_every_endpoint_needs_a_valid_token(daemon: DaemonProcess) -> None:
    bare = httpx.Client(base_url=daemon.url)
    for path in ("/api/requests", "/openapi.json", "/api/events", "/api/health", "/api/audit/verify"):
        assert bare.get(path).status_code == 401
        wrong = bare.get(path, headers={"Authorization": "Bearer " + "x" * 43})
        assert wrong.status_code == 401 and "valid token" in wrong.json()["error"]
    from_url = bare.get("/api/requests", params={"token": daemon.token})
    assert from_url.status_code == 400 and "never taken from the address" in from_url.json()["error"]
    assert daemon.get("/openapi.json").json()["info"]["title"] == "Coxswain"


def test_host_and_origin_checks(daemon: DaemonProcess) -> None:
    port = daemon.url.rsplit(":", 1)[1]
    assert daemon.get("/api/health", headers={"Host": "evil.example:" + port}).status_code == 421
    assert daemon.get("/api/health", headers={"Host": "localhost:" + port}).status_code == 200
    for origin in ("http://evil.example", "null", f"http://127.0.0.1.evil.example:{port}"):
        refused = daemon.post("/api/requests", {"agent": "shell", "prompt": "true"}, headers={"Origin": origin})
        assert refused.status_code == 403
    same = daemon.get("/api/health", headers={"Origin": f"http://127.0.0.1:{port}"})
    assert same.status_code == 200
    assert not [h for h in same.headers if h.lower().startswith("access-control-")]
    preflight = daemon.http.options(
        "/api/requests", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert preflight.status_code == 403 and "access-control-allow-origin" not in preflight.headers
    assert daemon.get("/api/requests").status_code == 200 and daemon.get("/api/requests").json() == []


def test_changes_only_by_post_with_json(daemon: DaemonProcess) -> None:
    row = daemon.post("/api/requests", {"agent": "shell", "prompt": "sleep 30"}).json()
    form = daemon.http.post(f"/api/requests/{row['id']}/cancel", data={"a": "b"})
    assert form.status_code == 415
    text = daemon.http.post(f"/api/requests/{row['id']}/cancel", content=b"{}", headers={"Content-Type": "text/plain"})
    assert text.status_code == 415
    assert daemon.http.get(f"/api/requests/{row['id']}/cancel").status_code in (404, 405)
    for method in ("PUT", "DELETE", "PATCH"):
        assert daemon.http.request(method, f"/api/requests/{row['id']}").status_code == 405
    assert daemon.show(row["id"])["cancel_requested"] is False
    daemon.post(f"/api/requests/{row['id']}/cancel")


def test_a_teammate_sees_and_cancels_only_their_own(daemon: DaemonProcess) -> None:
    sarah, sam = daemon.add_person("sarah"), daemon.add_person("sam")
    theirs = daemon.request("true", token=sam)
    mine = daemon.request("true", token=sarah)
    assert [r["id"] for r in daemon.get("/api/requests", token=sarah).json()] == [mine["id"]]
    assert daemon.get(f"/api/requests/{theirs['id']}", token=sarah).status_code == 403
    assert daemon.get(f"/api/requests/{theirs['id']}/output", token=sarah).status_code == 403
    assert daemon.post(f"/api/requests/{theirs['id']}/cancel", token=sarah).status_code == 403
    assert daemon.post(f"/api/requests/{mine['id']}/approve", token=sarah).status_code == 403
    assert daemon.post(f"/api/requests/{mine['id']}/deny", token=sarah).status_code == 403
    assert daemon.post("/api/people/sam/revoke", token=sarah).status_code == 403
    assert daemon.post("/api/people", {"name": "eve"}, token=sarah).status_code == 403
    assert daemon.post("/api/settings", {"key": "approval_ttl", "value": "1s"}, token=sarah).status_code == 403
    assert daemon.get("/api/audit", token=sarah).status_code == 403
    assert daemon.post("/api/agents", {"name": "x", "runtime": "shell", "folder": "/"}, token=sarah).status_code == 403
    assert daemon.get("/api/settings").json()["approval_ttl"] == "24h"
    assert daemon.show(theirs["id"])["state"] == "pending"
    assert daemon.post(f"/api/requests/{mine['id']}/cancel", token=sarah).json()["state"] == "cancelled"


def test_tokens_are_stored_as_hashes_and_never_logged(daemon: DaemonProcess) -> None:
    token = daemon.add_person("sarah")
    daemon.request("true", token=token)
    daemon.get("/api/requests", token="wrong-" + token)
    daemon.stop()
    for path in daemon.home.rglob("*"):
        if path.is_file() and path.name != "owner.token":
            data = path.read_bytes()
            assert token.encode() not in data and daemon.token.encode() not in data, path
    with sqlite3.connect(daemon.home / "coxswain.db") as db:
        hashes = [r[0] for r in db.execute("SELECT token_hash FROM principals WHERE name = 'sarah'")]
    assert len(hashes[0]) == 64 and hashes[0] != token


def test_teammates_see_agents_without_their_environment_and_arguments(daemon: DaemonProcess, tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    added = daemon.post(
        "/api/agents",
        {
            "name": "api",
            "runtime": "shell",
            "folder": str(tmp_path / "api"),
            "env": {"DEPLOY_TARGET": "staging-7"},
            "args": ["--internal-flag"],
        },
    )
    assert added.status_code == 201, added.text
    sarah = daemon.add_person("sarah")
    mine = {a["name"]: a for a in daemon.get("/api/agents").json()}
    assert mine["api"]["options"]["env"] == {"DEPLOY_TARGET": "staging-7"}
    assert mine["api"]["options"]["args"] == ["--internal-flag"]
    theirs = daemon.get("/api/agents", token=sarah)
    assert sorted(a["name"] for a in theirs.json()) == sorted(mine)
    assert "staging-7" not in theirs.text and "--internal-flag" not in theirs.text
    assert all("env" not in a["options"] and "args" not in a["options"] for a in theirs.json())


def test_only_a_turns_token_reaches_the_mcp_server(daemon: DaemonProcess) -> None:
    sarah = daemon.add_person("sarah")
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream"}
    for token in (daemon.token, sarah):
        refused = daemon.post("/mcp", listing, token=token, headers=headers)
        assert refused.status_code == 403 and "agents in their turn" in refused.json()["error"], refused.text
    assert daemon.post("/mcp", listing, headers=headers, token="x" * 43).status_code == 401


def test_a_stream_that_lagged_past_its_revocation_still_ends() -> None:
    """A teammate's event stream that stops reading loses events once its queue is full, but never what ends it (and
    no one else's ending takes its place)."""
    from desktop.core.events import EventBus, Lagged, Revoked, SettingChanged, SignedOut

    bus = EventBus(queue_size=10)
    with bus.subscribe(ends={Revoked("sarah"), SignedOut("her-browser")}) as queue:
        for n in range(20):
            bus.publish(SettingChanged("approval_ttl", f"{n}m"))
        bus.publish(Revoked("tom"))
        bus.publish(SignedOut("his-browser"))
        bus.publish(Revoked("sarah"))
        taken = [queue.get_nowait() for _ in range(queue.qsize())]
    assert taken[-2:] == [Lagged(), Revoked("sarah")]
    assert Revoked("tom") not in taken and SignedOut("his-browser") not in taken
