"""The owner's local credential: a token in a file only the owner can read."""

import os
import stat
from pathlib import Path

from desktop.core.principals import new_token


def owner_token(path: Path) -> str:
    """Read the owner's token, creating it (mode 0600) on first use; refuse a file others can read."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        mode = path.stat().st_mode
        if os.name != "nt" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise PermissionError(f"{path} can be read by other users; run: chmod 600 {path}") from None
        return path.read_text().strip()
    token = new_token()
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token
