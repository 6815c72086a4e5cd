"""GitHub as pager sees it: the REST calls it makes, and the app's webhook with its list of deliveries.

Two sides, one object:

- the webhook: `deliver(event, payload)` plays GitHub sending an event to the app's endpoint (a
  callable that answers a status, or raises `TimeoutError` for an answer that did not come in time)
  and records the attempt as GitHub lists it: `status_code` and `status` ("OK", "Invalid HTTP
  Response: 502", "timed out" with status_code 0), `redelivery`, the event's `guid` shared by all its
  attempts. `POST /app/hook/deliveries/{id}/attempts` answers 202 and queues the event;
  `deliver_pending()` delivers it again with the same guid, as GitHub does shortly after.
- the REST API: the deliveries list (newest first, `per_page` at most 100, `status=success|failure`
  filtering 200-399 and 400-599, pages chained by `Link: rel="next"` with an opaque cursor), the
  redelivery, installation tokens, a repository's installation, `repository_dispatch`, a pull
  request and its merge.

Every request goes through the world's `Faults` first. As strict as GitHub, each rule from its docs
(docs.github.com, REST API):

- "Authenticating as a GitHub App": the app's endpoints (`/app/...`, a repository's installation)
  take only the app's JWT (RS256, `iss` the app, at most 10 minutes between `iat` and `exp`, not
  expired); a repository's endpoints take only an installation token of an installation on that
  repository: 401 "A JSON web token could not be decoded" / "Bad credentials" otherwise;
- "Apps: Get a repository installation": 404 where the app is not installed;
- "Repositories: Create a repository dispatch event": `event_type` 1 to 100 characters,
  `client_payload` at most 10 top-level properties, a body over 64 KB: 422;
- "Pulls: Merge a pull request", with `mergeable_state`: clean, unstable and has_hooks merge; behind
  merges unless the base branch requires up-to-date heads; blocked and dirty 405; a `sha` that is not
  the head 409; a merge method the repository does not allow 405;
- "Webhooks: List deliveries for an app webhook": newest first, `per_page` up to 100, `status`
  success (200-399) or failure (400-599), `cursor` from the Link header, 400/422 for a bad one.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import itertools
import json
import re
import threading
from collections import defaultdict
from typing import Any, Callable
from urllib.parse import urlencode

from pager.values import iso

from .faults import Faults, github_error
from .http import HttpRequest, HttpResponse

RETENTION = 3 * 86_400.0  # GitHub lists a delivery for three days

Endpoint = Callable[[str, str, dict[str, Any], bool], int]  # (guid, event, payload, redelivery) -> status


class FakeGitHub:
    """The REST calls pager makes, and the app's webhook with its list of deliveries."""

    def __init__(self, *, clock: Callable[[], float], faults: Faults | None = None, endpoint: Endpoint | None = None,
                 api_url: str = "https://api.github.com", keep_requests: bool = True) -> None:
        self.clock = clock
        self.faults = faults or Faults()
        self.endpoint = endpoint
        self.api_url = api_url.rstrip("/")
        self.keep_requests = keep_requests
        self.requests: list[HttpRequest] = []
        # the webhook's deliveries, oldest first (ids grow with time), and the failures among them
        self.deliveries: list[dict[str, Any]] = []
        self._failures: list[dict[str, Any]] = []
        self._by_id: dict[int, dict[str, Any]] = {}
        self.log: dict[str, list[tuple[float, int, bool]]] = defaultdict(list)  # guid -> (at, status_code, redelivery)
        self.payloads: dict[str, tuple[str, dict[str, Any]]] = {}
        self.pending: list[str] = []  # guids whose redelivery was asked for, not yet carried out
        self.redelivery_requests: list[int] = []
        # the repositories' side
        self.installations: dict[str, int] = {}  # repository -> the app's installation on it
        self.app_id: str | None = None  # when set, the JWT must be issued by this app
        self.tokens: dict[str, tuple[int, float]] = {}  # installation token -> (installation, expires at)
        self.merge_methods: dict[str, set[str]] = {}  # repository -> the merge methods it allows (default: all)
        self.up_to_date_required: set[str] = set()  # repositories whose base branch requires up-to-date heads
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.alerts: dict[tuple[str, int], dict[str, Any]] = {}  # code scanning alerts as GitHub has them
        self.dispatches: list[dict[str, Any]] = []
        self.merges: list[dict[str, Any]] = []
        self.merge_refusal: tuple[int, str] | None = None  # the next merges answer this (status, message)
        self._ids = itertools.count(1_000_000)
        self._guids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._lock = threading.RLock()

    # -- faults

    def fail(self, pattern: str | None, status: int, count: int = 1, body: Any = None,
             headers: dict[str, str] | None = None) -> Any:
        """The next `count` requests whose "METHOD /path" matches `pattern` answer `status`."""
        return self.faults.fail("github", pattern, status=status, count=count, body=body, headers=headers)

    def heal(self) -> None:
        self.faults.heal()

    # -- the webhook

    def new_guid(self) -> str:
        return f"00000000-0000-4000-8000-{next(self._guids):012d}"

    def deliver(self, event: str, payload: dict[str, Any], *, guid: str | None = None,
                redelivery: bool = False) -> dict[str, Any]:
        """Send an event to the endpoint and record the attempt as GitHub lists it."""
        guid = guid or self.new_guid()
        self.payloads[guid] = (event, payload)
        try:
            code = self.endpoint(guid, event, payload, redelivery) if self.endpoint else 200
            status = "OK" if 200 <= code < 400 else f"Invalid HTTP Response: {code}"
        except TimeoutError:
            code, status = 0, "timed out"
        repository = payload.get("repository")
        repository_id = repository.get("id") if isinstance(repository, dict) else None
        return self.record(guid, event, payload.get("action"), repository_id, code, status=status, redelivery=redelivery)

    def record(self, guid: str, event: str, action: str | None, repository_id: int | None, status_code: int, *,
               status: str | None = None, redelivery: bool = False, at: float | None = None) -> dict[str, Any]:
        """One attempt in the list (the webhook's answer, or one put there by a test)."""
        when = self.clock() if at is None else at
        item = {
            "id": next(self._ids),
            "guid": guid,
            "delivered_at": iso(when),
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
            self._by_id[item["id"]] = item
            if 400 <= status_code <= 599:
                self._failures.append(item)
            self.log[guid].append((when, status_code, redelivery))
        return item

    def deliver_pending(self) -> list[dict[str, Any]]:
        """Carry out the redeliveries asked for (GitHub does it shortly after its 202)."""
        with self._lock:
            guids, self.pending = self.pending, []
        done = []
        for guid in guids:
            event, payload = self.payloads[guid]
            done.append(self.deliver(event, payload, guid=guid, redelivery=True))
        return done

    def attempts(self, guid: str) -> list[dict[str, Any]]:
        return [d for d in self.deliveries if d["guid"] == guid]

    def prune(self, now: float) -> None:
        """Forget what GitHub no longer lists (older than three days), and the request log."""
        cut = iso(now - RETENTION)
        with self._lock:
            old = bisect.bisect_left(self.deliveries, cut, key=lambda d: d["delivered_at"])
            for item in self.deliveries[:old]:
                self._by_id.pop(item["id"], None)
            del self.deliveries[:old]
            del self._failures[: bisect.bisect_left(self._failures, cut, key=lambda d: d["delivered_at"])]
            self.requests.clear()

    # -- the REST API

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.keep_requests:
            with self._lock:
                self.requests.append(request)
        fault = self.faults.call("github", f"{request.method} {request.path}")
        if fault is not None and fault.no_answer:
            self.handle(request)  # GitHub acts; its answer is lost on the way back
            return HttpResponse(0)
        if fault is not None:
            return HttpResponse(fault.status, fault.body, dict(fault.headers))
        return self.handle(request)

    def handle(self, request: HttpRequest) -> HttpResponse:
        path = request.path
        refused = self._refuse_credentials(request)
        if refused is not None:
            return refused
        return self._route(request, path, request.method)

    # -- credentials

    def _refuse_credentials(self, request: HttpRequest) -> HttpResponse | None:
        """GitHub's 401/404 for a credential the endpoint does not take (see the module docstring)."""
        path = request.path
        auth = request.headers.get("Authorization") or request.headers.get("authorization") or ""
        credential = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""
        if path.startswith("/app") or re.fullmatch(r"/repos/[^/]+/[^/]+/installation", path):
            return None if self._valid_jwt(credential) else _error(401, "A JSON web token could not be decoded")
        found = re.match(r"/repos/([^/]+/[^/]+)/", path)
        if found:
            installation, expires = self.tokens.get(credential, (None, 0.0))
            if installation is None or expires <= self.clock():
                return _error(401, "Bad credentials")
            if self.installations.get(found.group(1)) != installation:
                return _error(404)  # the installation cannot see that repository
        return None

    def _valid_jwt(self, token: str) -> bool:
        parts = token.split(".")
        if len(parts) != 3:
            return False
        try:
            header, claims = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in parts[:2])
        except ValueError:
            return False
        now = self.clock()
        return (
            header.get("alg") == "RS256"
            and (self.app_id is None or str(claims.get("iss")) == self.app_id)
            and isinstance(claims.get("iat"), int) and isinstance(claims.get("exp"), int)
            and claims["iat"] <= now + 60 and claims["exp"] > now and claims["exp"] - claims["iat"] <= 600
        )

    def _access_token(self, installation: int) -> HttpResponse:
        if installation not in self.installations.values():
            return _error(404)
        token = f"ghs_fake{next(self._tokens)}"
        expires = self.clock() + 3600
        self.tokens[token] = (installation, expires)
        return HttpResponse(201, {"token": token, "expires_at": iso(expires)})

    # -- routes

    def _route(self, request: HttpRequest, path: str, method: str) -> HttpResponse:
        if path == "/app/hook/deliveries" and method == "GET":
            return self._list(request)
        if (m := re.fullmatch(r"/app/hook/deliveries/(\d+)/attempts", path)) and method == "POST":
            return self._redeliver(int(m.group(1)))
        if (m := re.fullmatch(r"/app/hook/deliveries/(\d+)", path)) and method == "GET":
            return self._delivery(int(m.group(1)))
        if (m := re.fullmatch(r"/app/installations/(\d+)/access_tokens", path)) and method == "POST":
            return self._access_token(int(m.group(1)))
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/installation", path)) and method == "GET":
            return self._installation(m.group(1))
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/dispatches", path)) and method == "POST":
            return self._dispatch(m.group(1), request)
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)/merge", path)) and method == "PUT":
            return self._merge(m.group(1), int(m.group(2)), request.json())
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/code-scanning/alerts/(\d+)", path)) and method == "GET":
            alert = self.alerts.get((m.group(1), int(m.group(2))))
            return HttpResponse(200, dict(alert)) if alert else _error(404, "No alert found for alert number")
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", path)) and method == "GET":
            pull = self.pulls.get((m.group(1), int(m.group(2))))
            return HttpResponse(200, dict(pull)) if pull else _error(404)
        return _error(404)

    def _installation(self, repository: str) -> HttpResponse:
        installation = self.installations.get(repository)
        return HttpResponse(200, {"id": installation}) if installation is not None else _error(404)

    def _dispatch(self, repository: str, request: HttpRequest) -> HttpResponse:
        if len(request.body) > 64 * 1024:
            return _error(422, "The request body is too large")
        body = request.json()
        event_type = body.get("event_type")
        payload = body.get("client_payload", {})
        if not isinstance(event_type, str) or not 1 <= len(event_type) <= 100:
            return _error(422, "event_type must be between 1 and 100 characters")
        if not isinstance(payload, dict) or len(payload) > 10:
            return _error(422, "No more than 10 properties are allowed; client_payload has too many")
        with self._lock:
            self.dispatches.append({"repository": repository, **body})
        return HttpResponse(204)

    def _list(self, request: HttpRequest) -> HttpResponse:
        query = request.query
        try:
            per_page = min(int(query.get("per_page", 30)), 100)
        except ValueError:
            return _error(422, "Invalid per_page")
        status = query.get("status")
        with self._lock:
            if status == "failure":
                source = self._failures
            elif status == "success":
                source = [d for d in self.deliveries if 200 <= d["status_code"] <= 399]
            elif status is None:
                source = self.deliveries
            else:
                return _error(422, "Invalid status")
            end = len(source)
            if "cursor" in query:
                try:
                    below = int(base64.urlsafe_b64decode(query["cursor"].encode()).decode())
                except ValueError:
                    return _error(400, "Invalid cursor")
                end = bisect.bisect_left(source, below, key=lambda d: d["id"])
            start = max(0, end - per_page)
            page = source[start:end][::-1]  # newest first
        headers = {}
        if start > 0 and page:
            params = {k: v for k, v in query.items() if k != "cursor"}
            params["cursor"] = base64.urlsafe_b64encode(str(page[-1]["id"]).encode()).decode()
            headers["Link"] = f'<{self.api_url}/app/hook/deliveries?{urlencode(params)}>; rel="next"'
        return HttpResponse(200, page, headers)

    def _delivery(self, delivery_id: int) -> HttpResponse:
        """One delivery with its request: GitHub keeps the event's whole body ("Get a delivery for an app webhook")."""
        with self._lock:
            item = self._by_id.get(delivery_id)
        if item is None:
            return _error(404)
        event, payload = self.payloads.get(item["guid"], (item["event"], {}))
        request = {"headers": {"X-GitHub-Event": event, "X-GitHub-Delivery": item["guid"]}, "payload": payload}
        return HttpResponse(200, {**item, "url": f"{self.api_url}/app/hook", "request": request,
                                  "response": {"headers": {}, "payload": None}})

    def _redeliver(self, delivery_id: int) -> HttpResponse:
        with self._lock:
            item = self._by_id.get(delivery_id)
            if item is None:
                return _error(404)
            self.redelivery_requests.append(delivery_id)
            self.pending.append(item["guid"])
        return HttpResponse(202, {})

    def _merge(self, repository: str, number: int, body: dict[str, Any]) -> HttpResponse:
        with self._lock:
            pull = self.pulls.get((repository, number))
            if pull is None:
                return _error(404)
            if self.merge_refusal is not None:
                status, message = self.merge_refusal
                return _error(status, message)
            if pull.get("merged"):
                return _error(405, "Pull Request is not mergeable")
            if body.get("sha") and body["sha"] != pull["head"]["sha"]:
                return _error(409, "Head branch was modified. Review and try the merge again.")
            method = body.get("merge_method", "merge")
            if method not in self.merge_methods.get(repository, {"merge", "squash", "rebase"}):
                return _error(405, f"{method.capitalize()} merges are not allowed on this repository.")
            state = pull.get("mergeable_state", "clean")
            if state in ("blocked", "dirty", "draft") or (state == "behind" and repository in self.up_to_date_required):
                return _error(405, "Pull Request is not mergeable" if state != "behind" else "Head branch is out of date.")
            if state not in ("clean", "unstable", "has_hooks", "behind"):
                return _error(405, "Pull Request is not mergeable")
            sha = hashlib.sha1(f"{repository}#{number}@{pull['head']['sha']}".encode()).hexdigest()
            pull.update(merged=True, state="closed", merge_commit_sha=sha)
            self.merges.append({"repository": repository, "number": number, **body})
        return HttpResponse(200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"})


def _error(status: int, message: str = "") -> HttpResponse:
    fault = github_error(status, message)
    return HttpResponse(fault.status, fault.body)
