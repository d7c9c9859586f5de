"""Fixtures shared by the HTTP-layer tests (test_http.py, test_replay.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

HOST = "127.0.0.1"


@pytest.fixture
def dribbling() -> Iterator[str]:
    """A server that sends its headers at once, then one body byte every 0.1 s for 3 s."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "30")
            self.end_headers()
            for _ in range(30):
                try:
                    self.wfile.write(b"x")
                    self.wfile.flush()
                except OSError:
                    return  # the client gave up
                time.sleep(0.1)

        def log_message(self, format: str, *args: object) -> None:
            del format, args

    server = ThreadingHTTPServer((HOST, 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield f"http://{HOST}:{server.server_address[1]}/slow"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
