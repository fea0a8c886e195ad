"""A scripted fake model server on 127.0.0.1 for driving the real agent CLIs offline.
`python -m tests.fakes.model.server --log FILE` prints `port N` when it listens; every request is logged as a JSON line.
"""

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.fakes.model import anthropic, gemini, openai_chat, openai_responses

DELAY = re.compile(r"DELAY (\d+(?:\.\d+)?)")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "FakeModelServer"

    def log_message(self, *_: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self.server.record({"method": "HEAD", "path": self.path})
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.server.record({"method": "GET", "path": self.path})
        self._json(404, {"error": "not here"})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("content-length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {"unparsed": raw.decode(errors="replace")}
        self.server.record(
            {
                "method": "POST",
                "path": self.path,
                "body": body,
                "at": time.time(),
                "headers": {k.lower(): v for k, v in self.headers.items()},
            }
        )
        delay = DELAY.search(raw.decode(errors="replace"))
        if delay:
            time.sleep(float(delay[1]))
        path = self.path.split("?")[0]
        if path.endswith("/v1/messages"):
            self._anthropic(body)
        elif path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            status, message = openai_chat.reply(body)
            if status != 200:
                self._json(status, message)
            elif body.get("stream"):
                chunks = openai_chat.as_chunks(message, body.get("model", "fake"))
                self._sse([*(f"data: {json.dumps(chunk)}\n\n" for chunk in chunks), "data: [DONE]\n\n"])
            else:
                self._json(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "model": body.get("model"),
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                    },
                )
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            status, answer = gemini.reply(body)
            if status == 200 and ":stream" in path:
                self._sse(iter([f"data: {json.dumps(answer)}\n\n"]))
            else:
                self._json(status, answer)
        else:
            self._json(404, {"error": f"the fake model does not serve {path}"})

    def _anthropic(self, body: dict[str, Any]) -> None:
        model = body.get("model", "fake")
        status, error, blocks = anthropic.reply(body)
        if error is not None:
            self._json(status, error)
        elif body.get("stream"):
            events = [
                f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in anthropic.as_events(blocks, model)
            ]
            if anthropic.wants_cut(body):
                events = events[: len(events) // 2]  # the stream breaks: no message_stop ever comes
            self._sse(events)
        else:
            self._json(200, anthropic.as_json(blocks, model))

    def _responses(self, body: dict[str, Any]) -> None:
        status, error, items = openai_responses.reply(body)
        if error is not None:
            self._json(status, error)
        else:
            events = openai_responses.as_events(items, body.get("model", "fake"))
            self._sse(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)

    def _json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _sse(self, chunks: Any) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(chunk.encode())
            self.wfile.flush()
        self.close_connection = True


class FakeModelServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, log: Path, port: int = 0) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.log_path = log
        self._lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock, open(self.log_path, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def requests(self) -> list[dict[str, Any]]:
        if not self.log_path.exists():
            return []
        return [json.loads(line) for line in self.log_path.read_text().splitlines()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = FakeModelServer(Path(args.log), args.port)
    print(f"port {server.port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
