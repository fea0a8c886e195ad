"""Attacks on the room, against a real daemon (not a browser's good behaviour): DNS rebinding, other sites' pages,
CSRF, tokens in URLs, cross-origin event streams and WebSockets, script in prompts and console lines, a revoked
person's cookie, guessing tokens and codes, and the HTTPS listener. Every one is refused or inert."""

import hashlib
import re
import socket
import ssl
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.daemon_process import DaemonProcess

ROOM_ADDRESS = "127.0.0.2"


@dataclass
class Room:
    daemon: DaemonProcess
    port: int
    https_port: int
    sarah: str  # tokens
    mallory: str

    def client(self, source: str = "127.0.0.1", https: bool = False) -> httpx.Client:
        base = f"https://{ROOM_ADDRESS}:{self.https_port}" if https else self.daemon.url
        return httpx.Client(
            base_url=base, verify=False, timeout=10, transport=httpx.HTTPTransport(local_address=source, verify=False)
        )

    def browser(self, token: str, source: str = "127.0.0.1", https: bool = False) -> tuple[httpx.Client, str]:
        """A client signed in like the room's page: the session cookie, and the CSRF token it was given."""
        client = self.client(source, https)
        signed = client.post("/room/signin", json={"token": token})
        assert signed.status_code == 200, signed.text
        return client, signed.json()["csrf"]

    def count(self) -> int:
        return len(self.daemon.get("/api/requests").json())


def free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Room]:
    daemon = DaemonProcess(tmp_path_factory.mktemp("room") / "home").start()
    try:
        https_port = free_port(ROOM_ADDRESS)
        for key, value in (("room_port", str(https_port)), ("room_address", ROOM_ADDRESS)):
            assert daemon.post("/api/settings", {"key": key, "value": value}).status_code == 200
        deadline = time.monotonic() + 10
        while daemon.get("/api/room").json()["url"] is None:
            assert time.monotonic() < deadline, daemon.get("/api/room").json()
            time.sleep(0.05)
        port = int(daemon.url.rsplit(":", 1)[1])
        yield Room(daemon, port, https_port, daemon.add_person("sarah"), daemon.add_person("mallory"))
    finally:
        daemon.stop()
        daemon.kill_runners()


# --- DNS rebinding: only the exact addresses the daemon serves ------------------------------------------------

HOSTS = [
    "localhost.evil:{p}",
    "127.0.0.1.nip.io:{p}",
    "0x7f.1:{p}",
    "0x7f000001:{p}",
    "2130706433:{p}",
    "127.1:{p}",
    "127.0.0.1.:{p}",
    "localhost.:{p}",
    "evil.example",
    "127.0.0.1",
    "127.0.0.1:{q}",
    "[::ffff:127.0.0.1]:{p}",
    "0.0.0.0:{p}",
    "LOCALHOST.evil:{p}",
    "{a}.nip.io:{p}",
]


@pytest.mark.parametrize("host", HOSTS)
def test_a_foreign_host_header_is_refused(room: Room, host: str) -> None:
    shown = host.format(p=room.port, q=room.port + 1, a=ROOM_ADDRESS)
    answer = room.daemon.get("/api/health", token=room.daemon.token, headers={"Host": shown})
    assert answer.status_code == 421 and "not served here" in answer.json()["error"]
    page = room.client().get("/", headers={"Host": shown})
    assert page.status_code == 421 and "<html" not in page.text


# --- other sites' pages: Origin, Sec-Fetch-Site -------------------------------------------------------------

ORIGINS = [
    "https://evil.example",
    "null",
    "http://127.0.0.1:{q}",
    "http://localhost.evil:{p}",
    "https://127.0.0.1:{p}",
    "http://127.0.0.1.nip.io:{p}",
    "file://",
    "http://127.0.0.1:{p}.evil.example",
]


@pytest.mark.parametrize("origin", ORIGINS)
def test_a_change_from_another_origin_is_refused(room: Room, origin: str) -> None:
    client, csrf = room.browser(room.sarah)
    before = room.count()
    answer = client.post(
        "/api/requests",
        json={"agent": "shell", "prompt": "echo pwned"},
        headers={"X-CSRF-Token": csrf, "Origin": origin.format(p=room.port, q=room.port + 1)},
    )
    assert answer.status_code == 403 and "other web pages" in answer.json()["error"]
    assert room.count() == before


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_a_change_fetched_by_another_site_is_refused(room: Room, site: str) -> None:
    client, csrf = room.browser(room.sarah)
    answer = client.post(
        "/api/requests",
        json={"agent": "shell", "prompt": "echo pwned"},
        headers={"X-CSRF-Token": csrf, "Sec-Fetch-Site": site},
    )
    assert answer.status_code == 403


def test_another_site_cannot_read_the_requests_either(room: Room) -> None:
    client, _ = room.browser(room.sarah)
    assert client.get("/api/requests", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    assert client.get("/api/requests", headers={"Sec-Fetch-Site": "same-origin"}).status_code == 200


# --- CSRF: a session cookie alone changes nothing ------------------------------------------------------------

CSRF_CASES = {
    "form": {
        "content": "agent=shell&prompt=echo+pwned",
        "headers": {"Content-Type": "application/x-www-form-urlencoded"},
        "status": 415,
    },
    "multipart": {"files": {"prompt": ("p", b"echo pwned")}, "status": 415},
    "text/plain": {
        "content": '{"agent": "shell", "prompt": "echo pwned"}',
        "headers": {"Content-Type": "text/plain"},
        "status": 415,
    },
    "no token": {"json": {"agent": "shell", "prompt": "echo pwned"}, "status": 403},
    "wrong token": {
        "json": {"agent": "shell", "prompt": "echo pwned"},
        "headers": {"X-CSRF-Token": "0" * 32},
        "status": 403,
    },
    "token in the body": {"json": {"agent": "shell", "prompt": "echo pwned", "csrf": "{csrf}"}, "status": 403},
    "token in the URL": {
        "json": {"agent": "shell", "prompt": "echo pwned"},
        "params": {"csrf": "{csrf}"},
        "status": 403,
    },
}


@pytest.mark.parametrize("case", CSRF_CASES)
def test_a_forged_change_is_refused(room: Room, case: str) -> None:
    client, csrf = room.browser(room.sarah)
    spec = dict(CSRF_CASES[case])
    status = spec.pop("status")
    if "json" in spec:
        spec["json"] = {k: v.replace("{csrf}", csrf) for k, v in spec["json"].items()}
    if "params" in spec:
        spec["params"] = {"csrf": csrf}
    before = room.count()
    answer = client.post("/api/requests", **spec)  # type: ignore[arg-type]
    assert answer.status_code == status, answer.text
    assert room.count() == before


def test_another_persons_csrf_token_does_not_fit(room: Room) -> None:
    client, _ = room.browser(room.sarah)
    _, mallorys = room.browser(room.mallory)
    answer = client.post(
        "/api/requests", json={"agent": "shell", "prompt": "echo pwned"}, headers={"X-CSRF-Token": mallorys}
    )
    assert answer.status_code == 403 and "CSRF" in answer.json()["error"]


def test_with_its_csrf_token_the_page_can_send(room: Room) -> None:
    client, csrf = room.browser(room.sarah)
    answer = client.post(
        "/api/requests", json={"agent": "shell", "prompt": "echo fine"}, headers={"X-CSRF-Token": csrf}
    )
    assert answer.status_code == 201 and answer.json()["requester"] == "sarah"


# --- tokens never in a URL ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/api/requests", "token"),
        ("/api/requests", "access_token"),
        ("/api/events", "token"),
        ("/room/me", "session"),
        ("/", "token"),
        ("/api/health", "Authorization"),
    ],
)
def test_a_token_in_the_address_is_refused(room: Room, path: str, key: str) -> None:
    answer = room.client().get(path, params={key: room.daemon.token})
    assert answer.status_code == 400 and "never taken from the address" in answer.json()["error"]


# --- the event stream and WebSockets from other sites ----------------------------------------------------------


@pytest.mark.parametrize(
    "headers", [{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}], ids=["origin", "fetch-site"]
)
def test_another_site_cannot_open_the_event_stream(room: Room, headers: dict[str, str]) -> None:
    client, _ = room.browser(room.sarah)
    with client.stream("GET", "/api/events", headers=headers) as answer:
        assert answer.status_code == 403


@pytest.mark.parametrize("origin", ["https://evil.example", "http://127.0.0.1:{p}"], ids=["foreign", "own"])
def test_no_websocket_is_ever_accepted(room: Room, origin: str) -> None:
    client, _ = room.browser(room.sarah)
    cookie = "; ".join(f"{k}={v}" for k, v in client.cookies.items())
    with socket.create_connection(("127.0.0.1", room.port), timeout=5) as sock:
        sock.sendall(
            (
                f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{room.port}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                f"Sec-WebSocket-Version: 13\r\nOrigin: {origin.format(p=room.port)}\r\nCookie: {cookie}\r\n\r\n"
            ).encode()
        )
        status = sock.recv(200).split(b"\r\n")[0]
    assert status.startswith(b"HTTP/1.1 4"), status  # never 101 Switching Protocols


# --- what agents and teammates write stays text ----------------------------------------------------------------

SCRIPT = '<script>alert(document.cookie)</script><a href="javascript:alert(1)">x</a>'


def test_a_prompt_with_script_comes_back_as_json_data(room: Room) -> None:
    made = room.daemon.request(f"printf '%s\\n' '{SCRIPT}'", token=room.sarah)
    answer = room.daemon.get(f"/api/requests/{made['id']}", token=room.sarah)
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert SCRIPT in answer.json()["prompt"]


def test_a_console_line_with_script_comes_back_as_text_runs(room: Room) -> None:
    made = room.daemon.request(f"printf '\\033[31m%s\\033[0m\\n' '{SCRIPT}'")
    room.daemon.wait_state(made["id"], "done")
    styled = room.daemon.get(f"/api/requests/{made['id']}/console", params={"styled": "true"}).json()["styled"]
    assert styled == [[{"text": SCRIPT, "fg": "#cd3131"}]]


def test_the_page_runs_only_its_own_script(room: Room) -> None:
    page = room.client().get("/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert '<script src="/room/app.js"' in page.text and "onclick=" not in page.text


def test_the_page_code_never_writes_html(room: Room) -> None:
    code = room.client().get("/room/app.js").text
    assert code.startswith("// The room")
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function", code)


def test_the_room_cannot_be_framed(room: Room) -> None:
    page = room.client().get("/")
    assert page.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]


# --- a revoked person ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def revoked(room: Room) -> tuple[httpx.Client, str, str, str]:
    token = room.daemon.add_person("bob")
    client, csrf = room.browser(token, source="127.0.0.4")
    code = room.daemon.post("/api/room/link", {"person": "bob"}).json()["url"].split("#code=")[1]
    assert room.daemon.post("/api/people/bob/revoke").status_code == 200
    return client, csrf, code, token


def test_a_revoked_persons_cookie_reads_nothing(room: Room, revoked: tuple[httpx.Client, str, str, str]) -> None:
    assert revoked[0].get("/room/me").status_code == 401
    assert revoked[0].get("/api/requests").status_code == 401


def test_a_revoked_persons_cookie_changes_nothing(room: Room, revoked: tuple[httpx.Client, str, str, str]) -> None:
    answer = revoked[0].post(
        "/api/requests", json={"agent": "shell", "prompt": "echo x"}, headers={"X-CSRF-Token": revoked[1]}
    )
    assert answer.status_code == 401


def test_a_revoked_persons_cookie_opens_no_event_stream(
    room: Room, revoked: tuple[httpx.Client, str, str, str]
) -> None:
    with revoked[0].stream("GET", "/api/events") as answer:
        assert answer.status_code == 401


def test_a_revoked_persons_link_and_token_sign_no_one_in(
    room: Room, revoked: tuple[httpx.Client, str, str, str]
) -> None:
    client = room.client("127.0.0.4")
    assert client.post("/room/exchange", json={"code": revoked[2]}).status_code == 403
    assert client.post("/room/signin", json={"token": revoked[3]}).status_code == 403


# --- guessing ------------------------------------------------------------------------------------------------


def test_guessing_tokens_is_slowed_down(room: Room) -> None:
    guesser = room.client("127.0.0.3")
    for attempt in range(5):
        assert guesser.post("/room/signin", json={"token": f"guess-{attempt}" * 4}).status_code == 403
    refused = guesser.post("/room/signin", json={"token": "guess-6"})
    assert refused.status_code == 429 and 1 <= int(refused.headers["retry-after"]) <= 61
    assert "too many failed sign-ins" in refused.json()["error"]


def test_while_slowed_down_even_the_right_token_waits(room: Room) -> None:
    guesser = room.client("127.0.0.7")
    for attempt in range(5):
        guesser.post("/room/signin", json={"token": f"wrong-{attempt}"})
    assert guesser.post("/room/signin", json={"token": room.sarah}).status_code == 429


def test_someone_elses_guessing_does_not_lock_a_person_out(room: Room) -> None:
    guesser = room.client("127.0.0.8")
    for attempt in range(6):
        guesser.post("/room/signin", json={"token": f"wrong-{attempt}"})
    assert room.client("127.0.0.9").post("/room/signin", json={"token": room.sarah}).status_code == 200


def test_guessing_link_codes_is_slowed_down_too(room: Room) -> None:
    guesser = room.client("127.0.0.6")
    for attempt in range(5):
        assert guesser.post("/room/exchange", json={"code": f"code-{attempt}"}).status_code == 403
    assert guesser.post("/room/exchange", json={"code": "code-6"}).status_code == 429


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        "{}",
        '{"token": ""}',
        '{"token": "' + "g" * 5000 + '"}',
        '{"token": 5}',
        '{"token": "x", "admin": true}',
        '{"code": "x"}',
        "[]",
    ],
)
def test_a_malformed_sign_in_is_answered_in_words_and_echoes_nothing(room: Room, body: str) -> None:
    answer = room.client("127.0.0.11").post("/room/signin", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 422 and answer.json()["error"]
    assert "g" * 100 not in answer.text and "Set-Cookie" not in answer.headers
    assert room.daemon.get("/api/health").status_code == 200


# --- one-time links ------------------------------------------------------------------------------------------


def test_a_link_signs_in_once(room: Room) -> None:
    url = room.daemon.post("/api/room/link", {"person": "sarah"}).json()["url"]
    code = url.split("#code=")[1]
    assert room.client("127.0.0.10").post("/room/exchange", json={"code": code}).json()["you"] == "sarah"
    assert room.client("127.0.0.10").post("/room/exchange", json={"code": code}).status_code == 403


def test_the_code_rides_after_the_hash_so_no_server_or_log_sees_it(room: Room) -> None:
    url = room.daemon.post("/api/room/link", {"person": "sarah"}).json()["url"]
    # the room is on the network here, so the link goes there (a phone cannot reach the loopback address)
    assert re.fullmatch(rf"https://127\.0\.0\.2:{room.https_port}/#code=[A-Za-z0-9_-]{{32}}", url), url


def test_links_are_for_people(room: Room) -> None:
    assert room.daemon.post("/api/people", {"name": "ci-bot", "kind": "machine"}).status_code == 201
    assert room.daemon.post("/api/room/link", {"person": "ci-bot"}).status_code == 404


def test_only_the_owner_makes_links(room: Room) -> None:
    client, csrf = room.browser(room.sarah)
    answer = client.post("/api/room/link", json={"person": "sarah"}, headers={"X-CSRF-Token": csrf})
    assert answer.status_code == 403


# --- the cookie -------------------------------------------------------------------------------------------------


def test_the_session_cookie_is_out_of_scripts_reach_and_stays_on_this_site(room: Room) -> None:
    answer = room.client().post("/room/signin", json={"token": room.sarah})
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("coxswain_room=")
    assert all(part in cookie for part in ("HttpOnly", "SameSite=strict", "Path=/"))
    assert room.sarah not in cookie and "Secure" not in cookie  # plain HTTP is only ever loopback


def test_over_https_the_cookie_is_secure_and_host_bound(room: Room) -> None:
    answer = room.client(https=True).post("/room/signin", json={"token": room.sarah})
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("__Host-coxswain=") and "Secure" in cookie and "Domain" not in cookie


# --- the room on the network: HTTPS only -------------------------------------------------------------------------


def test_the_certificate_served_is_the_one_the_owner_is_shown(room: Room) -> None:
    pem = ssl.get_server_certificate((ROOM_ADDRESS, room.https_port))
    served = hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest().upper()
    shown = room.daemon.get("/api/room").json()["fingerprint"].replace(":", "")
    assert served == shown


def test_the_network_address_serves_the_room_over_https(room: Room) -> None:
    client, csrf = room.browser(room.sarah, https=True)
    assert client.get("/room/me").json()["you"] == "sarah"
    answer = client.post(
        "/api/requests",
        json={"agent": "shell", "prompt": "echo over https"},
        headers={"X-CSRF-Token": csrf, "Origin": f"https://{ROOM_ADDRESS}:{room.https_port}"},
    )
    assert answer.status_code == 201


def test_a_downgraded_origin_is_refused_on_https(room: Room) -> None:
    client, csrf = room.browser(room.sarah, https=True)
    answer = client.post(
        "/api/requests",
        json={"agent": "shell", "prompt": "echo x"},
        headers={"X-CSRF-Token": csrf, "Origin": f"http://{ROOM_ADDRESS}:{room.https_port}"},
    )
    assert answer.status_code == 403


def test_plain_http_gets_nothing_from_the_network_address(room: Room) -> None:
    with pytest.raises(httpx.HTTPError):
        httpx.get(
            f"http://{ROOM_ADDRESS}:{room.https_port}/api/health",
            headers={"Authorization": f"Bearer {room.daemon.token}"},
            timeout=5,
        )


# --- methods and CORS -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "DELETE", "OPTIONS"])
def test_no_other_method_and_no_cors(room: Room, method: str) -> None:
    answer = room.client().request(
        method,
        "/api/requests",
        headers={"Origin": f"http://127.0.0.1:{room.port}", "Access-Control-Request-Method": "POST"},
    )
    assert answer.status_code == 405
    assert not any(name.startswith("access-control-") for name in answer.headers)


def test_the_mcp_server_takes_no_browser_cookie(room: Room) -> None:
    client, csrf = room.browser(room.sarah)
    answer = client.post(
        "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers={"X-CSRF-Token": csrf}
    )
    assert answer.status_code == 403


# --- no secret in any log ---------------------------------------------------------------------------------------


def test_no_token_session_or_code_reaches_a_log(tmp_path: Path) -> None:
    daemon = DaemonProcess(tmp_path / "home").start()
    try:
        token = daemon.add_person("sarah")
        client = httpx.Client(base_url=daemon.url)
        signed = client.post("/room/signin", json={"token": token})
        session = signed.cookies["coxswain_room"]
        url = daemon.post("/api/room/link", {"person": "sarah"}).json()["url"]
        code = url.split("#code=")[1]
        client.post("/room/exchange", json={"code": code})
        client.post("/room/exchange", json={"code": code})
        client.get("/api/requests", params={"token": token})
        client.post("/room/signin", json={"token": token + "x"})
        client.post("/room/signout", json={}, headers={"X-CSRF-Token": signed.json()["csrf"]})
    finally:
        daemon.stop()
    logs = "".join(path.read_text(errors="replace") for path in daemon.home.rglob("*.log")) + daemon.output()
    database = (daemon.home / "coxswain.db").read_bytes()
    for secret in (token, session, code, daemon.token):
        assert secret not in logs and secret.encode() not in database
