"""The one client of the daemon's HTTP API, for the CLI and the tray: `api` builds each call, `Client` (synchronous)
or `AsyncClient` (asyncio) runs it and gives back a typed value from `shapes`, or raises a DaemonError."""

from desktop.client.call import Call, DaemonError
from desktop.client.transport import AsyncClient, Client

__all__ = ["AsyncClient", "Call", "Client", "DaemonError"]
