"""Fixtures: a local HTTP server, a private cache folder (the offline mirror's fixture is in tests/conftest.py)."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]


class FileServer:
    """Serves ``files[path] = bytes`` on 127.0.0.1 and records every request.

    ``truncate`` holds paths whose body is cut in half while the header
    announces the full length; ``fail_first`` holds paths that answer 503
    to their first request; ``no_length`` holds paths served without a
    ``Content-Length`` header (the body ends when the connection closes, so
    a short body looks complete to the client).
    """

    def __init__(self):
        self.files, self.truncate, self.fail_first, self.no_length = {}, set(), set(), set()
        self.requests = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                server.requests.append(self.path)
                body = server.files.get(self.path)
                if body is None:
                    self.send_error(404)
                    return
                if self.path in server.fail_first:
                    server.fail_first.discard(self.path)
                    self.send_error(503)
                    return
                self.send_response(200)
                if self.path in server.no_length:
                    self.end_headers()
                    self.wfile.write(body)
                    self.close_connection = True
                    return
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path in server.truncate:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self.base = f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def url(self, path):
        return self.base + path

    def stop(self):
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()


@pytest.fixture
def http_server():
    server = FileServer()
    yield server
    server.stop()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A private cache; the mirror variable is cleared so nothing leaks in."""
    monkeypatch.delenv("QS3ORAO_DATA_MIRROR", raising=False)
    monkeypatch.delenv("QS3ORAO_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def real_cache(tmp_path_factory):
    """One cache shared by the real-data tests, so each file is parsed once."""
    return tmp_path_factory.mktemp("real-cache")
