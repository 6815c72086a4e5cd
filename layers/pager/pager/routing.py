"""A webhook delivery from GitHub: verified against its signature and parsed, at the edge.

`Delivery.from_apigw` turns an API Gateway HTTP API event (payload 2.0) into a verified delivery or
raises a typed error (`BadSignature` 401, `BadRequest` 400); nothing past it sees raw headers. What
acts on a delivery is the table of `pager.signals`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import BadRequest, BadSignature
from .values import field, integer, text


@dataclass(frozen=True)
class Repository:
    """A repository as pager keys its records: by its id, which a rename or a transfer keeps. The name is
    what GitHub calls it now: messages show it, calls use it."""

    id: int
    name: str


@dataclass(frozen=True)
class Delivery:
    """A verified webhook delivery: the event's guid, kind, action and parsed payload."""

    guid: str
    event: str
    payload: dict[str, Any]

    @classmethod
    def from_apigw(cls, event: Mapping[str, Any], *, secret: str) -> Delivery:
        """Verify and parse an API Gateway HTTP API (payload 2.0) event of POST /github.

        Raises BadSignature (401) for a missing or wrong `X-Hub-Signature-256`, BadRequest (400) for
        missing GitHub headers or a body that is not JSON. The signature is checked over the raw body
        bytes, before anything reads them."""
        headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
        raw = raw_body(event)
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


def json_object(text: str | bytes) -> dict[str, Any]:
    """A request body parsed as a JSON object, or BadRequest (400) saying why not."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise BadRequest("body nests too deeply") from None
    except ValueError:
        raise BadRequest("body is not JSON") from None
    if not isinstance(value, dict):
        raise BadRequest("body is not a JSON object")
    return value


def raw_body(event: Mapping[str, Any]) -> bytes:
    """The request body as the bytes that were sent (API Gateway base64-encodes non-JSON bodies)."""
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest("body is not valid base64") from None
    return body.encode("utf-8")


def verify_signature(raw: bytes, signature: str, secret: str) -> bool:
    """`sha256=<hex HMAC-SHA256 of raw>`, compared in constant time."""
    expected = "sha256=" + hmac.new(secret.encode("utf-8"), raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), signature.strip().encode("utf-8", "replace"))
