"""Where one installation keeps its files: `--home DIR`, else $COXSWAIN_HOME, else the user's data folder."""

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

DEFAULT_PORT = 7431  # where the daemon's API listens on loopback unless told otherwise


@dataclass(frozen=True)
class Home:
    root: Path

    @classmethod
    def resolve(cls, explicit: str | None = None) -> "Home":
        chosen = explicit or os.environ.get("COXSWAIN_HOME") or platformdirs.user_data_dir("coxswain", False)
        return cls(Path(chosen).expanduser().absolute())

    @property
    def database(self) -> Path:
        return self.root / "coxswain.db"

    @property
    def backups(self) -> Path:
        return self.root / "backups"

    @property
    def owner_token(self) -> Path:
        return self.root / "owner.token"

    @property
    def daemon_json(self) -> Path:
        return self.root / "daemon.json"

    @property
    def lock(self) -> Path:
        return self.root / "daemon.lock"

    @property
    def heartbeat(self) -> Path:
        return self.root / "heartbeat"

    @property
    def tasks(self) -> Path:
        return self.root / "tasks"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def log(self) -> Path:
        return self.root / "logs" / "daemon.log"
