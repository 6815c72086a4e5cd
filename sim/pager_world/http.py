"""Requests and answers between pager's clients and the fakes, and the transport that carries them.

`Transport` is a `requests` adapter: mounted on the session the GitHub and Telegram clients take, it
hands each request to the fake of its host, in process, the way httpx's `MockTransport` does. Nothing
in pager is patched: the clients send real `requests` calls through their session.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http.client import RemoteDisconnected
from typing import Any
from urllib.parse import parse_qs, urlsplit

import requests
from requests.adapters import BaseAdapter
from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError


@dataclass
class HttpRequest:
    method: str
    url: str
    headers: dict[str, str]
    body: bytes = b""

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    @property
    def query(self) -> dict[str, str]:
        return {k: v[-1] for k, v in parse_qs(urlsplit(self.url).query).items()}

    def json(self) -> Any:
        return json.loads(self.body or b"{}")


@dataclass
class HttpResponse:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        if self.body is None:
            return b""
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


Fake = Callable[[HttpRequest], HttpResponse]


def request_of(method: str, url: str, headers: Any, body: Any) -> HttpRequest:
    raw = body or b""
    return HttpRequest(method or "GET", url, dict(headers or {}), raw.encode() if isinstance(raw, str) else raw)


def _no_answer(how: Any, request: requests.PreparedRequest) -> requests.RequestException:
    if how == "reset":  # the request went out; the connection closed before the answer
        cause = ProtocolError("Connection aborted.", RemoteDisconnected("Remote end closed connection without response"))
        return requests.ConnectionError(cause, request=request)
    if how == "unreachable":  # no connection was ever made
        return requests.ConnectionError(MaxRetryError(None, request.url or "", NewConnectionError(None, "Connection refused")),
                                        request=request)
    return requests.ReadTimeout("no answer in time (fake)", request=request)


class Transport(BaseAdapter):
    """A `requests` transport that hands each request to the fake of its host; a host without one is unreachable."""

    def __init__(self, routes: dict[str, Fake]) -> None:
        super().__init__()
        self.routes = routes  # "https://api.github.com" -> fake

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        parts = urlsplit(request.url)
        fake = self.routes.get(f"{parts.scheme}://{parts.netloc}")
        if fake is None:  # a host the world does not hold: no connection is made (never the real network)
            raise _no_answer("unreachable", request)
        answer = fake(request_of(request.method or "GET", request.url or "", request.headers, request.body))
        if answer.status == 0:  # no answer: as requests raises each way of getting none
            raise _no_answer(answer.body, request)
        response = requests.Response()
        response.status_code = answer.status
        response._content = answer.encoded()
        response.headers.update({"content-type": "application/json", **answer.headers})
        response.url = request.url or ""
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


def session_for(routes: dict[str, Fake]) -> requests.Session:
    """A session whose requests to the given API roots go to the fakes; a request to any other host reaches
    nothing (no connection)."""
    session = requests.Session()
    session.trust_env = False
    transport = Transport(routes)
    for root in ("http://", "https://", *routes):
        session.mount(root, transport)
    return session
