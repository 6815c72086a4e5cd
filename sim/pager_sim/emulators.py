"""GitHub and Telegram as pager sees them, emulated in memory.

Each emulator answers an `HttpRequest` with an `HttpResponse` and keeps what a person would look at:
the chat (Telegram), the app's webhook deliveries, dispatches and merges (GitHub). The same object
serves three transports: `responses` callbacks in tests, a `requests` adapter in the in-process
simulator (`EmulatorAdapter`), and a real HTTP server on loopback in the demo.

Faults are injected by rules (`fail(...)`): the next N calls of a method answer a status, such as a
Telegram outage (502), a flood wait (429 with retry_after) or GitHub 5xx.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable
from urllib.parse import parse_qs, urlencode, urlsplit

import requests
from requests.adapters import BaseAdapter


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


@dataclass
class Fault:
    """Answer `status` (and `body`) to the next `count` calls whose path matches `pattern`."""

    pattern: str
    status: int
    count: int = 1
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class _Faulty:
    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.RLock()
        self.requests: list[HttpRequest] = []

    def fail(self, pattern: str, status: int, count: int = 1, body: Any = None, headers: dict[str, str] | None = None) -> Fault:
        fault = Fault(pattern, status, count, body, headers or {})
        with self._lock:
            self._faults.append(fault)
        return fault

    def heal(self) -> None:
        with self._lock:
            self._faults.clear()

    def _fault_for(self, request: HttpRequest) -> HttpResponse | None:
        with self._lock:
            for fault in self._faults:
                if fault.count > 0 and re.search(fault.pattern, request.path):
                    fault.count -= 1
                    if fault.count == 0:
                        self._faults.remove(fault)
                    return HttpResponse(fault.status, fault.body, dict(fault.headers))
        return None

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with self._lock:
            self.requests.append(request)
        faulted = self._fault_for(request)
        if faulted is not None:
            return faulted
        return self.handle(request)

    def handle(self, request: HttpRequest) -> HttpResponse:  # pragma: no cover - abstract
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------- Telegram


@dataclass
class ChatMessage:
    message_id: int
    chat_id: str
    text: str
    buttons: list[list[dict[str, str]]]
    thread_id: int | None = None
    notified: bool = True
    edits: int = 0


class TelegramEmulator(_Faulty):
    """The Bot API methods pager calls, keeping one chat's messages as a person would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: dict[int, ChatMessage] = {}
        self.answers: list[dict[str, Any]] = []
        self._ids = itertools.count(1)

    def handle(self, request: HttpRequest) -> HttpResponse:
        method = request.path.rsplit("/", 1)[-1]
        params = request.json()
        with self._lock:
            if method == "sendMessage":
                message = ChatMessage(next(self._ids), str(params["chat_id"]), params["text"],
                                      _keyboard(params), params.get("message_thread_id"),
                                      not params.get("disable_notification", False))
                self.messages[message.message_id] = message
                return _ok({"message_id": message.message_id, "chat": {"id": params["chat_id"]}, "text": message.text})
            if method in ("editMessageText", "editMessageReplyMarkup"):
                message = self.messages.get(int(params.get("message_id", 0)))
                if message is None:
                    return _tg_error(400, "Bad Request: message to edit not found")
                text = params.get("text", message.text) if method == "editMessageText" else message.text
                buttons = _keyboard(params)
                if text == message.text and buttons == message.buttons:
                    return _tg_error(400, "Bad Request: message is not modified: specified new message content "
                                          "and reply markup are exactly the same as a current content and reply markup of the message")
                message.text, message.buttons = text, buttons
                message.edits += 1
                return _ok({"message_id": message.message_id, "text": text})
            if method == "answerCallbackQuery":
                self.answers.append(params)
                return _ok(True)
            if method == "setWebhook":
                return _ok(True)
        return _tg_error(404, "Not Found")

    def chat(self) -> list[ChatMessage]:
        with self._lock:
            return [self.messages[k] for k in sorted(self.messages)]

    def render(self) -> str:
        """The chat as plain text: each message, its buttons, how often it was edited."""
        lines = []
        for m in self.chat():
            text = re.sub(r"<[^>]+>", "", m.text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
            lines.append(f"[{m.message_id}]" + (" (edited)" if m.edits else "") + " " + text.replace("\n", "\n     "))
            for row in m.buttons:
                lines.append("     " + "  ".join(f"[ {b['text']} ]" for b in row))
        return "\n".join(lines)

    def view(self) -> list[tuple[str, tuple[tuple[str, ...], ...]]]:
        """What the chat shows, comparable between runs (texts and button labels in order)."""
        return [(m.text, tuple(tuple(b["text"] for b in row) for row in m.buttons)) for m in self.chat()]

    def press_update(self, message_id: int, label: str, *, user_id: int, update_id: int, callback_id: str) -> dict[str, Any]:
        """The update Telegram would send when `user_id` presses the button `label` of a message."""
        message = self.messages[message_id]
        data = next(b["callback_data"] for row in message.buttons for b in row if b["text"] == label)
        return {
            "update_id": update_id,
            "callback_query": {
                "id": callback_id,
                "from": {"id": user_id, "is_bot": False, "first_name": "Maintainer"},
                "message": {"message_id": message_id, "chat": {"id": int(message.chat_id)}, "text": message.text},
                "chat_instance": "1",
                "data": data,
            },
        }


def _keyboard(params: dict[str, Any]) -> list[list[dict[str, str]]]:
    markup = params.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [[dict(b) for b in row] for row in markup.get("inline_keyboard", [])]


def _ok(result: Any) -> HttpResponse:
    return HttpResponse(200, {"ok": True, "result": result})


def _tg_error(status: int, description: str, **parameters: Any) -> HttpResponse:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return HttpResponse(status, body)


def telegram_flood(retry_after: int) -> dict[str, Any]:
    """The body of Telegram's 429 (pass to `fail(..., 429, body=...)`)."""
    return {"ok": False, "error_code": 429, "description": f"Too Many Requests: retry after {retry_after}",
            "parameters": {"retry_after": retry_after}}


# ------------------------------------------------------------------------------------------------ GitHub


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitHubEmulator(_Faulty):
    """The REST calls pager makes, and the app's webhook with its list of deliveries.

    `deliver(event, payload)` plays GitHub sending a webhook: it calls `endpoint` (the pager) and
    records the attempt as GitHub would list it (`status_code` 0 and "timed out" when the endpoint
    raises `TimeoutError`). `POST /app/hook/deliveries/{id}/attempts` answers 202 and queues the
    event; `deliver_pending()` delivers it again with the same guid, as GitHub does shortly after. The clock is injected so the simulator's time is virtual."""

    def __init__(self, *, clock: Callable[[], float], endpoint: Callable[[str, str, dict[str, Any], bool], int] | None = None,
                 api_url: str = "https://api.github.com") -> None:
        super().__init__()
        self.clock = clock
        self.endpoint = endpoint
        self.api_url = api_url.rstrip("/")
        self.deliveries: list[dict[str, Any]] = []  # oldest first
        self.payloads: dict[str, tuple[str, dict[str, Any]]] = {}
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.dispatches: list[dict[str, Any]] = []
        self.merges: list[dict[str, Any]] = []
        self.redelivery_requests: list[int] = []
        self.pending: list[str] = []  # guids whose redelivery was asked for, not yet carried out
        self.installations: dict[str, int] = {}
        self._ids = itertools.count(1_000_000)
        self._guids = itertools.count(1)
        self._tokens = itertools.count(1)

    # -- webhook side

    def new_guid(self) -> str:
        return f"00000000-0000-4000-8000-{next(self._guids):012d}"

    def deliver(self, event: str, payload: dict[str, Any], *, guid: str | None = None, redelivery: bool = False) -> dict[str, Any]:
        guid = guid or self.new_guid()
        self.payloads[guid] = (event, payload)
        try:
            code = self.endpoint(guid, event, payload, redelivery) if self.endpoint else 200
            status = "OK" if 200 <= code < 400 else f"Invalid HTTP Response: {code}"
        except TimeoutError:
            code, status = 0, "timed out"
        return self.record(guid, event, payload.get("action"), (payload.get("repository") or {}).get("id"),
                           code, status=status, redelivery=redelivery)

    def record(self, guid: str, event: str, action: str | None, repository_id: int | None, status_code: int, *,
               status: str | None = None, redelivery: bool = False, at: float | None = None) -> dict[str, Any]:
        item = {
            "id": next(self._ids),
            "guid": guid,
            "delivered_at": iso(self.clock() if at is None else at),
            "redelivery": redelivery,
            "duration": 0.05,
            "status": status or ("OK" if 200 <= status_code < 400 else f"Invalid HTTP Response: {status_code}"),
            "status_code": status_code,
            "event": event,
            "action": action,
            "installation_id": 1,
            "repository_id": repository_id,
        }
        with self._lock:
            self.deliveries.append(item)
        return item

    # -- REST side

    def handle(self, request: HttpRequest) -> HttpResponse:
        path, method = request.path, request.method
        if path == "/app/hook/deliveries" and method == "GET":
            return self._list(request)
        if m := re.fullmatch(r"/app/hook/deliveries/(\d+)/attempts", path):
            return self._redeliver(int(m.group(1)))
        if m := re.fullmatch(r"/app/installations/(\d+)/access_tokens", path):
            return HttpResponse(201, {"token": f"ghs_emulated{next(self._tokens)}", "expires_at": iso(self.clock() + 3600)})
        if m := re.fullmatch(r"/repos/([^/]+/[^/]+)/installation", path):
            return HttpResponse(200, {"id": self.installations.get(m.group(1), 1)})
        if m := re.fullmatch(r"/repos/([^/]+/[^/]+)/dispatches", path):
            self.dispatches.append({"repository": m.group(1), **request.json()})
            return HttpResponse(204)
        if m := re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)/merge", path):
            return self._merge(m.group(1), int(m.group(2)), request.json())
        if m := re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", path):
            pull = self.pulls.get((m.group(1), int(m.group(2))))
            return HttpResponse(200, pull) if pull else HttpResponse(404, {"message": "Not Found"})
        return HttpResponse(404, {"message": "Not Found"})

    def _list(self, request: HttpRequest) -> HttpResponse:
        query = request.query
        per_page = min(int(query.get("per_page", 30)), 100)
        with self._lock:
            items = list(reversed(self.deliveries))  # newest first
        if query.get("status") == "failure":
            items = [d for d in items if 400 <= d["status_code"] <= 599]
        elif query.get("status") == "success":
            items = [d for d in items if 200 <= d["status_code"] <= 399]
        if "cursor" in query:
            below = int(base64.urlsafe_b64decode(query["cursor"].encode()).decode())
            items = [d for d in items if d["id"] < below]
        page, rest = items[:per_page], items[per_page:]
        headers = {}
        if rest:
            params = {k: v for k, v in query.items() if k != "cursor"}
            params["cursor"] = base64.urlsafe_b64encode(str(page[-1]["id"]).encode()).decode()
            headers["Link"] = f'<{self.api_url}/app/hook/deliveries?{urlencode(params)}>; rel="next"'
        return HttpResponse(200, page, headers)

    def _redeliver(self, delivery_id: int) -> HttpResponse:
        with self._lock:
            item = next((d for d in self.deliveries if d["id"] == delivery_id), None)
        if item is None:
            return HttpResponse(404, {"message": "Not Found"})
        with self._lock:
            self.redelivery_requests.append(delivery_id)
            self.pending.append(item["guid"])
        return HttpResponse(202, {})

    def deliver_pending(self) -> list[dict[str, Any]]:
        """Carry out the redeliveries asked for (GitHub does it shortly after its 202)."""
        with self._lock:
            guids, self.pending = self.pending, []
        done = []
        for guid in guids:
            event, payload = self.payloads[guid]
            done.append(self.deliver(event, payload, guid=guid, redelivery=True))
        return done

    def _merge(self, repo: str, number: int, body: dict[str, Any]) -> HttpResponse:
        pull = self.pulls.get((repo, number))
        if pull is None:
            return HttpResponse(404, {"message": "Not Found"})
        if pull.get("merged"):
            return HttpResponse(405, {"message": "Pull Request is not mergeable"})
        if body.get("sha") and body["sha"] != pull["head"]["sha"]:
            return HttpResponse(409, {"message": "Head branch was modified. Review and try the merge again."})
        if pull.get("mergeable_state") != "clean":
            return HttpResponse(405, {"message": "Pull Request is not mergeable"})
        sha = hashlib.sha1(f"{repo}#{number}@{pull['head']['sha']}".encode()).hexdigest()
        pull.update(merged=True, state="closed", merge_commit_sha=sha)
        self.merges.append({"repository": repo, "number": number, **body})
        return HttpResponse(200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"})


# ------------------------------------------------------------------------------------------- transports


class EmulatorAdapter(BaseAdapter):
    """A `requests` transport that hands each request to the emulator of its host, in process."""

    def __init__(self, routes: dict[str, Callable[[HttpRequest], HttpResponse]]) -> None:
        super().__init__()
        self.routes = routes  # "https://api.github.com" -> emulator

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        parts = urlsplit(request.url)
        root = f"{parts.scheme}://{parts.netloc}"
        emulator = self.routes[root]
        body = request.body or b""
        answer = emulator(HttpRequest(request.method or "GET", request.url, dict(request.headers),
                                      body.encode() if isinstance(body, str) else body))
        response = requests.Response()
        response.status_code = answer.status
        response._content = answer.encoded()
        response.headers.update({"content-type": "application/json", **answer.headers})
        response.url = request.url
        response.request = request
        response.encoding = "utf-8"
        return response

    def close(self) -> None:
        pass


def session_for(routes: dict[str, Callable[[HttpRequest], HttpResponse]]) -> requests.Session:
    """A session whose requests to the given API roots go to the emulators."""
    session = requests.Session()
    adapter = EmulatorAdapter(routes)
    for root in routes:
        session.mount(root, adapter)
    return session


def responses_callback(emulator: Callable[[HttpRequest], HttpResponse]) -> Callable[[Any], tuple[int, dict[str, str], bytes]]:
    """A `responses` callback that answers through an emulator."""

    def callback(request: Any) -> tuple[int, dict[str, str], bytes]:
        body = request.body or b""
        answer = emulator(HttpRequest(request.method, request.url, dict(request.headers),
                                      body.encode() if isinstance(body, str) else body))
        return answer.status, {"content-type": "application/json", **answer.headers}, answer.encoded()

    return callback
