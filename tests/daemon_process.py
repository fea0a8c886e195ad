"""A real `cox daemon` process in a temporary home, driven over HTTP and through the real `cox` command."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

COX = [sys.executable, "-m", "desktop.cli"]


class DaemonProcess:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""

    def start(self, timeout: float = 15.0, env: dict[str, str] | None = None) -> "DaemonProcess":
        self.env = env or {}
        (self.home / "daemon.json").unlink(missing_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        self.log = open(self.home / "daemon.out", "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [*COX, "--home", str(self.home), "daemon", "--port", "0"],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, ValueError):
                info = json.loads((self.home / "daemon.json").read_text())
                if info["pid"] == self.proc.pid:
                    self.url = info["url"]
                    self.token = (self.home / "owner.token").read_text().strip()
                    self.http = httpx.Client(
                        base_url=self.url, timeout=30, headers={"Authorization": f"Bearer {self.token}"}
                    )
                    return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.proc.returncode}: {self.output()}")
            time.sleep(0.02)
        raise TimeoutError(f"daemon did not start: {self.output()}")

    def output(self) -> str:
        return (self.home / "daemon.out").read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int | None:
        if self.proc is None:
            return None
        with contextlib.suppress(ProcessLookupError):
            self.proc.send_signal(sig)
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self.proc = None
        self.log.close()
        with contextlib.suppress(AttributeError):
            self.http.close()
        return code

    def kill_runners(self) -> None:
        kill_runners(self.home)

    # --- HTTP helpers ---------------------------------------------------------------------------------------

    def get(
        self, path: str, token: str | None = None, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        return self.http.get(path, headers=self._headers(token, headers), **kwargs)

    def post(
        self,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        return self.http.post(path, json={} if body is None else body, headers=self._headers(token, headers), **kwargs)

    def _headers(self, token: str | None, extra: dict[str, str] | None) -> dict[str, str]:
        return {**({"Authorization": f"Bearer {token}"} if token else {}), **(extra or {})}

    def request(self, prompt: str, agent: str = "shell", token: str | None = None) -> dict[str, Any]:
        response = self.post("/api/requests", {"agent": agent, "prompt": prompt}, token)
        assert response.status_code == 201, response.text
        result: dict[str, Any] = response.json()
        return result

    def show(self, request_id: str) -> dict[str, Any]:
        response = self.get(f"/api/requests/{request_id}")
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    def newest_request(self, timeout: float = 20.0) -> dict[str, Any]:
        """The newest request, once one exists (a page's Send returns before its POST has landed)."""
        deadline = time.monotonic() + timeout
        while not (rows := self.get("/api/requests").json()):
            assert time.monotonic() < deadline, "no request arrived"
            time.sleep(0.02)
        newest: dict[str, Any] = rows[0]
        return newest

    def wait_state(self, request_id: str, *states: str, timeout: float = 20.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            row = self.show(request_id)
            if row["state"] in states:
                return row
            if time.monotonic() > deadline:
                raise AssertionError(f"{request_id} is {row['state']}, not {states}: {row}")
            time.sleep(0.02)

    def add_person(self, name: str) -> str:
        response = self.post("/api/people", {"name": name})
        assert response.status_code == 201, response.text
        return str(response.json()["token"])

    def add_agent(self, name: str, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        response = self.post("/api/agents", {"name": name, "runtime": "shell", "folder": str(folder)})
        assert response.status_code == 201, response.text

    def cox(self, *args: str, token: str | None = None, check: bool = False) -> subprocess.CompletedProcess[str]:
        env = {**os.environ}
        env.pop("COX_TOKEN", None)
        if token:
            env["COX_TOKEN"] = token
        done = subprocess.run(
            [*COX, "--home", str(self.home), *args], capture_output=True, text=True, env=env, timeout=60
        )
        if check:
            assert done.returncode == 0, done.stderr
        return done


def kill_runners(home: Path) -> None:
    """End every runner and command a home started, by the process groups and PIDs they recorded (the work is
    meant to outlive its daemon; a test's must not outlive the test)."""
    for runner_json in (home / "tasks").glob("*/runner.json"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            info = json.loads(runner_json.read_text())
            if "pgid" in info:
                os.killpg(info["pgid"], signal.SIGKILL)
            if not (runner_json.parent / "exit.json").exists():
                os.kill(info["runner_pid"], signal.SIGKILL)


# Codex hides MCP tools behind its tool search for models it knows; the fake model does not search
CLI_OPTIONS: dict[str, dict[str, str]] = {
    "claude": {},
    "codex": {"model": "fake-model"},
    "gemini": {"model": "gemini-2.5-pro"},
    "copilot": {},
}


def with_cli_agent(
    make_daemon: "type[DaemonProcess]", tmp_path: Path, agent_env: dict[str, str], name: str, runtime: str
) -> DaemonProcess:
    """A daemon driving the real agent CLIs against the fake model, with an agent `name` of `runtime` working in
    tmp_path/project."""
    daemon = make_daemon(tmp_path / "home").start(env=agent_env)
    (tmp_path / "project").mkdir()
    answer = daemon.post(
        "/api/agents", {"name": name, "runtime": runtime, "folder": str(tmp_path / "project"), **CLI_OPTIONS[runtime]}
    )
    assert answer.status_code == 201, answer.text
    return daemon
