"""Builds what non-developers install: `python packaging/build.py bundle | deb | nsis | all`.

bundle  the frozen folder (PyInstaller, packaging/coxswain.spec) in build/bundle/coxswain
deb     a Debian package of the bundle (dpkg-deb) in build/coxswain_VERSION_ARCH.deb
tarball the bundle and an install script (per user, no root) in build/coxswain-VERSION-linux-ARCH.tar.gz
nsis    the Windows installer script's generated parts (version, the exact file list) and, with makensis,
        build/Coxswain-VERSION-setup.exe from the bundle

The version and the publisher come from pyproject.toml (one place)."""

import argparse
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the version, the mutex and the Run value come from the package itself
BUILD = ROOT / "build"
BUNDLE = BUILD / "bundle" / "coxswain"
PUBLISHER = "Coxswain"


def version() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def bundle() -> Path:
    subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
                    "--distpath", str(BUNDLE.parent), "--workpath", str(BUILD / "pyinstaller"),
                    str(ROOT / "packaging" / "coxswain.spec")], check=True, cwd=ROOT)
    if sys.platform != "win32":
        (BUNDLE / "cox").symlink_to("coxswain")
    return BUNDLE


def deb(version_override: str | None = None) -> Path:
    """/opt/coxswain (the bundle), cox and coxswain on PATH, a menu entry and its icon; dpkg removes exactly these."""
    ver = version_override or version()
    arch = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True, check=True).stdout.strip()
    root = BUILD / "deb" / f"coxswain_{ver}_{arch}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(BUNDLE, root / "opt" / "coxswain", symlinks=True)
    (root / "usr" / "bin").mkdir(parents=True)
    for program in ("cox", "coxswain"):
        (root / "usr" / "bin" / program).symlink_to(f"/opt/coxswain/{program}")
    applications = root / "usr" / "share" / "applications"
    applications.mkdir(parents=True)
    (applications / "coxswain.desktop").write_text(
        "[Desktop Entry]\nType=Application\nName=Coxswain\nComment=Your team's coding agents, on your laptop\n"
        "Exec=/opt/coxswain/coxswain\nIcon=coxswain\nTerminal=false\nCategories=Development;\n")
    icons = root / "usr" / "share" / "icons" / "hicolor" / "scalable" / "apps"
    icons.mkdir(parents=True)
    shutil.copy(ROOT / "resources" / "tray-idle.svg", icons / "coxswain.svg")
    size_kb = sum(f.stat().st_size for f in root.rglob("*") if f.is_file() and not f.is_symlink()) // 1024
    (root / "DEBIAN").mkdir()
    (root / "DEBIAN" / "control").write_text(
        f"Package: coxswain\nVersion: {ver}\nArchitecture: {arch}\nMaintainer: {PUBLISHER} <noreply@coxswain.invalid>\n"
        f"Installed-Size: {size_kb}\nSection: devel\nPriority: optional\n"
        "Depends: libegl1, libgl1, libxkbcommon0, libfontconfig1, libdbus-1-3, libglib2.0-0, libxkbcommon-x11-0, "
        "libxcb-cursor0, libgssapi-krb5-2\n"
        "Description: host your team's coding agents on your own laptop\n"
        " Requests, approvals, queues and an audit log for Claude Code, Codex, Gemini CLI and Copilot CLI.\n")
    out = BUILD / f"coxswain_{ver}_{arch}.deb"
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "-z6", "--build", str(root), str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return out


def tarball() -> Path:
    """The bundle with packaging/install.sh, for Linux systems without dpkg: installs for one user, no root."""
    import tarfile

    arch = os.uname().machine
    out = BUILD / f"coxswain-{version()}-linux-{arch}.tar.gz"
    with tarfile.open(out, "w:gz", compresslevel=6) as archive:
        top = f"coxswain-{version()}"
        archive.add(BUNDLE, f"{top}/coxswain")
        archive.add(ROOT / "packaging" / "install.sh", f"{top}/install.sh")
        archive.add(ROOT / "resources" / "tray-idle.svg", f"{top}/coxswain.svg")
    return out


def nsis_parts(payload: Path = BUNDLE) -> Path:
    """packaging/generated/*.nsh: the version and publisher, and the exact files to install and to remove."""
    generated = BUILD / "nsis"
    generated.mkdir(parents=True, exist_ok=True)
    from desktop.platform.autostart import NAME as RUN_VALUE
    from desktop.platform.instance import RUNNING_MUTEX

    (generated / "version.nsh").write_text(f'!define VERSION "{version()}"\n!define PUBLISHER "{PUBLISHER}"\n'
                                           f'!define PAYLOAD "{payload}"\n!define MUTEX "{RUNNING_MUTEX}"\n'
                                           f'!define RUN_VALUE "{RUN_VALUE}"\n')
    files = sorted(p for p in payload.rglob("*") if p.is_file() and not p.is_symlink())  # a Windows bundle has none
    folders = sorted({p.parent for p in files} - {payload}, key=lambda p: -len(p.parts))
    install, remove = [], []
    for folder in sorted({p.parent for p in files}):
        inside = folder.relative_to(payload)
        install.append(f'SetOutPath "$INSTDIR\\{_win(inside)}"' if inside.parts else 'SetOutPath "$INSTDIR"')
        install += [f'File "{f}"' for f in files if f.parent == folder]
    remove += [f'Delete "$INSTDIR\\{_win(f.relative_to(payload))}"' for f in files]
    remove += [f'RMDir "$INSTDIR\\{_win(d.relative_to(payload))}"' for d in folders]
    (generated / "install-files.nsh").write_text("\n".join(install) + "\n")
    (generated / "uninstall-files.nsh").write_text("\n".join(remove) + "\n")
    return generated


def nsis(fast: bool = False) -> Path:
    nsis_parts()
    out = BUILD / f"Coxswain-{version()}-setup.exe"
    subprocess.run(["makensis", "-WX", "-V2", f"-DOUTFILE={out}", f"-DGENERATED={BUILD / 'nsis'}",
                    *(["-DFAST"] if fast else []), str(ROOT / "installer.nsi")], check=True)
    return out


def _win(path: Path) -> str:
    return str(path).replace(os.sep, "\\")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["bundle", "deb", "tarball", "nsis", "all"])
    parser.add_argument("--deb-version", help="build the .deb under this version (upgrade tests)")
    parser.add_argument("--fast", action="store_true", help="quicker compression (tests)")
    args = parser.parse_args()
    if args.what in ("bundle", "all"):
        print(bundle())
    if args.what in ("deb", "all"):
        print(deb(args.deb_version))
    if args.what in ("tarball", "all"):
        print(tarball())
    if args.what in ("nsis", "all"):
        print(nsis(args.fast))
    return 0


if __name__ == "__main__":
    sys.exit(main())
