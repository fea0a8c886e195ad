"""What non-developers install, built and used for real: the frozen bundle (PyInstaller) passes its smoke test and
runs requests through its own re-entered runner and MCP relay; the .deb installs with apt, upgrades keeping the
user's data, and leaves nothing behind; the Windows installer builds with makensis -WX and uninstalls exactly what it
installs; the hosted-CI workflow for Windows and macOS is valid. Builds are cached in build/ until the sources
change."""

import fcntl
import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from tests.daemon_process import kill_runners

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
_spec = importlib.util.spec_from_file_location("coxswain_packaging", ROOT / "packaging" / "build.py")
assert _spec is not None and _spec.loader is not None
packaging = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(packaging)

pytestmark = pytest.mark.slow
OFFSCREEN = {"QT_QPA_PLATFORM": "offscreen"}


def sources_hash() -> str:
    files = sorted(
        [
            *(ROOT / "desktop").rglob("*.py"),
            *(p for p in (ROOT / "resources").rglob("*") if p.is_file()),
            ROOT / "pyproject.toml",
            ROOT / "packaging" / "coxswain.spec",
            ROOT / "packaging" / "build.py",
            ROOT / "installer.nsi",
        ]
    )
    digest = hashlib.sha256()
    for f in files:
        digest.update(str(f.relative_to(ROOT)).encode() + f.read_bytes())
    return digest.hexdigest()[:16]


def built(name: str, make: Callable[[], Path]) -> Path:
    """`make()`'s output, made once for these sources (xdist workers wait for each other on a lock)."""
    BUILD.mkdir(exist_ok=True)
    with open(BUILD / ".tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = BUILD / f".{name}.built"
        want = sources_hash()
        if stamp.exists():
            made_from, made = stamp.read_text().split("\n")
            if made_from == want and Path(made).exists():
                return Path(made)
        out = make()
        stamp.write_text(f"{want}\n{out}")
        return out


@pytest.fixture(scope="session")
def bundle() -> Path:
    return built("bundle", packaging.bundle)


@pytest.fixture
def app_process(bundle: Path, tmp_path: Path) -> Iterator["FrozenApp"]:
    app = FrozenApp(bundle, tmp_path / "home")
    try:
        yield app
    finally:
        app.stop()


class FrozenApp:
    def __init__(self, bundle: Path, home: Path) -> None:
        self.bundle, self.home, self.process = bundle, home, None

    def start(self, env: dict[str, str]) -> "FrozenApp":
        self.process = subprocess.Popen(
            [str(self.bundle / "coxswain"), "--home", str(self.home), "--port", "0"],
            env={**env, **OFFSCREEN},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        while "is running" not in self.process.stdout.readline():
            assert self.process.poll() is None, "the frozen app did not start"
        url = json.loads((self.home / "daemon.json").read_text())["url"]
        token = (self.home / "owner.token").read_text().strip()
        self.api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"})
        return self

    def cox(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bundle / "cox"), "--home", str(self.home), *args], capture_output=True, text=True, timeout=60
        )

    def wait_state(self, request_id: str, state: str, timeout: float = 60) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while (row := self.api.get(f"/api/requests/{request_id}").json())["state"] != state:
            assert time.monotonic() < deadline, row
            time.sleep(0.1)
        return row  # type: ignore[no-any-return]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.communicate(timeout=30)
        kill_runners(self.home)


def test_the_frozen_program_passes_its_smoke_test(bundle: Path, tmp_path: Path, secret_service: dict[str, str]) -> None:
    done = subprocess.run(
        [str(bundle / "coxswain"), "--home", str(tmp_path / "home"), "--port", "0", "--smoke-test"],
        env={**os.environ, **secret_service, **OFFSCREEN},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "smoke test passed" in done.stdout and "keyring round trip" in done.stdout
    assert (
        subprocess.run([str(bundle / "cox"), "--version"], capture_output=True, text=True).stdout.strip()
        == f"cox {packaging.version()}"
    )


def test_the_frozen_cox_runs_a_request_under_the_bundles_own_runner(app_process: FrozenApp, tmp_path: Path) -> None:
    tools = tmp_path / "bin"  # a PATH with a shell and ps, and no Python
    tools.mkdir()
    for tool in ("sh", "ps", "echo"):
        (tools / tool).symlink_to(shutil.which(tool) or f"/bin/{tool}")
    app = app_process.start(
        {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", "PATH": str(tools)}
    )
    sent = app.cox("request", "--agent", "shell", "echo hello from the bundle; ps -o args= -p $PPID")
    assert sent.returncode == 0, sent.stderr
    done = app.wait_state(sent.stdout.strip(), "done")
    lines = str(done["result"]).splitlines()
    assert lines[0] == "hello from the bundle"
    assert lines[1].startswith(f"{app.bundle / 'coxswain'} --coxswain-runner "), "the bundle re-entered as the runner"


def test_the_frozen_relay_carries_an_agents_question(
    app_process: FrozenApp, agent_env: dict[str, str], tmp_path: Path
) -> None:
    app = app_process.start({**os.environ, **agent_env, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"})
    (tmp_path / "project").mkdir()
    assert (
        app.api.post(
            "/api/agents", json={"name": "claude", "runtime": "claude", "folder": str(tmp_path / "project")}
        ).status_code
        == 201
    )
    row = app.api.post("/api/requests", json={"agent": "claude", "prompt": "ASK Shall I deploy?"}).json()
    deadline = time.monotonic() + 90
    while (shown := app.api.get(f"/api/requests/{row['id']}").json())["question"] is None:
        assert time.monotonic() < deadline and shown["state"] == "running", shown
        time.sleep(0.2)
    relays = [
        p.info["cmdline"]
        for p in psutil.process_iter(["cmdline"])
        if "--coxswain-mcp-relay" in (p.info["cmdline"] or []) and str(app.home) in p.info["cmdline"][-1]
    ]
    assert relays and relays[0][0] == str(app.bundle / "coxswain"), "Claude started the bundle itself as the relay"
    assert app.cox("answer", row["id"], "Yes").returncode == 0
    done = app.wait_state(row["id"], "done", timeout=90)
    assert "Yes" in str(done["result"])


def deb_tool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(args), capture_output=True, text=True, timeout=300, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    )


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("apt-get"), reason="installs a .deb: root on Debian (CI)")
def test_the_deb_installs_upgrades_keeping_data_and_removes_cleanly(
    bundle: Path, tmp_path: Path, secret_service: dict[str, str]
) -> None:
    from desktop.store.db import Store
    from desktop.store.schema import MIGRATIONS

    first = built("deb", packaging.deb)
    newer = built("deb-newer", lambda: packaging.deb(f"{packaging.version()}+1"))
    home = tmp_path / "home"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    try:
        installed = deb_tool("apt-get", "install", "-y", str(first))
        assert installed.returncode == 0, installed.stderr
        assert Path("/opt/coxswain/coxswain").exists() and Path("/usr/share/applications/coxswain.desktop").exists()
        assert deb_tool("/usr/bin/cox", "--version").stdout.strip() == f"cox {packaging.version()}"
        real_keyring = {"PATH": env["PATH"], "HOME": env["HOME"], **secret_service, **OFFSCREEN}
        smoke = subprocess.run(
            ["/usr/bin/coxswain", "--home", str(tmp_path / "smoke"), "--port", "0", "--smoke-test"],
            env=real_keyring,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert smoke.returncode == 0 and "smoke test passed" in smoke.stdout, smoke.stderr
        app = FrozenApp(Path("/usr/bin"), home).start({**env})
        sent = app.cox("request", "--agent", "shell", "echo before the upgrade")
        app.wait_state(sent.stdout.strip(), "done")
        app.stop()

        upgraded = deb_tool("apt-get", "install", "-y", str(newer))
        assert upgraded.returncode == 0, upgraded.stderr
        assert f"{packaging.version()}+1" in deb_tool("dpkg-query", "-W", "coxswain").stdout
        app = FrozenApp(Path("/usr/bin"), home).start({**env})
        assert app.api.get(f"/api/requests/{sent.stdout.strip()}").json()["result"] == "before the upgrade"
        app.stop()

        older = tmp_path / "older-home"  # a database an older version left: migrated, with a backup first
        Store(older / "coxswain.db", older / "backups", MIGRATIONS[:2]).close()
        smoke = subprocess.run(
            ["/usr/bin/coxswain", "--home", str(older), "--port", "0", "--smoke-test"],
            env={**env, **OFFSCREEN},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert "smoke test: keyring" in smoke.stderr  # the null keyring; everything else passed
        assert [b.name.split("-")[1] for b in (older / "backups").iterdir()] == ["v2"]
        assert Store(older / "coxswain.db", older / "backups").version == len(MIGRATIONS)
    finally:
        removed = deb_tool("apt-get", "remove", "-y", "coxswain")
    assert removed.returncode == 0, removed.stderr
    assert not Path("/opt/coxswain").exists() and not Path("/usr/bin/cox").exists()
    assert home.exists(), "removal keeps the user's data"


def test_the_windows_installer_builds_and_uninstalls_exactly_what_it_installs(bundle: Path) -> None:
    for tool in ("makensis", "7z"):
        assert shutil.which(tool), f"{tool} is missing: .ci/test-deps installs it"
    installer = built("nsis", lambda: packaging.nsis(fast=True))  # makensis -WX: a warning fails the build
    listing = subprocess.run(["7z", "l", "-slt", str(installer)], capture_output=True, text=True, check=True).stdout
    inside = {m for m in re.findall(r"^Path = (.+)$", listing, re.M)[1:] if not m.startswith("$PLUGINSDIR")}
    payload = {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file() and not p.is_symlink()}
    assert inside == payload | {"uninstall.exe"}
    removes = (BUILD / "nsis" / "uninstall-files.nsh").read_text()
    deleted = {
        line.removeprefix('Delete "$INSTDIR\\').removesuffix('"').replace("\\", "/")
        for line in removes.splitlines()
        if line.startswith("Delete ")
    }
    assert deleted == payload, "the uninstaller removes exactly the installed files"
    assert "RMDir /r" not in removes and "RMDir /r" not in (ROOT / "installer.nsi").read_text()
    defines = (BUILD / "nsis" / "version.nsh").read_text()
    from desktop.platform.autostart import NAME
    from desktop.platform.instance import RUNNING_MUTEX

    assert f'!define MUTEX "{RUNNING_MUTEX}"' in defines and f'!define RUN_VALUE "{NAME}"' in defines
    assert f'!define VERSION "{packaging.version()}"' in defines


def test_the_hosted_ci_workflow_is_valid() -> None:
    workflow = ROOT / "packaging" / "github-workflow.yml"
    checked = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    text = workflow.read_text()
    assert "windows-latest" in text and "macos-latest" in text and "--smoke-test" in text


def test_the_tarball_installs_for_one_user_and_uninstalls_exactly(bundle: Path, tmp_path: Path) -> None:
    import tarfile

    archive = built("tarball", packaging.tarball)
    with tarfile.open(archive) as opened:
        opened.extractall(tmp_path / "unpacked", filter="tar")
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    script = next((tmp_path / "unpacked").glob("coxswain-*/install.sh"))
    installed = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    created = {str(p.relative_to(home)) for p in home.rglob("*") if not p.is_dir() or p.is_symlink()}
    assert {
        ".local/bin/cox",
        ".local/bin/coxswain",
        ".local/share/applications/coxswain.desktop",
        ".local/share/icons/hicolor/scalable/apps/coxswain.svg",
    } <= created
    version = subprocess.run([str(home / ".local/bin/cox"), "--version"], env=env, capture_output=True, text=True)
    assert version.stdout.strip() == f"cox {packaging.version()}"
    (home / ".local" / "share" / "coxswain").mkdir(parents=True)  # the user's data
    removed = subprocess.run(
        ["sh", str(home / ".local/opt/coxswain/uninstall.sh")], env=env, capture_output=True, text=True, timeout=60
    )
    assert removed.returncode == 0, removed.stderr
    left = {str(p.relative_to(home)) for p in home.rglob("*") if not p.is_dir()}
    assert left == set() and (home / ".local" / "share" / "coxswain").is_dir()


def test_the_frozen_cox_makes_the_bundle_start_at_login(bundle: Path, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    subprocess.run([str(bundle / "cox"), "autostart", "on"], env=env, check=True, capture_output=True)
    entry = (tmp_path / "config" / "autostart" / "coxswain.desktop").read_text()
    assert f"Exec={bundle / 'coxswain'}\n" in entry, "the tray app itself, not a Python"
