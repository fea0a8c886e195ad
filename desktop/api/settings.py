"""The owner's settings, provider keys (kept in the keyring) and audit log."""

from fastapi import FastAPI, Request

from desktop import answers as a
from desktop.api import models as m
from desktop.api.actors import actor, owner
from desktop.api.tasks import Count
from desktop.core.audit_log import AuditLog
from desktop.core.ledger import Ledger
from desktop.core.owner_settings import OwnerSettings
from desktop.platform.secrets import SECRETS, Secrets


def add_settings(
    api: FastAPI, owner_settings: OwnerSettings, secrets: Secrets, audit: AuditLog, ledger: Ledger
) -> None:
    @api.get("/api/settings")
    async def listing() -> dict[str, str]:
        return owner_settings.effective()

    @api.post("/api/settings")
    async def change(body: m.SettingChange, request: Request) -> dict[str, str]:
        owner_settings.change(body.key, body.value, actor(request))
        return owner_settings.effective()

    @api.get("/api/secrets")
    async def secrets_kept(request: Request) -> a.SecretList:
        owner(request)
        return a.SecretList(stored=secrets.stored(), known=list(SECRETS), problem=secrets.problem())

    @api.post("/api/secrets")
    async def keep_secret(body: m.SecretValue, request: Request) -> a.SecretStored:
        owner_settings.keep_secret(body.name, body.value, owner(request))
        return a.SecretStored(stored=body.name)

    @api.get("/api/audit")
    async def audit_log(request: Request, request_id: str | None = None, limit: Count = 1000) -> list[a.AuditEntry]:
        owner(request)
        ref = ledger.resolve(request_id) if request_id else None
        return [
            a.AuditEntry(
                seq=r.seq,
                at=m.iso(r.at) or "",
                actor=r.actor,
                action=r.action,
                request_id=r.request_id,
                reason=r.reason,
                hash=r.hash,
            )
            for r in audit.records(ref, max(1, min(limit, 100_000)))
        ]

    @api.get("/api/audit/verify")
    async def verify(request: Request) -> a.AuditCheck:
        owner(request)
        checked = audit.check()
        if checked.broken is None:
            return a.AuditCheck(intact=True, records=checked.records)
        return a.AuditCheck(
            intact=False, records=checked.records, first_bad=checked.broken[0], problem=checked.broken[1]
        )
