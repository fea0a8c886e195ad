"""The room's HTTPS certificate: one the daemon makes for itself (self-signed, for the chosen address, its
SHA-256 fingerprint shown so the owner can check it on the phone), or a PEM file the owner provides."""

import datetime
import hashlib
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

VALID_DAYS = 825  # the longest validity browsers accept for a certificate they are told to trust


@dataclass(frozen=True)
class Certificate:
    certfile: Path
    keyfile: Path
    fingerprint: str  # SHA-256 of the DER certificate, "AB:CD:…"


def fingerprint(pem: bytes) -> str:
    der = x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)
    return ":".join(f"{b:02X}" for b in hashlib.sha256(der).digest())


def provided(path: Path) -> Certificate:
    """The owner's PEM file (certificate and key together); the TLS layer checks that they belong together."""
    return Certificate(path, path, fingerprint(path.read_bytes()))


def generated(folder: Path, address: str) -> Certificate:
    """The daemon's own certificate for `address`, made again if it is missing, expiring or for another address."""
    certfile, keyfile = folder / "room-cert.pem", folder / "room-key.pem"
    if certfile.exists() and keyfile.exists() and _still_good(certfile.read_bytes(), address):
        return Certificate(certfile, keyfile, fingerprint(certfile.read_bytes()))
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Coxswain room on {socket.gethostname()[:40]}")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(address))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as f:
        f.write(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    pem = certificate.public_bytes(serialization.Encoding.PEM)
    certfile.write_bytes(pem)
    return Certificate(certfile, keyfile, fingerprint(pem))


def _still_good(pem: bytes, address: str) -> bool:
    try:
        certificate = x509.load_pem_x509_certificate(pem)
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return False
    soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=30)
    return (
        ipaddress.ip_address(address) in names.get_values_for_type(x509.IPAddress)
        and certificate.not_valid_after_utc > soon
    )
