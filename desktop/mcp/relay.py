"""The MCP server an agent CLI starts (`python -S -I relay.py DAEMON_JSON TOKEN_FILE`, or the frozen bundle with
`--coxswain-mcp-relay`): a relay between the CLI's stdio and the daemon's own MCP endpoint (`POST /mcp`, stateless
streamable HTTP), where the tools run. Standard library only, so it is up in a few tens of milliseconds and no CLI
waits on it.

Each message the CLI writes is posted on its own thread (a question may wait for hours while other calls go on).
The daemon's address is read from `daemon.json` before each post, and a post that finds no daemon is made again
until one answers: a daemon restart loses no call (the daemon knows a call it has seen by its id)."""

import json
import sys
import threading
import time
import urllib.error
import urllib.request

RETRY_SECONDS = (0.5, 1, 2, 4, 8)
ENDED = "this request is no longer running"


class Relay:
    def __init__(self, daemon_json: str, token: str) -> None:
        self._daemon_json, self._token = daemon_json, token
        self._out = threading.Lock()
        self._version: str | None = None  # the protocol version the initialize call settled

    def run(self) -> None:
        for line in sys.stdin.buffer:
            if line.strip():
                threading.Thread(target=self.forward, args=(line,), daemon=True).start()

    def forward(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        status, body = self._post(line)
        if status not in (200, 202):  # refused before it reached the MCP server: say why, as JSON-RPC
            if "id" in message:
                self._write(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32001, "message": ENDED if status == 401 else _reason(body)},
                    }
                )
            return
        if not body.strip():
            return  # a notification, accepted
        answer = json.loads(body)
        if message.get("method") == "initialize" and isinstance(answer, dict):
            self._version = (answer.get("result") or {}).get("protocolVersion")
        self._write(answer)

    def _post(self, line: bytes) -> tuple[int, bytes]:
        attempt = 0
        while True:
            headers = {
                "Authorization": f"Bearer {self._token}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "X-Coxswain-Relay": "1",
            }
            if self._version:
                headers["MCP-Protocol-Version"] = self._version
            try:
                with open(self._daemon_json) as f:
                    url = json.load(f)["url"] + "/mcp"
                request = urllib.request.Request(url, data=line, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=None) as response:
                    return response.status, response.read()
            except urllib.error.HTTPError as error:
                if error.code >= 500 or error.code == 421:
                    pass  # the daemon is starting or stopping: try again
                else:
                    return error.code, error.read()
            except (OSError, ValueError, KeyError):
                pass  # no daemon right now (restarting): the call stands
            time.sleep(RETRY_SECONDS[min(attempt, len(RETRY_SECONDS) - 1)])
            attempt += 1

    def _write(self, message: object) -> None:
        data = json.dumps(message, separators=(",", ":")) + "\n"
        with self._out:
            sys.stdout.write(data)
            sys.stdout.flush()


def _reason(body: bytes) -> str:
    try:
        return str(json.loads(body)["error"])
    except (ValueError, KeyError, TypeError):
        return body.decode(errors="replace")[:500]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: relay.py DAEMON_JSON TOKEN_FILE\n")
        return 2
    with open(argv[2]) as f:
        token = f.read().strip()
    Relay(argv[1], token).run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
