"""The tray app for real, offscreen: `--smoke-test` starts the daemon in the app's process on the qasync loop,
checks that the API answers the owner, that the keyring keeps and gives back a secret, and that the tray shows."""

import os
import subprocess
import sys
from pathlib import Path

from desktop.gui.summary import summarize

APP = [sys.executable, "-m", "desktop.gui.app"]


def smoke(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*APP, "--home", str(tmp_path / "home"), "--port", "0", "--smoke-test"],
        env={**os.environ, **env, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_smoke_test_passes_with_a_real_keyring(tmp_path: Path, secret_service: dict[str, str]) -> None:
    done = smoke(tmp_path, secret_service)
    assert done.returncode == 0, done.stderr
    assert "smoke test passed" in done.stdout and "keyring round trip" in done.stdout and "'idle'" in done.stdout
    assert not (tmp_path / "home" / "daemon.json").exists(), "the daemon stopped cleanly"


def test_the_smoke_test_fails_in_words_without_a_keyring(tmp_path: Path) -> None:
    done = smoke(tmp_path, {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"})
    assert done.returncode == 1
    assert "smoke test: keyring: no secure keyring is available" in done.stderr


def test_the_tray_sums_up_what_runs_and_what_waits() -> None:
    from datetime import date

    today = date(2026, 11, 29)
    requests = [
        {"id": "R20261129-07", "state": "running", "agent": "api", "requester": "sarah", "progress": 60.0},
        {"id": "R20261129-08", "state": "pending", "agent": "web", "requester": "tom", "progress": None},
        {"id": "R20261128-03", "state": "done", "agent": "api", "requester": "owner", "progress": 100.0},
    ]
    summary = summarize(requests, today=today)
    assert (summary.state, summary.waiting, summary.progress) == ("waiting", 1, 60.0)
    assert summary.tooltip.splitlines() == [
        "Coxswain: 1 waiting · 1 running",
        "R-08 · web · tom · waiting for approval",
        "R-07 · api · sarah · 60%",
    ]
    assert summarize(requests[:1], today=today).state == "running"
    assert summarize([], failed_unseen=True, today=today).state == "failed"
    assert summarize(requests, paused=True, today=today).state == "paused"
    assert summarize([], today=today).tooltip == "Coxswain: nothing running"


def test_start_at_login_writes_an_xdg_autostart_entry_that_starts_the_tray(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config")}
    cox = [sys.executable, "-m", "desktop.cli"]
    assert "does not start" in subprocess.run([*cox, "autostart"], env=env, capture_output=True, text=True).stdout
    subprocess.run([*cox, "autostart", "on"], env=env, check=True, capture_output=True)
    entry = (tmp_path / "config" / "autostart" / "coxswain.desktop").read_text()
    exec_line = next(line for line in entry.splitlines() if line.startswith("Exec="))
    assert exec_line == f"Exec={sys.executable} -m desktop.gui.app" and "Type=Application" in entry
    assert "starts at login" in subprocess.run([*cox, "autostart"], env=env, capture_output=True, text=True).stdout
    # what the entry starts really is the tray app: its own smoke test, through the same command line
    started = subprocess.run(
        [*exec_line.removeprefix("Exec=").split(), "--home", str(tmp_path / "home"), "--port", "0", "--smoke-test"],
        env={**env, "QT_QPA_PLATFORM": "offscreen", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "smoke test: keyring" in started.stderr  # it ran the app's checks (no keyring here, so it says so)
    subprocess.run([*cox, "autostart", "off"], env=env, check=True, capture_output=True)
    assert not (tmp_path / "config" / "autostart" / "coxswain.desktop").exists()


def test_a_second_launch_asks_the_first_to_come_forward_and_exits(tmp_path: Path) -> None:
    import signal
    import time

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    home = tmp_path / "home"
    first = subprocess.Popen(
        [*APP, "--home", str(home), "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (home / "daemon.json").exists():
            assert first.poll() is None and time.monotonic() < deadline, "the first launch did not start"
            time.sleep(0.05)
        second = subprocess.run(
            [*APP, "--home", str(home), "--port", "0"], env=env, capture_output=True, text=True, timeout=60
        )
        assert second.returncode == 0 and "already running" in second.stdout
        assert first.stdout is not None
        said = [first.stdout.readline() for _ in range(3)]  # starting, running, then what the second launch did
        assert said[2] == "another launch asked for Coxswain: console shown\n", said
        first.send_signal(signal.SIGTERM)
        first.communicate(timeout=30)
        assert first.returncode == 0
        assert not (home / "daemon.json").exists(), "the first stopped its daemon cleanly"
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()


def test_quit_leaves_tasks_running_and_the_next_start_picks_them_up(tmp_path: Path) -> None:
    import json
    import time

    import httpx

    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    home = tmp_path / "home"

    def launch() -> tuple[subprocess.Popen[str], httpx.Client]:
        app = subprocess.Popen(
            [*APP, "--home", str(home), "--port", "0"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert app.stdout is not None
        while "is running" not in app.stdout.readline():
            assert app.poll() is None, "the tray app did not start"
        url = json.loads((home / "daemon.json").read_text())["url"]
        token = (home / "owner.token").read_text().strip()
        return app, httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"})

    first, api = launch()
    task = api.post("/api/tasks", json={"agent": "shell", "command": "sleep 3; echo survived the quit"}).json()
    first.terminate()  # Quit
    first.communicate(timeout=30)
    assert first.returncode == 0 and not (home / "daemon.json").exists()
    time.sleep(4)  # the task ends while no Coxswain runs

    second, api = launch()
    try:
        deadline = time.monotonic() + 30
        while (shown := api.get(f"/api/tasks/{task['id']}").json())["state"] != "ended":
            assert time.monotonic() < deadline, shown
            time.sleep(0.1)
        assert shown["outcome"] == "completed" and shown["exit_code"] == 0
        assert api.get(f"/api/tasks/{task['id']}/output").json()["lines"] == ["survived the quit"]
    finally:
        second.terminate()
        second.communicate(timeout=30)


def test_a_home_served_by_a_headless_daemon_is_refused_in_words(tmp_path: Path) -> None:
    from tests.daemon_process import DaemonProcess

    daemon = DaemonProcess(tmp_path / "home").start()
    try:
        done = subprocess.run(
            [*APP, "--home", str(tmp_path / "home"), "--port", "0"],
            capture_output=True,
            text=True,
            env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
            timeout=60,
        )
    finally:
        daemon.stop()
    assert done.returncode == 1
    assert done.stderr.strip().endswith(
        f"Coxswain cannot start: a Coxswain daemon is already running for {tmp_path / 'home'}"
    )
