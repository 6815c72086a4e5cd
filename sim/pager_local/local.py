"""pager on this machine: its endpoints over HTTP on loopback, DynamoDB embedded, and the sweep on a timer.

`PagerServer` turns each HTTP request into the API Gateway HTTP API event (payload 2.0) that AWS
would hand to `functions/webhook/app.py:lambda_handler`, and answers with what the handler returns.
`FakeServer` serves a fake GitHub or Telegram of `pager_world` over HTTP on loopback.
`embedded_dynamodb()` starts moto's server in this process, so the same boto3 code path as on AWS
talks to a table on loopback.
"""

from __future__ import annotations

import base64
import contextlib
import importlib.util
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pager_world.events import LambdaContext, apigw_event
from pager_world.http import Fake, HttpRequest

ROOT = Path(__file__).resolve().parents[2]


def load_handler(function: str) -> Callable[[dict[str, Any], Any], Any]:
    """`lambda_handler` of functions/<function>/app.py, loaded as Lambda loads it."""
    spec = importlib.util.spec_from_file_location(f"pager_{function}_function", ROOT / "functions" / function / "app.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.lambda_handler


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def _serve(answer: Callable[[str, str, dict[str, str], bytes], tuple[int, dict[str, str], bytes]], port: int) -> _Server:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            status, headers, data = answer(self.command, self.path, dict(self.headers.items()), body)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any

        def log_message(self, *args: Any) -> None:  # quiet: pager logs each delivery itself
            pass

    server = _Server(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class PagerServer:
    """POST /github and POST /telegram on loopback, through the real webhook lambda_handler."""

    def __init__(self, port: int = 0) -> None:
        self.handler = load_handler("webhook")
        self.port = port or free_port()
        self.server: _Server | None = None

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        event = apigw_event(method, path.split("?", 1)[0], headers, body)
        result = self.handler(event, LambdaContext("WebhookFunction"))
        data = result.get("body") or ""
        raw = base64.b64decode(data) if result.get("isBase64Encoded") else data.encode()
        return result.get("statusCode", 200), dict(result.get("headers") or {}), raw

    def start(self) -> PagerServer:
        self.server = _serve(self.answer, self.port)
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()


class FakeServer:
    """A fake GitHub or Telegram served over HTTP on loopback."""

    def __init__(self, fake: Fake, port: int = 0) -> None:
        self.fake = fake
        self.port = port or free_port()
        self.server: _Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, str], bytes]:
        reply = self.fake(HttpRequest(method, self.url + path, headers, body))
        return reply.status, {"content-type": "application/json", **reply.headers}, reply.encoded()

    def start(self) -> FakeServer:
        self.server = _serve(self.answer, self.port)
        return self

    def stop(self) -> None:
        if self.server:
            self.server.shutdown()
            self.server.server_close()


@contextlib.contextmanager
def embedded_dynamodb(table: str) -> Iterator[str]:
    """moto's server in this process with pager's table created; yields its endpoint URL."""
    import boto3
    from moto.server import ThreadedMotoServer

    from pager.dynamo import create_table

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # its server's line per request is not pager's to show
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1",
                              aws_access_key_id="local", aws_secret_access_key="local")
        create_table(client, table)
        yield endpoint
    finally:
        server.stop()
