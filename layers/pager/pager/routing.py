"""A request at the edge: an API Gateway event read once, and a webhook delivery from GitHub verified against
its signature and parsed.

`Request.from_apigw` turns whatever the function is given into a request of the API Gateway HTTP API (payload
2.0: its method, path, headers and the body's bytes) or raises `BadRequest` (400) saying what is wrong with
it; `Delivery.from_apigw` turns one of POST /github into a verified delivery or raises a typed error
(`BadSignature` 401, `BadRequest` 400). Nothing past them sees the raw event, its headers or its body, and
no text past them holds what no client can send (a lone surrogate: Python's strings can hold one, a JSON
`"\\ud800"` escape makes one, but no encoding sends one, and every write of it, to a log line or a socket,
fails). What acts on a delivery is the table of `pager.signals`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from .errors import BadRequest, BadSignature
from .values import field, integer, text


@dataclass(frozen=True)
class Repository:
    """A repository as pager keys its records: by its id, which a rename or a transfer keeps. The name is
    what GitHub calls it now: messages show it, calls use it."""

    id: int
    name: str


@dataclass(frozen=True)
class Request:
    """A request of the API Gateway HTTP API (payload 2.0), read at the edge: its method and path, its headers
    (names in lower case) and its body as the bytes that were sent; all of it text a client can send."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    @classmethod
    def from_apigw(cls, event: Any) -> Request:
        """Read an event as API Gateway sends it (docs.aws.amazon.com, "Working with AWS Lambda proxy
        integrations for HTTP APIs", payload format 2.0), or raise BadRequest (400) naming what it lacks: an
        object with `requestContext.http.method`, `requestContext.stage` and `rawPath` as text, headers as
        names and values of text (none: no headers), a body of text (none: empty), `isBase64Encoded` true or
        false (none: false) and, when true, a body in base64; none of it text no client can send."""
        if not isinstance(event, Mapping):
            raise BadRequest("not an API Gateway request")
        method, stage = field(event, "requestContext", "http", "method"), field(event, "requestContext", "stage")
        path = event.get("rawPath")
        if not (isinstance(method, str) and isinstance(stage, str) and isinstance(path, str)):
            raise BadRequest("not an API Gateway request: no method, stage or path")
        if not (sendable(method) and sendable(stage) and sendable(path)):
            raise BadRequest("the method or path holds text no client can send")
        return cls(method, path, _headers(event.get("headers")), raw_body(event))


@dataclass(frozen=True)
class Delivery:
    """A verified webhook delivery: the event's guid, kind, action and parsed payload."""

    guid: str
    event: str
    payload: dict[str, Any]

    @classmethod
    def from_apigw(cls, event: Any, *, secret: str) -> Delivery:
        """Verify and parse an API Gateway HTTP API (payload 2.0) event of POST /github (`Request.from_apigw`,
        then `from_request`)."""
        return cls.from_request(Request.from_apigw(event), secret=secret)

    @classmethod
    def from_request(cls, request: Request, *, secret: str) -> Delivery:
        """Verify and parse a request of POST /github.

        Raises BadSignature (401) for a missing or wrong `X-Hub-Signature-256`, BadRequest (400) for
        missing GitHub headers or a body that is not JSON. The signature is checked over the raw body
        bytes, before anything reads them."""
        headers, raw = request.headers, request.body
        signature = headers.get("x-hub-signature-256", "")
        if not signature:
            raise BadSignature("missing X-Hub-Signature-256")
        if not verify_signature(raw, signature, secret):
            raise BadSignature("X-Hub-Signature-256 does not match the body")
        guid = headers.get("x-github-delivery", "").strip()
        kind = headers.get("x-github-event", "").strip()
        if not guid or not kind:
            raise BadRequest("missing X-GitHub-Event or X-GitHub-Delivery")
        if headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            form = urllib.parse.parse_qs(raw.decode("utf-8", "replace"))
            text = (form.get("payload") or [""])[0]
        else:
            text = raw.decode("utf-8", "replace")
        return cls(guid=guid, event=kind, payload=json_object(text))

    @property
    def action(self) -> str | None:
        action = self.payload.get("action")
        return action if isinstance(action, str) else None

    @property
    def repository(self) -> str:
        return text(field(self.payload, "repository", "full_name"))

    @property
    def repository_id(self) -> int | None:
        return integer(field(self.payload, "repository", "id")) or None

    @property
    def repo(self) -> Repository | None:
        """The repository the event is about (None: a payload without one, or without its id)."""
        repository_id = self.repository_id
        return Repository(repository_id, self.repository) if repository_id and self.repository else None

    @property
    def installation_id(self) -> int | None:
        return integer(field(self.payload, "installation", "id")) or None


# An escape of a surrogate in JSON text: only a body with one may hold a lone surrogate once read (most have none).
ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def json_object(text: str | bytes) -> dict[str, Any]:
    """A request body parsed as a JSON object, or BadRequest (400) saying why not. A string holding a lone
    surrogate (an escape such as `"\\ud800"` without its pair, which `json.loads` takes) is refused like text
    that is not JSON: I-JSON (RFC 7493, 2.1) forbids it, and nothing could log or send it on."""
    try:
        if isinstance(text, bytes):  # read as json.loads reads bytes: a surrogate's three UTF-8 bytes make one
            text = text.decode(json.detect_encoding(text), "surrogatepass")
        whole = sendable(text)
        value = json.loads(text)
        if whole and "\\" in text and ESCAPED_SURROGATE.search(text):  # memchr first: most bodies escape little
            whole = sendable(json.dumps(value, ensure_ascii=False))
    except RecursionError:
        raise BadRequest("body nests too deeply") from None
    except ValueError:
        raise BadRequest("body is not JSON") from None
    if not isinstance(value, dict):
        raise BadRequest("body is not a JSON object")
    if not whole:
        raise BadRequest("body is not JSON a client can send: a string holds a lone surrogate")
    return value


def raw_body(event: Mapping[str, Any]) -> bytes:
    """The request body as the bytes that were sent (API Gateway base64-encodes non-JSON bodies); BadRequest
    (400) for a body that is not text, not base64 where `isBase64Encoded` says it is, or holds text no client
    can send, and for an `isBase64Encoded` that is neither true nor false."""
    body, encoded = event.get("body"), event.get("isBase64Encoded")
    if body is None:
        body = ""
    if not isinstance(body, str):
        raise BadRequest("body is not text")
    if encoded is not None and not isinstance(encoded, bool):
        raise BadRequest("isBase64Encoded is neither true nor false")
    if encoded:
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("body is not valid base64") from None
    try:
        return body.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequest("body holds text no client can send") from None


def sendable(text: str) -> bool:
    """Whether a client could have sent this text: it encodes (as UTF-8), so it holds no lone surrogate."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _headers(given: Any) -> dict[str, str]:
    """A request's headers, names in lower case (API Gateway's payload 2.0 sends them so, a repeated one joined
    with commas); BadRequest (400) for headers that are not names and values of text, or hold text no client
    can send (the reason names the header when its name can be written)."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise BadRequest("headers are not names and values")
    headers = {}
    for name, value in given.items():
        if not (isinstance(name, str) and isinstance(value, str)):
            _refuse_headers(given)
        headers[name.lower()] = value
    try:  # all of them encoded at once, as given (a name repeated in another case holds its own value)
        "".join(name + value for name, value in given.items()).encode("utf-8")
    except UnicodeEncodeError:
        _refuse_headers(given)
    return headers


def _refuse_headers(given: Mapping[Any, Any]) -> NoReturn:
    """Raise BadRequest naming the first header that is not text a client can send."""
    for name, value in given.items():
        if not isinstance(name, str) or not sendable(name):
            raise BadRequest("a header's name is not text a client can send")
        if not isinstance(value, str):
            raise BadRequest(f"header {name[:64]} is not text")
        if not sendable(value):
            raise BadRequest(f"header {name[:64]} holds text no client can send")
    raise BadRequest("headers hold text no client can send")


def verify_signature(raw: bytes, signature: str, secret: str) -> bool:
    """`sha256=<hex HMAC-SHA256 of raw>`, compared in constant time."""
    expected = "sha256=" + hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.strip().encode("utf-8", "replace"))
