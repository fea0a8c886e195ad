"""What installing Coxswain costs: `python -m bench.bundle` (builds what is missing; a few minutes the first time).

Prints the frozen bundle's size on disk, the .deb's and the Windows installer's (LZMA, as released), and the time from
process start to the daemon answering, frozen against running from source (median of 5, as bench.gui measures it).
Targets: bundle under 150 MB, frozen start within 20% of source."""

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.gui import Program, environment, start_times

_spec = importlib.util.spec_from_file_location(
    "coxswain_packaging", Path(__file__).resolve().parent.parent / "packaging" / "build.py"
)
assert _spec is not None and _spec.loader is not None
packaging = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(packaging)


def size(path: Path) -> float:
    """MiB on disk (symlinks count as links)."""
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink()) / 2**20


def app(argv: list[str]) -> Program:
    return lambda home: subprocess.Popen(
        [*argv, "--port", "0", "--home", str(home)],
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def main() -> int:
    bundle = packaging.BUNDLE if (packaging.BUNDLE / "coxswain").exists() else packaging.bundle()
    deb = packaging.deb()
    installer = packaging.nsis()
    print(f"bundle folder        {size(bundle):6.1f} MiB   ({bundle})")
    print(f".deb                 {size(deb):6.1f} MiB")
    print(f"Windows installer    {size(installer):6.1f} MiB   (LZMA; the Linux bundle as its payload)")
    print("start to the daemon answering (median of 5)")
    with tempfile.TemporaryDirectory() as tmp:
        starts = start_times(
            {
                "from source": app([sys.executable, "-m", "desktop.gui.app"]),
                "frozen": app([str(bundle / "coxswain")]),
            },
            Path(tmp),
        )
    for name, (took, cpu) in starts.items():
        print(f"{name:20} {took * 1000:6.0f} ms   ({cpu:.2f} s CPU)")
    print(f"frozen/source        {starts['frozen'][0] / starts['from source'][0]:6.2f}")
    print("targets: bundle under 150 MB, frozen start within 20% of source")
    return 0


if __name__ == "__main__":
    sys.exit(main())
