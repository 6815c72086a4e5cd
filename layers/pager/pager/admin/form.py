"""The manifest flow's local end: a one-page form on 127.0.0.1 that posts the manifest to GitHub, and the
redirect that brings the code back (GitHub's "Registering a GitHub App from a manifest").

- `GET /` serves the form: `manifest` (the JSON) posted to GitHub's new-app page of the user or of an
  organization, with a random `state` in the form's URL;
- GitHub shows its registration page (the name may be changed there), creates the app and redirects
  the browser to `redirect_url` (`GET /back`) with `code` and the same `state`;
- a redirect whose `state` is not this run's is refused (CSRF: a page elsewhere cannot hand this run
  a code of its own); the first good one is kept and the page says to return to the terminal.

The server listens on 127.0.0.1 only, on a free port the system chooses, and logs nothing (the code
and the state are in the request line).
"""

from __future__ import annotations

import hmac
import html
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pager: register the GitHub App</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}}
button{{font-size:1.1em;padding:.5em 1.2em}}</style></head>
<body><h1>Register the GitHub App “{name}”</h1>
<p>This form hands GitHub the app pager needs: its webhook ({webhook}), the events it subscribes to and
the least permissions its calls need. {owner}</p>
<p>On GitHub's page you may change the name; press <b>Create GitHub App</b> there, and GitHub sends you
back here.</p>
<form action="{action}" method="post">
<input type="hidden" name="manifest" value="{manifest}">
<button type="submit">Continue to GitHub</button>
</form></body></html>
"""

DONE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>pager: done</title></head>
<body style="font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto">
<h1>Done</h1><p>GitHub registered the app. Return to the terminal: <code>make setup</code> goes on there.
You may close this tab.</p></body></html>
"""

REFUSED = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>pager: refused</title></head>
<body><h1>Not this setup's link</h1><p>This redirect does not carry the state of the running
<code>make setup</code>. Start again from the form it opened.</p></body></html>
"""


class ManifestForm:
    """The form and the redirect, served on 127.0.0.1 until `stop()`."""

    def __init__(self, state: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.state = state
        self.page = ""
        self.code: str | None = None
        self.got = threading.Event()
        self._host = host
        self._server = ThreadingHTTPServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self._server.server_address[1]}/"

    @property
    def redirect_url(self) -> str:
        return self.url + "back"

    def show(self, *, action: str, manifest: dict[str, Any], owner: str) -> None:
        """The form's page: the manifest posted to `action` (GitHub's new-app page with the state)."""
        self.page = PAGE.format(
            name=html.escape(str(manifest.get("name", ""))),
            webhook=html.escape(str(manifest.get("hook_attributes", {}).get("url", ""))),
            owner=html.escape(owner),
            action=html.escape(action, quote=True),
            manifest=html.escape(json.dumps(manifest), quote=True),
        )

    def start(self) -> ManifestForm:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def receive(self, query: str) -> tuple[int, str]:
        """The redirect's answer (status, page); keeps the code when the state is this run's."""
        params = {k: v[-1] for k, v in parse_qs(query).items()}
        state, code = params.get("state", ""), params.get("code", "")
        if not code or not hmac.compare_digest(state.encode(), self.state.encode()):
            return 400, REFUSED
        if self.code is None:
            self.code = code
            self.got.set()
        return 200, DONE

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        form = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/" and form.page:
                    status, page = 200, form.page
                elif parts.path == "/back":
                    status, page = form.receive(parts.query)
                else:
                    status, page = 404, "<!doctype html><p>Not found</p>"
                data = page.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.send_header("Referrer-Policy", "no-referrer")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # the request line carries the code and the state
                pass

        return Handler
