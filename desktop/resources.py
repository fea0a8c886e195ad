"""Where the files in `resources/` are: next to the package when run from source, inside the bundle when frozen."""

import sys
from pathlib import Path


def resource(name: str) -> Path:
    base = Path(getattr(sys, "_MEIPASS", Path(__file__).resolve().parent.parent))
    return base / "resources" / name
