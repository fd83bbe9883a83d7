#!/usr/bin/env python3
"""Test-only fake OpenAI-compatible model server for the CodeCompanion e2e.

Listens on 127.0.0.1 (port chosen by the OS), writes the port to PORT_FILE once listening,
and appends every chat request body, as received, to REQUESTS_FILE (one JSON document per
line). Answers /v1/chat/completions with a fixed reply (SSE chunks when the request asks
for a stream) and /v1/models with one model. Stops when its parent closes stdin.

Usage: fake-model-server.py PORT_FILE REQUESTS_FILE
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLY = "fake model reply"
MODEL = "fake-model"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep the test output clean
        pass

    def _send(self, status, ctype, body):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            body = json.dumps({"object": "list", "data": [{"id": MODEL, "object": "model"}]}).encode()
            return self._send(200, "application/json", body)
        self._send(404, "text/plain", b"not found")

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send(404, "text/plain", b"not found")
        try:
            req = json.loads(raw)
        except ValueError:
            return self._send(400, "text/plain", b"invalid JSON")
        with open(self.server.requests_file, "ab") as f:
            f.write(json.dumps(req, ensure_ascii=False).encode("utf-8") + b"\n")
            f.flush()
            os.fsync(f.fileno())
        if req.get("stream"):
            chunks = [
                {"id": "c1", "object": "chat.completion.chunk", "model": MODEL,
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": REPLY}, "finish_reason": None}]},
                {"id": "c1", "object": "chat.completion.chunk", "model": MODEL,
                 "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {"id": "c1", "object": "chat.completion.chunk", "model": MODEL, "choices": [],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}},
            ]
            body = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"
            return self._send(200, "text/event-stream", body)
        body = json.dumps({
            "id": "c1", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }).encode()
        self._send(200, "application/json", body)


def main():
    port_file, requests_file = sys.argv[1], sys.argv[2]
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.requests_file = requests_file
    open(requests_file, "wb").close()
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.replace(tmp, port_file)  # the port file appears whole, once the socket listens
    threading.Thread(target=lambda: (sys.stdin.read(), srv.shutdown()), daemon=True).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
