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
  request and its merge, a commit's check runs, a code scanning alert.

Every request goes through the world's `Faults` first, then, when a world models them, GitHub's secondary
rate limits (`limits.SecondaryLimits`: 403 with `retry-after`). As strict as GitHub, each rule from its docs
(docs.github.com, REST API):

- "Authenticating as a GitHub App": the app's endpoints (`/app/...`, a repository's installation)
  take only the app's JWT (RS256, `iss` the app, at most 10 minutes between `iat` and `exp`, not
  expired); a repository's endpoints take only an installation token of an installation on that
  repository: 401 "A JSON web token could not be decoded" / "Bad credentials" otherwise;
- "Apps: Get a repository installation": 404 where the app is not installed;
- "Repositories: Create a repository dispatch event": `event_type` 1 to 100 characters,
  `client_payload` at most 10 top-level properties, a body over 64 KB: 422;
- "Pulls: Merge a pull request", with `mergeable_state` (GitHub's docs and octokit's types; GitHub's own
  Merge button merges clean, unstable and has_hooks): clean, unstable and has_hooks merge; behind merges
  unless the base branch requires up-to-date heads (`up_to_date_required`); blocked and dirty 405; draft
  405 ("About pull requests": a draft cannot be merged); unknown 405 (GitHub computes mergeability on the
  merge itself and its answer then is not documented: the fake refuses, the stricter reading); a `sha`
  that is not the head 409; a merge method the repository does not allow 405; a pull request closed without being
  merged 405 "Pull Request is not mergeable"; a `merge_method` other than merge, squash or rebase (the
  request body's enum in the OpenAPI description) 422 "Validation Failed" with `errors` as the
  description's validation-error has them; a pull request that changes a file under `.github/workflows/`
  merged with the token of an installation without the Workflows permission (`workflows`, only ever
  `write`) 403 "refusing to allow a GitHub App to create or update workflow `<file>` without `workflows`
  permission", naming the first such file. GitHub's docs say only that an app editing files in
  `.github/workflows` needs the permission ("Choosing permissions for a GitHub App"); the status and the
  words of the merge's refusal are those public reports quote (KeisukeYamashita/auto-pull-request-merge#481:
  the REST merge's message; github/github-mcp-server#1815 and GD4AI/obsidian-llm-wiki#715: HTTP 403);
- "Permissions required for GitHub Apps" (the app's permissions data behind it, github/docs
  src/github-apps/data, and each endpoint's "Fine-grained access tokens for ..." section): an
  installation token reaches an endpoint only with the permission it needs, else 403 "Resource not
  accessible by integration". Create a repository dispatch event: Contents write; Merge a pull
  request: Contents write; Get a pull request: Pull requests read or Contents read (either set
  suffices: the endpoint is listed under both); Get a code scanning alert: Code scanning alerts
  (`security_events`) read; Check if a user is a repository collaborator: Metadata read. List
  repositories accessible to the app installation needs none ("The fine-grained token does not
  require any permissions"). Write includes read. The installation's permissions are what its owner
  accepted (`installation_permissions[installation]`), else the app's;
- "Checks: List check runs for a Git reference" (installation token, Checks read): `total_count` and the
  commit's latest check runs as `check_runs` (`check_runs[(repository, sha)]`, as a test puts them),
  `per_page` at most 100 with `page`, `Link: rel="next"` when more follow. The fake keeps no history of
  commits: a commit it holds no runs for answers none (pager asks only for a head GitHub has just shown);
- "Collaborators: Check if a user is a repository collaborator" (installation token): 204 without a
  body when the login is a collaborator of the repository, 404 without one otherwise. For an
  organization's repository GitHub counts outside collaborators, members with direct access, through
  teams, through the organization's base permissions, and its owners: `collaborators` holds, per
  repository, every login with access, however granted; logins compare case-insensitively, as GitHub
  logins do. The current docs name the fine-grained "Metadata" repository permission (read); older
  docs also named the organization's "Members" permission: the fake follows the current docs;
- "Webhooks: List deliveries for an app webhook": newest first, `per_page` up to 100, `status`
  success (200-399) or failure (400-599), `cursor` from the Link header, 400/422 for a bad one.

The app itself, as `pager setup` registers it and `pager doctor` reads it:

- "Registering a GitHub App from a manifest": the browser posts a form field `manifest` (JSON) to
  `/settings/apps/new` (an app of the signed-in user) or `/organizations/{org}/settings/apps/new`,
  with `state` in the query; `url` and `hook_attributes.url` are required, a name already taken is
  refused on the page; GitHub creates the app and redirects to the manifest's `redirect_url` with
  `code` and the same `state` (`web`, the github.com side; the page where the person may edit the name
  and presses "Create GitHub App" is played as pressed at once). `POST /app-manifests/{code}/conversions`
  takes no credential, answers 201 with the app's id, slug, owner, `pem`, `webhook_secret`,
  `client_id` and `client_secret` once, and 404 for a code used already or older than an hour;
- "Apps: Get the authenticated app" (JWT): the app's `permissions` and `events`. GitHub's form keeps
  event subscriptions only while the webhook is Active, so an app whose webhook is not active lists
  none; "Webhooks: Get a webhook configuration for an app" (JWT): `url`, `content_type`,
  `insecure_ssl`, and `secret` shown as `********` when one is set;
- with the app's key known (`public_key`, set when an app is registered here), a JWT must be signed
  by it: 401 "A JSON web token could not be decoded" otherwise;
- "Apps: Get a repository installation": the installation with its account, `permissions` (what its
  owner accepted: `installation_permissions`, else the app's), `events`, `html_url` (where its
  repositories are chosen), `suspended_at`; "Installations: List repositories accessible to the app
  installation" (installation token): `total_count` and the page of repositories.
"""

from __future__ import annotations

import base64
import bisect
import functools
import hashlib
import itertools
import json
import re
import secrets
import threading
from collections import defaultdict
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from pager.values import iso

from .faults import Faults, github_error
from .http import HttpRequest, HttpResponse
from .limits import SecondaryLimits
from .payloads import example

RETENTION = 3 * 86_400.0  # GitHub lists a delivery for three days
MERGE_METHODS = ("merge", "squash", "rebase")  # "Merge a pull request": merge_method's enum
ACCESS = {"read": 1, "write": 2, "admin": 3}
# What an installation token needs per endpoint ("Permissions required for GitHub Apps"): (method, path,
# the permission sets any one of which suffices). An endpoint not listed needs none.
PERMISSIONS: tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...] = (
    ("POST", r"/repos/[^/]+/[^/]+/dispatches", (("contents", "write"),)),
    ("PUT", r"/repos/[^/]+/[^/]+/pulls/\d+/merge", (("contents", "write"),)),
    ("GET", r"/repos/[^/]+/[^/]+/pulls/\d+", (("pull_requests", "read"), ("contents", "read"))),
    ("GET", r"/repos/[^/]+/[^/]+/code-scanning/alerts/\d+", (("security_events", "read"),)),
    ("GET", r"/repos/[^/]+/[^/]+/commits/[^/]+/check-runs", (("checks", "read"),)),
    ("GET", r"/repos/[^/]+/[^/]+/collaborators/[^/]+", (("metadata", "read"),)),
    ("GET", r"/repos/[^/]+/[^/]+", (("metadata", "read"),)),
)
MANIFEST_CODE_LIFETIME = 3600.0  # "Registering a GitHub App from a manifest": the code works within an hour

Endpoint = Callable[[str, str, dict[str, Any], bool], "int | tuple[int, str]"]  # (guid, event, payload, redelivery) -> status[, body]


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
        self._answers: dict[int, str] = {}  # the body the endpoint answered each attempt with, as GitHub keeps it
        self.log: dict[str, list[tuple[float, int, bool]]] = defaultdict(list)  # guid -> (at, status_code, redelivery)
        self.payloads: dict[str, tuple[str, dict[str, Any]]] = {}
        self.pending: list[str] = []  # guids whose redelivery was asked for, not yet carried out
        self.redelivery_requests: list[int] = []
        # the repositories' side
        self.installations: dict[str, int] = {}  # repository -> the app's installation on it
        self.repository_ids: dict[str, int] = {}  # repository -> its id (else one made from its name)
        self.app_id: str | None = None  # when set, the JWT must be issued by this app
        self.tokens: dict[str, tuple[int, float]] = {}  # installation token -> (installation, expires at)
        self.merge_methods: dict[str, set[str]] = {}  # repository -> the merge methods it allows (default: all)
        self.up_to_date_required: set[str] = set()  # repositories whose base branch requires up-to-date heads
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.pull_files: dict[tuple[str, int], list[str]] = {}  # the files a pull request changes ("List pull requests files")
        self.alerts: dict[tuple[str, int], dict[str, Any]] = {}  # code scanning alerts as GitHub has them
        self.check_runs: dict[tuple[str, str], list[dict[str, Any]]] = {}  # (repository, commit) -> its latest check runs
        self.dispatches: list[dict[str, Any]] = []
        self.merges: list[dict[str, Any]] = []
        self.merge_refusal: tuple[int, str] | None = None  # the next merges answer this (status, message)
        # the app itself: registered from a manifest (`register_app`), or, until then, one built from app_id
        self.app: dict[str, Any] | None = None  # GET /app's answer, without `events` (see `hook`)
        self.hook: dict[str, Any] = {"url": "", "content_type": "json", "insecure_ssl": "0", "secret": "", "active": True}
        self.public_key: Any = None  # when set, an app JWT must be signed by this key
        self.app_key: str | None = None  # the PEM the next app registered gets (None: a new RSA key)
        self.user = "maintainer"  # the person signed in to github.com who registers an app
        self.apps_registered: list[dict[str, Any]] = []  # every app registered here, in order
        self.manifest_codes: dict[str, tuple[dict[str, Any], float]] = {}  # code -> (conversion answer, expires at)
        self.conversions: list[dict[str, Any]] = []  # every conversion answered (the credentials handed out)
        self.installation_permissions: dict[int, dict[str, str]] = {}  # installation -> what its owner accepted
        self.collaborators: dict[str, set[str]] = {}  # repository -> every login with access, however granted

        self.suspended: set[int] = set()  # installations suspended by their owner
        self.limits: SecondaryLimits | None = None  # GitHub's secondary rate limits, when a world models them
        self._app_ids = itertools.count(900_001)
        self._ids = itertools.count(1_000_000)
        self._guids = itertools.count(1)
        self._tokens = itertools.count(1)
        self._lock = threading.RLock()

    # -- faults

    def reinstall(self, installation: int) -> int:
        """The owner uninstalls the app and installs it again on the same repositories: a new
        installation id ("Create an installation access token for an app" answers 404 for the old
        one), and the old one's tokens refused like any token GitHub does not know (401 Bad
        credentials; the docs do not say what a token of a deleted installation gets)."""
        with self._lock:
            new = next(self._ids)
            for repository, current in list(self.installations.items()):
                if current == installation:
                    self.installations[repository] = new
            if installation in self.installation_permissions:  # the owner accepts the same permissions again
                self.installation_permissions[new] = dict(self.installation_permissions[installation])
            self.tokens = {token: held for token, held in self.tokens.items() if held[0] != installation}
            return new

    def rename(self, old: str, new: str) -> None:
        """A repository renamed or transferred: its installation, pull requests, alerts and collaborators
        under its new name from now on. GitHub redirects a call naming the old name (301, 307: "Get a
        repository"); the fake answers it 404 instead, since pager calls with the name the latest event
        carries and must never need the redirect."""
        with self._lock:
            for table in (self.installations, self.collaborators, self.merge_methods):
                if old in table:
                    table[new] = table.pop(old)
            for key in [k for k in self.pulls if k[0] == old]:
                self.pulls[(new, key[1])] = self.pulls.pop(key)
            for key in [k for k in self.pull_files if k[0] == old]:
                self.pull_files[(new, key[1])] = self.pull_files.pop(key)
            for key in [k for k in self.alerts if k[0] == old]:
                self.alerts[(new, key[1])] = self.alerts.pop(key)
            for commit in [k for k in self.check_runs if k[0] == old]:
                self.check_runs[(new, commit[1])] = self.check_runs.pop(commit)

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
        """Send an event to the endpoint and record the attempt as GitHub lists it. The endpoint answers its
        status, or its status and body (which "Get a delivery for an app webhook" then shows as the response's
        payload)."""
        guid = guid or self.new_guid()
        self.payloads[guid] = (event, payload)
        body = None
        try:
            answer = self.endpoint(guid, event, payload, redelivery) if self.endpoint else 200
            code, body = answer if isinstance(answer, tuple) else (answer, None)
            status = "OK" if 200 <= code < 400 else f"Invalid HTTP Response: {code}"
        except TimeoutError:
            code, status = 0, "timed out"
        repository = payload.get("repository")
        repository_id = repository.get("id") if isinstance(repository, dict) else None
        item = self.record(guid, event, payload.get("action"), repository_id, code, status=status, redelivery=redelivery)
        if body is not None:
            with self._lock:
                self._answers[item["id"]] = body
        return item

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
                self._answers.pop(item["id"], None)
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
            if fault.acts:
                self.handle(request)  # GitHub acts; its answer is lost on the way back
            return HttpResponse(0, fault.body)
        if fault is not None:
            return HttpResponse(fault.status, fault.body, dict(fault.headers))
        return self.handle(request)

    def handle(self, request: HttpRequest) -> HttpResponse:
        path = request.path
        refused = self._refuse_credentials(request) or self._refuse_permission(request)
        if refused is not None:
            return refused
        if self.limits is not None and (limited := self.limits.check(request.method, path, self.clock())) is not None:
            return limited
        return self._route(request, path, request.method)

    # -- credentials

    def _refuse_credentials(self, request: HttpRequest) -> HttpResponse | None:
        """GitHub's 401/404 for a credential the endpoint does not take (see the module docstring)."""
        path = request.path
        credential = _bearer(request)
        if re.fullmatch(r"/app-manifests/[^/]+/conversions", path):
            return None  # "Create a GitHub App from a manifest" takes no credential: the code is one
        if path == "/app" or path.startswith("/app/") or re.fullmatch(r"/repos/[^/]+/[^/]+/installation", path):
            return None if self._valid_jwt(credential) else _error(401, "A JSON web token could not be decoded")
        if path.startswith("/installation/"):
            installation, expires = self.tokens.get(credential, (None, 0.0))
            return None if installation is not None and expires > self.clock() else _error(401, "Bad credentials")
        found = re.match(r"/repos/([^/]+/[^/]+)(/|$)", path)
        if found:
            installation, expires = self.tokens.get(credential, (None, 0.0))
            if installation is None or expires <= self.clock():
                return _error(401, "Bad credentials")
            seen = {name.lower(): number for name, number in self.installations.items()}
            if seen.get(found.group(1).lower()) != installation:  # GitHub's names are not case-sensitive
                return _error(404)  # the installation cannot see that repository
        return None

    def _refuse_permission(self, request: HttpRequest) -> HttpResponse | None:
        """GitHub's 403 for an installation token without the permission the endpoint needs (see the
        module docstring); None when it has one of the endpoint's permission sets, or needs none."""
        needs = next((sets for method, pattern, sets in PERMISSIONS
                      if method == request.method and re.fullmatch(pattern, request.path)), None)
        if needs is None:
            return None
        installation, _ = self.tokens.get(_bearer(request), (None, 0.0))
        if installation is None:
            return None  # not an installation token: the credentials' refusal applies
        held = self._held(installation)
        if any(ACCESS.get(str(held.get(name)), 0) >= ACCESS[access] for name, access in needs):
            return None
        return _error(403, "Resource not accessible by integration")

    def _held(self, installation: int | None) -> dict[str, Any]:
        """The permissions an installation's tokens carry: what its owner accepted, else the app's."""
        return self.installation_permissions.get(installation or 0, self._app()["permissions"])

    def _valid_jwt(self, token: str) -> bool:
        parts = token.split(".")
        if len(parts) != 3:
            return False
        try:
            header, claims = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in parts[:2])
        except ValueError:
            return False
        if self.public_key is not None and not _signed_by(token, self.public_key):
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
        app = self._route_app(request, path, method)
        if app is not None:
            return app
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
            return self._merge(m.group(1), int(m.group(2)), request.json(), self.tokens.get(_bearer(request), (None, 0.0))[0])
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/code-scanning/alerts/(\d+)", path)) and method == "GET":
            alert = self.alerts.get((m.group(1), int(m.group(2))))
            return HttpResponse(200, dict(alert)) if alert else _error(404, "No alert found for alert number")
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/commits/([^/]+)/check-runs", path)) and method == "GET":
            return self._check_runs(m.group(1), m.group(2), request)
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/pulls/(\d+)", path)) and method == "GET":
            pull = self.pulls.get((m.group(1), int(m.group(2))))
            return HttpResponse(200, dict(pull)) if pull else _error(404)
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)/collaborators/([^/]+)", path)) and method == "GET":
            return self._collaborator(m.group(1), m.group(2))
        if (m := re.fullmatch(r"/repos/([^/]+/[^/]+)", path)) and method == "GET":
            return self._repository(m.group(1))
        return _error(404)

    def _repository(self, repository: str) -> HttpResponse:
        """"Get a repository" (a full-repository): GitHub finds it whatever the case of its name, and names it
        as it is called now. Its fields are GitHub's example repository's, renamed (the webhook payloads carry
        the same object but for the three counts only the full one has)."""
        name = next((r for r in self.installations if r.lower() == repository.lower()), None)
        if name is None:
            return _error(404)
        owner, short = name.split("/")
        ident = self.repository_ids.get(name) or 1000 + sorted(self.installations).index(name)
        base = json.loads(json.dumps(example("issues", "opened")["repository"]).replace("Codertocat/Hello-World", name))
        base.update(id=ident, node_id=f"R_{name}", name=short, full_name=name, html_url=f"https://github.com/{name}",
                    has_discussions=False, network_count=0, subscribers_count=0)
        base["owner"] = {**base["owner"], "login": owner}
        return HttpResponse(200, base)

    def _check_runs(self, repository: str, ref: str, request: HttpRequest) -> HttpResponse:
        """A commit's latest check runs, a page of them (see the module docstring)."""
        query = request.query
        try:
            per_page, page = min(int(query.get("per_page", 30)), 100), max(int(query.get("page", 1)), 1)
        except ValueError:
            return _error(422, "Invalid per_page or page")
        with self._lock:
            runs = [dict(run) for run in self.check_runs.get((repository, ref), [])]
        headers = {}
        if page * per_page < len(runs):
            params = urlencode({"per_page": per_page, "page": page + 1})
            headers["Link"] = f'<{self.api_url}/repos/{repository}/commits/{ref}/check-runs?{params}>; rel="next"'
        return HttpResponse(200, {"total_count": len(runs), "check_runs": runs[(page - 1) * per_page: page * per_page]},
                            headers)

    def _collaborator(self, repository: str, login: str) -> HttpResponse:
        """204 for a login with access to the repository, 404 for any other; neither has a body."""
        with self._lock:
            logins = {name.lower() for name in self.collaborators.get(repository, set())}
        return HttpResponse(204) if login.lower() in logins else HttpResponse(404)

    def _route_app(self, request: HttpRequest, path: str, method: str) -> HttpResponse | None:
        """The routes of the app itself (its registration, settings and installation); None for another."""
        if path == "/app" and method == "GET":
            return HttpResponse(200, self._app())
        if path == "/app/hook/config" and method == "GET":
            return HttpResponse(200, self._hook_config())
        if (m := re.fullmatch(r"/app-manifests/([^/]+)/conversions", path)) and method == "POST":
            return self._conversion(m.group(1))
        if path == "/installation/repositories" and method == "GET":
            return self._installation_repositories(request)
        return None

    def _installation(self, repository: str) -> HttpResponse:
        installation = next((n for r, n in self.installations.items() if r.lower() == repository.lower()), None)
        if installation is None:
            return _error(404)
        return HttpResponse(200, self._installation_of(installation, repository.split("/")[0]))

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
        """One delivery with its request and the endpoint's answer: GitHub keeps the event's whole body, and the
        answer's body as a string, null when none came ("Get a delivery for an app webhook")."""
        with self._lock:
            item = self._by_id.get(delivery_id)
            answer = self._answers.get(delivery_id)
        if item is None:
            return _error(404)
        event, payload = self.payloads.get(item["guid"], (item["event"], {}))
        request = {"headers": {"X-GitHub-Event": event, "X-GitHub-Delivery": item["guid"]}, "payload": payload}
        return HttpResponse(200, {**item, "url": f"{self.api_url}/app/hook", "request": request,
                                  "response": {"headers": {}, "payload": answer}})

    def _redeliver(self, delivery_id: int) -> HttpResponse:
        with self._lock:
            item = self._by_id.get(delivery_id)
            if item is None:
                return _error(404)
            self.redelivery_requests.append(delivery_id)
            self.pending.append(item["guid"])
        return HttpResponse(202, {})

    def _merge(self, repository: str, number: int, body: dict[str, Any], installation: int | None) -> HttpResponse:
        method = body.get("merge_method", "merge")
        if method not in MERGE_METHODS:
            fault = github_error(422, "Validation Failed", errors=[
                {"resource": "PullRequest", "field": "merge_method", "code": "invalid", "value": str(method),
                 "message": f"merge_method must be one of {', '.join(MERGE_METHODS)}"}])
            return HttpResponse(fault.status, fault.body)
        with self._lock:
            pull = self.pulls.get((repository, number))
            if pull is None:
                return _error(404)
            if self.merge_refusal is not None:
                status, message = self.merge_refusal
                return _error(status, message)
            if pull.get("merged") or pull.get("state") == "closed":
                return _error(405, "Pull Request is not mergeable")
            if body.get("sha") and body["sha"] != pull["head"]["sha"]:
                return _error(409, "Head branch was modified. Review and try the merge again.")
            if method not in self.merge_methods.get(repository, set(MERGE_METHODS)):
                return _error(405, f"{method.capitalize()} merges are not allowed on this repository.")
            state = pull.get("mergeable_state", "clean")
            if state in ("blocked", "dirty", "draft") or (state == "behind" and repository in self.up_to_date_required):
                return _error(405, "Pull Request is not mergeable" if state != "behind" else "Head branch is out of date.")
            if state not in ("clean", "unstable", "has_hooks", "behind"):
                return _error(405, "Pull Request is not mergeable")
            workflow = next((f for f in self.pull_files.get((repository, number), []) if f.startswith(".github/workflows/")), None)
            if workflow is not None and ACCESS.get(str(self._held(installation).get("workflows")), 0) < ACCESS["write"]:
                return _error(403, f"refusing to allow a GitHub App to create or update workflow `{workflow}` without "
                                   "`workflows` permission")
            sha = hashlib.sha1(f"{repository}#{number}@{pull['head']['sha']}".encode()).hexdigest()
            pull.update(merged=True, state="closed", merge_commit_sha=sha)
            self.merges.append({"repository": repository, "number": number, **body})
        return HttpResponse(200, {"sha": sha, "merged": True, "message": "Pull Request successfully merged"})

    # -- the app itself

    def register_app(self, manifest: dict[str, Any], *, org: str | None = None, app_id: int | None = None,
                     pem: str | None = None, webhook_secret: str | None = None) -> dict[str, Any]:
        """Create the app a manifest describes, owned by `org` or else the signed-in user, and make it the
        app this fake answers for; the conversion's answer (its credentials included)."""
        owner = org or self.user
        now = iso(self.clock())
        number = app_id if app_id is not None else next(self._app_ids)
        slug = _slug(str(manifest.get("name") or f"app-{number}"))
        key = pem or self.app_key or _new_key()
        hook = manifest.get("hook_attributes") or {}
        app = {
            "id": number,
            "slug": slug,
            "node_id": f"A_{number}",
            "client_id": f"Iv1.{number:016x}",
            "owner": _account(owner, "Organization" if org else "User"),
            "name": str(manifest.get("name") or slug),
            "description": manifest.get("description") or "",
            "external_url": manifest.get("url") or "",
            "html_url": f"https://github.com/apps/{slug}",
            "created_at": now,
            "updated_at": now,
            "permissions": dict(manifest.get("default_permissions") or {}),
            "events": list(manifest.get("default_events") or []),
        }
        secret = webhook_secret if webhook_secret is not None else secrets.token_hex(20)
        with self._lock:
            self.app = app
            self.app_id = str(number)
            self.public_key = _public_key(key)
            self.hook = {"url": hook.get("url", ""), "content_type": "json", "insecure_ssl": "0", "secret": secret,
                         "active": hook.get("active", True) is not False}
            self.apps_registered.append(app)
        return {**app, "client_secret": secrets.token_hex(20), "webhook_secret": secret, "pem": key}

    def web(self, request: HttpRequest) -> HttpResponse:
        """github.com in the browser: the manifest form's POST creates the app and redirects back with a code."""
        parts = urlsplit(request.url)
        org = re.fullmatch(r"/organizations/([^/]+)/settings/apps/new", parts.path)
        if request.method != "POST" or not (parts.path == "/settings/apps/new" or org):
            return HttpResponse(404, b"Not Found", {"content-type": "text/html"})
        form = {k: v[-1] for k, v in parse_qs(request.body.decode()).items()}
        try:
            manifest = json.loads(form.get("manifest") or "")
        except ValueError:
            manifest = None
        if not isinstance(manifest, dict):
            return _page(400, "Invalid GitHub App configuration: the manifest is not JSON")
        refusal = self._manifest_refusal(manifest)
        if refusal:
            return _page(422, refusal)
        code = self.issue_code(self.register_app(manifest, org=org.group(1) if org else None))
        query = {"code": code}
        state = parse_qs(parts.query).get("state")
        if state:
            query["state"] = state[-1]
        location = manifest["redirect_url"] + ("&" if "?" in manifest["redirect_url"] else "?") + urlencode(query)
        return HttpResponse(302, b"", {"Location": location, "content-type": "text/html"})

    def issue_code(self, answer: dict[str, Any]) -> str:
        """A code for the redirect: it converts once into `answer`, within the hour."""
        code = secrets.token_hex(10)
        with self._lock:
            self.manifest_codes[code] = (answer, self.clock() + MANIFEST_CODE_LIFETIME)
        return code

    def _manifest_refusal(self, manifest: dict[str, Any]) -> str:
        """What GitHub's registration page says of a manifest it cannot register ("" when it can)."""
        hook = manifest.get("hook_attributes")
        if not isinstance(manifest.get("url"), str) or not manifest["url"]:
            return "Homepage URL can't be blank"
        if hook is not None and not (isinstance(hook, dict) and isinstance(hook.get("url"), str) and hook["url"]):
            return "Webhook URL can't be blank"
        if not isinstance(manifest.get("redirect_url"), str) or not manifest["redirect_url"]:
            return "Redirect URL can't be blank"
        if _slug(str(manifest.get("name") or "")) in {app["slug"] for app in self.apps_registered}:
            return "Name is already in use"
        return ""

    def _conversion(self, code: str) -> HttpResponse:
        with self._lock:
            answer, expires = self.manifest_codes.pop(code, (None, 0.0))
        if answer is None or expires <= self.clock():
            return _error(404)
        with self._lock:
            self.conversions.append(dict(answer))
        return HttpResponse(201, dict(answer))

    def _app(self) -> dict[str, Any]:
        app = self.app or {
            "id": int(self.app_id or 1), "slug": f"app-{self.app_id or 1}", "node_id": "A_1", "client_id": "Iv1.1",
            "owner": _account(self.user, "User"), "name": "pager", "description": "", "external_url": "",
            "html_url": f"https://github.com/apps/app-{self.app_id or 1}", "created_at": iso(0), "updated_at": iso(0),
            "permissions": {"metadata": "read"}, "events": [],
        }
        return {**app, "events": list(app["events"]) if self.hook.get("active") else []}

    def _hook_config(self) -> dict[str, Any]:
        config = {"url": self.hook["url"], "content_type": self.hook["content_type"], "insecure_ssl": self.hook["insecure_ssl"]}
        if self.hook.get("secret"):
            config["secret"] = "********"
        return config

    def _installation_of(self, installation: int, login: str) -> dict[str, Any]:
        app = self._app()
        kind = app["owner"]["type"] if app["owner"]["login"] == login else "User"
        settings = (f"https://github.com/organizations/{login}/settings/installations/{installation}" if kind == "Organization"
                    else f"https://github.com/settings/installations/{installation}")
        return {
            "id": installation,
            "account": _account(login, kind),
            "access_tokens_url": f"{self.api_url}/app/installations/{installation}/access_tokens",
            "repositories_url": f"{self.api_url}/installation/repositories",
            "html_url": settings,
            "app_id": app["id"],
            "app_slug": app["slug"],
            "target_id": 1,
            "target_type": kind,
            "permissions": dict(self.installation_permissions.get(installation, app["permissions"])),
            "events": list(app["events"]),
            "created_at": app["created_at"],
            "updated_at": app["updated_at"],
            "single_file_name": None,
            "repository_selection": "selected",
            "suspended_at": app["updated_at"] if installation in self.suspended else None,
            "suspended_by": _account(login, "User") if installation in self.suspended else None,
        }

    def _installation_repositories(self, request: HttpRequest) -> HttpResponse:
        installation, _ = self.tokens[_bearer(request)]
        query = request.query
        try:
            per_page, page = min(int(query.get("per_page", 30)), 100), max(int(query.get("page", 1)), 1)
        except ValueError:
            return _error(422, "Invalid per_page or page")
        names = sorted(repo for repo, number in self.installations.items() if number == installation)
        chosen = names[(page - 1) * per_page: page * per_page]
        repositories = [{"id": 1000 + names.index(name), "node_id": f"R_{name}", "name": name.split("/")[1],
                         "full_name": name, "private": False, "owner": _account(name.split("/")[0], "User"),
                         "html_url": f"https://github.com/{name}"} for name in chosen]
        headers = {}
        if page * per_page < len(names):
            params = urlencode({"per_page": per_page, "page": page + 1})
            headers["Link"] = f'<{self.api_url}/installation/repositories?{params}>; rel="next"'
        body = {"total_count": len(names), "repository_selection": "selected", "repositories": repositories}
        return HttpResponse(200, body, headers)


def _bearer(request: HttpRequest) -> str:
    """The credential of an `Authorization: Bearer ...` header ("" without one)."""
    auth = request.headers.get("Authorization") or request.headers.get("authorization") or ""
    return auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else ""


def _error(status: int, message: str = "") -> HttpResponse:
    fault = github_error(status, message)
    return HttpResponse(fault.status, fault.body)


def _page(status: int, text: str) -> HttpResponse:
    """A page of github.com (HTML, not the API's JSON)."""
    return HttpResponse(status, f"<!doctype html><p>{text}</p>".encode(), {"content-type": "text/html"})


def _slug(name: str) -> str:
    """The app's slug as GitHub makes it from the name: lower case, other characters become dashes."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _account(login: str, kind: str) -> dict[str, Any]:
    number = sum(map(ord, login))
    return {"login": login, "id": number, "node_id": f"U_{number}", "type": kind,
            "html_url": f"https://github.com/{login}", "site_admin": False}


def _new_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                             serialization.NoEncryption()).decode()


@functools.lru_cache(maxsize=8)
def _public_key(pem: str) -> Any:
    """The app's public key (parsing its private key costs about 40 ms: once per key)."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    return load_pem_private_key(pem.encode(), password=None).public_key()


def _signed_by(token: str, public_key: Any) -> bool:
    """Whether a JWT's RS256 signature is the key's (its claims are checked on the fake's clock)."""
    import jwt

    try:
        jwt.decode(token, public_key, algorithms=["RS256"],
                   options={"verify_exp": False, "verify_iat": False, "verify_nbf": False, "verify_iss": False,
                            "verify_aud": False})
    except jwt.PyJWTError:
        return False
    return True
