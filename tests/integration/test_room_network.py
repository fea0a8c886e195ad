"""Reaching the room from other machines: the owner's own certificate, what happens with a bad one or an address
that is not this computer's (said, and the daemon goes on), a new address gets a certificate of its own, the choice
survives a restart, and `cox room` / `cox person link` say all of it."""

import datetime
import hashlib
import ipaddress
import sqlite3
import ssl
import time
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.daemon_process import DaemonProcess
from tests.integration.test_room_attacks import free_port


def settle(daemon: DaemonProcess, **settings: str) -> dict[str, Any]:
    """Change the room's settings and wait until the daemon has moved the room."""
    for key, value in settings.items():
        answer = daemon.post("/api/settings", {"key": key, "value": value})
        assert answer.status_code == 200, answer.text
    deadline = time.monotonic() + 10
    while True:
        room: dict[str, Any] = daemon.get("/api/room").json()
        moved = room["url"] is None if settings.get("room_address") == "loopback" else room["url"] or room["problem"]
        if moved:
            return room
        assert time.monotonic() < deadline, room
        time.sleep(0.05)


def served_fingerprint(address: str, port: int) -> str:
    der = ssl.PEM_cert_to_DER_cert(ssl.get_server_certificate((address, port)))
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


def owners_certificate(path: Path, address: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "laptop.tailnet.example")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(address))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    pem = certificate.public_bytes(serialization.Encoding.PEM)
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        + pem
    )
    return ":".join(f"{b:02X}" for b in hashlib.sha256(certificate.public_bytes(serialization.Encoding.DER)).digest())


def test_the_owners_own_certificate_is_served(daemon: DaemonProcess, tmp_path: Path) -> None:
    port = free_port("127.0.0.2")
    expected = owners_certificate(tmp_path / "room.pem", "127.0.0.2")
    room = settle(daemon, room_certificate=str(tmp_path / "room.pem"), room_port=str(port), room_address="127.0.0.2")
    assert room["fingerprint"] == expected == served_fingerprint("127.0.0.2", port)


def test_a_bad_certificate_or_a_foreign_address_is_said_and_the_daemon_goes_on(
    make_daemon: Any, tmp_path: Path
) -> None:
    daemon = make_daemon(tmp_path / "home").start()
    (tmp_path / "broken.pem").write_text("-----BEGIN CERTIFICATE-----\nnot a certificate\n")
    room = settle(daemon, room_certificate=str(tmp_path / "broken.pem"), room_address="127.0.0.2")
    assert room["url"] is None and room["problem"].startswith("the room cannot be served at 127.0.0.2:")
    refused = daemon.post("/api/settings", {"key": "room_certificate", "value": str(tmp_path / "missing.pem")})
    assert refused.status_code == 400 and "there is no file" in refused.json()["error"]
    settle(daemon, room_certificate="generated")
    refused = daemon.post("/api/settings", {"key": "room_address", "value": "192.0.2.7"})  # TEST-NET-1: not here
    assert refused.status_code == 400 and "192.0.2.7 is not an address of this computer" in refused.json()["error"]

    # an address that was this computer's when chosen, and is not at the next start (another network), is said
    daemon.stop()
    with sqlite3.connect(tmp_path / "home" / "coxswain.db") as db:
        db.execute("UPDATE settings SET value = '192.0.2.7' WHERE key = 'room_address'")
    daemon = make_daemon(tmp_path / "home").start()
    room = daemon.get("/api/room").json()
    assert room["url"] is None and "192.0.2.7" in room["problem"] and "assign" in room["problem"]
    assert daemon.get("/api/health").status_code == 200
    shown = daemon.cox("room", token=daemon.token, check=True).stdout
    assert "not served: the room cannot be served at 192.0.2.7" in shown


def test_each_address_gets_its_own_certificate_and_the_choice_survives_a_restart(
    make_daemon: Any, tmp_path: Path
) -> None:
    daemon = make_daemon(tmp_path / "home").start()
    port = free_port("127.0.0.2")
    first = settle(daemon, room_port=str(port), room_address="127.0.0.2")
    second = settle(daemon, room_address="127.0.0.3")
    assert second["url"] == f"https://127.0.0.3:{port}/" and second["fingerprint"] != first["fingerprint"]
    assert (tmp_path / "home" / "room-key.pem").stat().st_mode & 0o777 == 0o600
    daemon.stop()
    daemon = make_daemon(tmp_path / "home").start()
    room = settle(daemon)
    assert room["url"] == second["url"] and room["fingerprint"] == second["fingerprint"]
    assert served_fingerprint("127.0.0.3", port) == room["fingerprint"]
    shown = daemon.cox("room", token=daemon.token, check=True).stdout
    assert f"on the network:   https://127.0.0.3:{port}/  (certificate SHA-256 {room['fingerprint']})" in shown
    daemon.add_person("sarah")
    link = daemon.cox("person", "link", "sarah", token=daemon.token, check=True).stdout
    assert link.startswith(f"https://127.0.0.3:{port}/#code=") and "one use" in link

    # the Host allowlist follows the chosen address: taken while served, dropped when the room is loopback again
    assert daemon.get("/api/health", headers={"Host": f"127.0.0.3:{port}"}).status_code == 200
    settle(daemon, room_address="loopback")
    assert daemon.get("/api/health", headers={"Host": f"127.0.0.3:{port}"}).status_code == 421
    assert daemon.get("/api/room").json()["url"] is None
