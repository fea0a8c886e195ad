"""The one client of the daemon's HTTP API, for the CLI and the tray: `api` builds each call, `transport.Client`
(synchronous) or `transport.AsyncClient` (asyncio) runs it and gives back a typed value from `shapes`, or raises a
DaemonError. The transports (and httpx) load only where a call is run, so `cox daemon` never loads them."""

from desktop.client.call import Call, DaemonError

__all__ = ["Call", "DaemonError"]
