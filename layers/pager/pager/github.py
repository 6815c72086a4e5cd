"""The GitHub client: the app's JWT, installation tokens, and the few REST calls pager makes.

The transport is injected (a `requests.Session`; tests mount `responses` on it), so nothing here
opens a connection on construction. Every HTTP call counts in `calls` (the sweep's budget reads it),
checks the invocation's deadline first (`pager.deadline.check`) and carries a timeout bounded by it.

Authentication:
- the app JWT (RS256, `iat` 60 s in the past, `exp` 9 minutes ahead, `iss` the app id) is signed once
  and reused until about a minute before it expires; a 401 on a JWT call drops it;
- installation tokens (POST /app/installations/{id}/access_tokens) are cached until 5 minutes before
  their `expires_at`; nothing assumes their length or format; a 401 drops the cached one;
- whether someone is a collaborator of a repository is kept for an hour per repository and login;
- the installation of a repository (GET /repos/{repo}/installation) is cached per repository; one
  GitHub no longer knows (404 for its token: the app was uninstalled and installed again), whether
  cached or given by a payload or a record, is looked up anew and the call made once more.

Answers map onto the exception tree of `pager.errors`:
- 5xx, a rate limit (429, or 403 with `x-ratelimit-remaining: 0`, a `retry-after` header or a
  secondary rate-limit message), a timeout, a connection error, an unreadable 2xx -> GitHubUnavailable
  (with `retry_after` in seconds when GitHub says how long to wait);
- any other 4xx -> GitHubRefused(status, reason=GitHub's `message`).
No exception message carries the JWT, a token or the private key: messages name the step and the status.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json as jsonlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import jwt
import requests

from . import deadline
from .errors import ConfigError, GitHubRefused, GitHubUnavailable, WorkflowsRefused
from .transport import may_have_arrived
from .values import parse_iso

CONNECT_TIMEOUT = 3.05
READ_TIMEOUT = 5.0

HOOK_WAIT = 10.0  # GitHub waits this long for a webhook's answer, then records a failure: so does a ping of pager's own
JWT_BACKDATE = 60  # seconds `iat` lies in the past, against clock drift
JWT_LIFETIME = 9 * 60  # seconds from now to `exp` (GitHub allows at most 10 minutes)
JWT_REFRESH_MARGIN = 60  # a JWT is signed anew this long before it expires
TOKEN_REFRESH_MARGIN = 5 * 60  # an installation token is fetched anew this long before `expires_at`
SECONDARY_LIMIT_WAIT = 60.0  # GitHub: without a header, wait at least a minute after a secondary limit

API_VERSION = "2022-11-28"
USER_AGENT = "pager"
REASON_LIMIT = 300  # characters of GitHub's message kept in an exception
COLLABORATOR_SECONDS = 3600.0  # how long an answer of "Check if a user is a repository collaborator" is kept
COLLABORATORS_KEPT = 1000  # answers kept at most (the oldest goes first)
CHECK_RUNS = 100  # check runs of a commit read in one call ("List check runs for a Git reference": per_page at most 100)


class InstallationGone(GitHubRefused):
    """GitHub no longer knows the installation (404 for its token): the app was uninstalled."""


# GitHub's refusal to merge a pull request that changes a file under .github/workflows/ for an app without the
# Workflows permission: "refusing to allow a GitHub App to create or update workflow `<file>` without
# `workflows` permission". GitHub documents the permission, not this answer: its words are those public reports
# quote (KeisukeYamashita/auto-pull-request-merge#481, github/github-mcp-server#1815), with a 403; the status
# being undocumented, the words are matched in any 4xx.
WORKFLOWS_REFUSAL = re.compile(r"refusing to allow a GitHub App to create or update workflow `?([^`\s]*)`? "
                               r"without `?workflows`? permission")


def _an_object(body: Any, step: str) -> dict[str, Any]:
    """An answer that must be a JSON object (anything else is an answer pager cannot use)."""
    if not isinstance(body, dict):
        raise GitHubUnavailable(f"{step}: answer is not an object")
    return body


@dataclass(frozen=True)
class DeliveryPage:
    """One page of the app's webhook deliveries, exactly as GitHub lists them (newest first)."""

    items: list[dict[str, Any]]
    next_url: str | None = None


@dataclass
class _Token:
    value: str = field(repr=False)
    refresh_at: float


class GitHub:
    """GitHub's REST API as the app and its installations use it."""

    def __init__(
        self,
        session: requests.Session,
        *,
        app_id: str,
        private_key: str,
        api_url: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._session = session
        self._app_id = str(app_id)
        self._private_key = normalize_pem(private_key)
        self._api_url = api_url.rstrip("/")
        self._clock = clock
        self._jwt: _Token | None = None
        self._tokens: dict[int, _Token] = {}
        self._installations: dict[str, int] = {}
        self._collaborators: dict[tuple[str, str], tuple[bool, float]] = {}  # (repo, login) -> (answer, until)
        self.calls = 0

    def __repr__(self) -> str:
        return f"GitHub(api_url={self._api_url!r}, app_id={self._app_id!r}, calls={self.calls})"

    # -- authentication ---------------------------------------------------------------------------

    def app_jwt(self) -> str:
        """The app's JWT, signed once and reused while it has more than a minute left."""
        now = self._clock()
        if self._jwt is not None and now < self._jwt.refresh_at:
            return self._jwt.value
        issued = int(now)
        claims = {"iat": issued - JWT_BACKDATE, "exp": issued + JWT_LIFETIME, "iss": self._app_id}
        try:
            value = jwt.encode(claims, signing_key(self._private_key), algorithm="RS256")
        except Exception:
            # Whatever the library says may quote the key; say only which setting is wrong.
            value = None
        if value is None:
            raise ConfigError("GITHUB_PRIVATE_KEY is not a usable RSA private key")
        self._jwt = _Token(value, refresh_at=issued + JWT_LIFETIME - JWT_REFRESH_MARGIN)
        return value

    def installation_token(self, installation_id: int) -> str:
        """A token of the installation, cached until 5 minutes before it expires."""
        installation_id = int(installation_id)
        cached = self._tokens.get(installation_id)
        if cached is not None and self._clock() < cached.refresh_at:
            return cached.value
        try:
            body = self._request("POST", f"/app/installations/{installation_id}/access_tokens",
                                 step="github installation token", auth="jwt")
        except GitHubRefused as exc:
            if exc.status == 404:  # the installation is gone: the app was uninstalled (and maybe installed again)
                raise InstallationGone(str(exc), status=exc.status, reason=exc.reason) from exc
            raise
        token = body.get("token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise GitHubUnavailable("github installation token: answer without a token")
        expires_at = parse_iso(body.get("expires_at"))
        if expires_at is not None:
            self._tokens[installation_id] = _Token(token, refresh_at=expires_at - TOKEN_REFRESH_MARGIN)
        else:
            self._tokens.pop(installation_id, None)  # no expiry given: use it for this call only
        return token

    def installation_for(self, repo: str) -> int:
        """The id of the app's installation on a repository (`owner/name`), cached per repository."""
        key = repo.lower()
        if key in self._installations:
            return self._installations[key]
        body = self._request("GET", f"/repos/{repo}/installation", step="github installation of repository", auth="jwt")
        installation_id = body.get("id") if isinstance(body, dict) else None
        if not isinstance(installation_id, int) or isinstance(installation_id, bool):
            raise GitHubUnavailable("github installation of repository: answer without an id")
        self._installations[key] = installation_id
        return installation_id

    def installation(self, repo: str) -> dict[str, Any]:
        """The app's installation on a repository, whole ("Apps: Get a repository installation", JWT): its
        permissions as its owner accepted them, whether it is suspended."""
        return self._object("GET", f"/repos/{repo}/installation", "github installation of repository", auth="jwt")

    def probe(self, repo: str) -> None:
        """Whether GitHub answers the app on the repositories' API: its installation on `repo`, read anew
        (a read on the API the handlers use; raises as any call does)."""
        self.installation(repo)

    # -- the app's webhook deliveries (JWT) ---------------------------------------------------------

    def list_deliveries(
        self, *, status: str | None = None, per_page: int = 100, url: str | None = None
    ) -> DeliveryPage:
        """One page of deliveries, newest first; pass `url=page.next_url` for the next page.

        The next page's URL is GitHub's own (`Link: rel="next"`); no cursor is ever built here.
        """
        if url is not None:
            response = self._send("GET", self._on_api_host(url), step="github list deliveries", auth="jwt", params=None)
        else:
            params: dict[str, Any] = {"per_page": per_page}
            if status is not None:
                params["status"] = status
            response = self._send(
                "GET", self._api_url + "/app/hook/deliveries", step="github list deliveries", auth="jwt", params=params
            )
        items = self._json(response, "github list deliveries")
        if not isinstance(items, list):
            raise GitHubUnavailable("github list deliveries: answer is not a list")
        link = response.links.get("next", {}).get("url") or None
        next_url = urljoin(str(response.url or self._api_url), link) if link else None  # a relative link too (RFC 8288)
        return DeliveryPage(items=items, next_url=next_url)

    def hook_config(self) -> dict[str, Any]:
        """The app's webhook as GitHub delivers to it ("Webhooks: Get a webhook configuration for an app", JWT):
        its `url`, `content_type`, `insecure_ssl`, and whether a `secret` is set."""
        return self._object("GET", "/app/hook/config", "github get webhook config", auth="jwt")

    def ping_hook(self, url: str, secret: str, guid: str) -> int:
        """Deliver a signed `ping` to the URL GitHub delivers to, the way GitHub delivers one (its headers, its
        body: zen, hook_id, hook; the signature of the body with the webhook secret): pager's own endpoint's
        answer, through the same path as GitHub's deliveries (a domain, API Gateway, the function). Its status;
        0 when no answer came within GitHub's own wait (HOOK_WAIT) or no connection was made."""
        step = "ping pager's own endpoint"
        deadline.check(step)
        body = jsonlib.dumps({"zen": "Keep it logically awesome.", "hook_id": 0,
                              "hook": {"type": "App", "id": 0, "active": True, "events": [],
                                       "config": {"url": url, "content_type": "json", "insecure_ssl": "0"}}}).encode()
        signature = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {"Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/pager", "X-GitHub-Event": "ping",
                   "X-GitHub-Delivery": guid, "X-GitHub-Hook-ID": "0", "X-Hub-Signature-256": f"sha256={signature}"}
        self.calls += 1
        try:
            response = self._session.post(url, data=body, headers=headers, allow_redirects=False,
                                          timeout=(deadline.timeout(CONNECT_TIMEOUT), deadline.timeout(HOOK_WAIT)))
        except requests.RequestException:
            return 0
        return response.status_code

    def get_delivery(self, delivery_id: int) -> dict:
        """One delivery of the app's webhook with its request (headers, payload) and response."""
        return self._object("GET", f"/app/hook/deliveries/{int(delivery_id)}", "github get delivery", auth="jwt")

    def redeliver(self, delivery_id: int) -> None:
        """Ask GitHub to deliver one delivery again (202 Accepted)."""
        self._request(
            "POST",
            f"/app/hook/deliveries/{int(delivery_id)}/attempts",
            step="github redeliver",
            auth="jwt",
            expect_body=False,
        )

    # -- repositories (installation token) ----------------------------------------------------------

    def dispatch(
        self, repo: str, event_type: str, client_payload: dict, *, installation_id: int | None = None
    ) -> None:
        """A `repository_dispatch` event on a repository (204)."""
        self._on_repository(repo, installation_id, "POST", f"/repos/{repo}/dispatches", step="github dispatch",
                            json={"event_type": event_type, "client_payload": client_payload}, expect_body=False)

    def get_repository(self, repo: str) -> dict:
        """A repository the app is installed on, as GitHub names it now ("Get a repository": its `id` and
        `full_name`); GitHubRefused (404) when the app is not installed there."""
        return _an_object(self._on_repository(repo, None, "GET", f"/repos/{repo}", step="github read repository"),
                          "github read repository")

    def get_pull(self, repo: str, number: int, *, installation_id: int | None = None) -> dict:
        """A pull request as GitHub shows it now."""
        return _an_object(self._on_repository(repo, installation_id, "GET", f"/repos/{repo}/pulls/{int(number)}",
                                              step="github read pull request"), "github read pull request")

    def is_collaborator(self, repo: str, login: str, *, installation_id: int | None = None) -> bool:
        """Whether GitHub counts `login` a collaborator of the repository ("Check if a user is a repository
        collaborator": 204 yes, 404 no; for a repository of an organization it counts members with access
        through teams and the base permissions, and owners). Metadata: read, which every app has. The
        answer is kept for COLLABORATOR_SECONDS per repository and login.

        GitHub answers 404 too when the installation whose token asked cannot see the repository (it left
        the installation since the event, or the payload names an installation gone): so a 404 counts as
        "not a collaborator" only once the repository's installation, read anew, is the one that asked; if
        another one has it now, it asks again; if none (404), that refusal is raised."""
        key = (repo.lower(), login.lower())
        cached = self._collaborators.get(key)
        now = self._clock()
        if cached is not None and now < cached[1]:
            return cached[0]
        username = quote(login, safe="")
        installation = int(installation_id) if installation_id is not None else self.installation_for(repo)
        for attempt in (1, 2):
            try:
                self._on_repository(repo, installation, "GET", f"/repos/{repo}/collaborators/{username}",
                                    step="github check collaborator", expect_body=False)
                answer = True
                break
            except GitHubRefused as exc:
                if exc.status != 404 or isinstance(exc, InstallationGone):
                    raise
            self._installations.pop(repo.lower(), None)
            current = self.installation_for(repo)  # raises GitHubRefused (404) when the app is on it no longer
            answer = False
            if current == installation or attempt == 2:
                break
            installation = current
        if len(self._collaborators) >= COLLABORATORS_KEPT:
            self._collaborators.pop(next(iter(self._collaborators)))
        self._collaborators[key] = (answer, now + COLLABORATOR_SECONDS)
        return answer

    def get_code_scanning_alert(self, repo: str, number: int, *, installation_id: int | None = None) -> dict:
        """A code scanning alert as GitHub shows it now (Code scanning alerts: read)."""
        step = "github read code scanning alert"
        return _an_object(self._on_repository(repo, installation_id, "GET", f"/repos/{repo}/code-scanning/alerts/{int(number)}",
                                              step=step), step)

    def list_check_runs(self, repo: str, ref: str, *, installation_id: int | None = None) -> list[dict[str, Any]]:
        """The latest check runs of a commit, as GitHub lists them ("List check runs for a Git reference", Checks:
        read): the first CHECK_RUNS (a release head has a few; the rest are not named)."""
        step = "github list check runs"
        ref = quote(ref, safe="")
        body = _an_object(self._on_repository(repo, installation_id, "GET", f"/repos/{repo}/commits/{ref}/check-runs",
                                              step=step, params={"per_page": CHECK_RUNS}), step)
        runs = body.get("check_runs")
        return [run for run in runs if isinstance(run, dict)] if isinstance(runs, list) else []

    def merge_pull(
        self, repo: str, number: int, *, sha: str, method: str, installation_id: int | None = None
    ) -> dict:
        """Merge a pull request only if its head is still `sha` (405 not mergeable, 409 head changed;
        WorkflowsRefused: it changes .github/workflows/ and the app lacks the Workflows permission)."""
        try:
            body = self._on_repository(repo, installation_id, "PUT", f"/repos/{repo}/pulls/{int(number)}/merge",
                                       step="github merge pull request", json={"sha": sha, "merge_method": method})
        except GitHubRefused as exc:  # any 4xx: GitHub documents neither the status of this refusal nor its words
            found = WORKFLOWS_REFUSAL.search(exc.reason)
            if found is None:
                raise
            raise WorkflowsRefused(str(exc), status=exc.status, reason=exc.reason, file=found.group(1)) from exc
        return body if isinstance(body, dict) else {}

    # -- transport ------------------------------------------------------------------------------------

    def _on_repository(self, repo: str, installation_id: int | None, method: str, path: str, *, step: str,
                       json: Any = None, expect_body: bool = True, params: dict[str, Any] | None = None) -> Any:
        """A call on a repository with a token of the app's installation on it: `installation_id` (from
        a payload or a record), else the one cached for the repository. An installation GitHub no longer
        knows (the app was uninstalled and installed again) is looked up anew, and the call made once more."""
        installation = int(installation_id) if installation_id is not None else self.installation_for(repo)
        try:
            return self._request(method, path, step=step, auth=installation, json=json, expect_body=expect_body,
                                 params=params)
        except InstallationGone:
            self._installations.pop(repo.lower(), None)
            if self.installation_for(repo) == installation:
                raise
        return self._request(method, path, step=step, auth=self.installation_for(repo), json=json, expect_body=expect_body,
                             params=params)

    def _request(
        self,
        method: str,
        path: str,
        *,
        step: str,
        auth: str | int,
        json: Any = None,
        expect_body: bool = True,
        params: dict[str, Any] | None = None,
    ) -> Any:
        response = self._send(method, self._api_url + path, step=step, auth=auth, json=json, params=params)
        return self._json(response, step) if expect_body else None

    def _object(self, method: str, path: str, step: str, *, auth: str | int) -> dict[str, Any]:
        """A call whose answer is a JSON object."""
        return _an_object(self._request(method, path, step=step, auth=auth), step)

    def _send(
        self,
        method: str,
        url: str,
        *,
        step: str,
        auth: str | int,
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> requests.Response:
        # A 401 may refuse a cached credential that GitHub revoked since (new permissions, a key
        # rotated): it is dropped and the call made once more with a fresh one. A second 401 is a
        # refusal (a wrong app id or key), which no later attempt fixes either.
        for attempt in (1, 2):
            response = self._send_once(method, url, step=step, auth=auth, params=params, json=json)
            if response.status_code != 401:
                break
            self._forget(auth)
            if attempt == 2:
                break
        self._raise_for_status(response, step)
        return response

    def _send_once(
        self,
        method: str,
        url: str,
        *,
        step: str,
        auth: str | int,
        params: dict[str, Any] | None,
        json: Any,
    ) -> requests.Response:
        # Credentials first: fetching an installation token is a call (and a deadline check) of its own.
        if auth == "jwt":
            credential = self.app_jwt()
        else:
            credential = self.installation_token(int(auth))
        deadline.check(step)
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": USER_AGENT,
            "Authorization": f"Bearer {credential}",
        }
        timeout = (deadline.timeout(CONNECT_TIMEOUT), deadline.timeout(READ_TIMEOUT))
        self.calls += 1
        try:
            return self._session.request(method, url, headers=headers, params=params, json=json, timeout=timeout)
        except requests.RequestException as exc:
            failure = "no answer in time" if isinstance(exc, requests.Timeout) else f"no answer ({type(exc).__name__})"
            raise GitHubUnavailable(f"{step}: {failure}", sent=may_have_arrived(exc)) from exc

    def _forget(self, auth: str | int) -> None:
        """Drop a credential GitHub refused, so that the next call gets a fresh one."""
        if auth == "jwt":
            self._jwt = None
        else:
            self._tokens.pop(int(auth), None)

    def _raise_for_status(self, response: requests.Response, step: str) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        reason = _reason(response)
        if status >= 500:
            raise GitHubUnavailable(f"{step}: GitHub answered {status}", status=status)
        if status == 429 or (status == 403 and _is_rate_limit(response, reason)):
            retry_after = self._retry_after(response, reason)
            raise GitHubUnavailable(f"{step}: rate limited ({status})", status=status, retry_after=retry_after)
        if 400 <= status < 500:
            message = f"{step}: GitHub refused ({status})" + (f": {reason}" if reason else "")
            raise GitHubRefused(message, status=status, reason=reason)
        # 1xx or an unfollowed 3xx: nothing pager can use; a later attempt may see a real answer.
        raise GitHubUnavailable(f"{step}: unexpected answer {status}", status=status)

    def _retry_after(self, response: requests.Response, reason: str) -> float | None:
        header = response.headers.get("retry-after")
        if header is not None:
            try:
                return max(0.0, float(header))
            except ValueError:
                pass
        if response.headers.get("x-ratelimit-remaining") == "0":
            reset = response.headers.get("x-ratelimit-reset")
            if reset is not None:
                try:
                    return max(0.0, float(reset) - self._clock())
                except ValueError:
                    pass
        if "secondary rate limit" in reason.lower():
            return SECONDARY_LIMIT_WAIT
        return None

    def _json(self, response: requests.Response, step: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise GitHubUnavailable(f"{step}: unreadable answer ({response.status_code})", status=response.status_code) from None

    def _on_api_host(self, url: str) -> str:
        """A page's link, on the configured API host as `GITHUB_API_URL` names it: the JWT is sent nowhere
        else. Its scheme, host and port compare as URLs do (case aside, a default port named or not); a link
        elsewhere, or none a URL can be made of, is one pager does not follow (GitHubRefused: the pass
        begins anew at the list's head)."""
        def origin(text: str) -> tuple[str, str, int | None]:
            parts = urlsplit(text)
            scheme = parts.scheme.lower()
            return scheme, (parts.hostname or "").lower(), parts.port or {"https": 443, "http": 80}.get(scheme)

        try:
            given = urlsplit(url)
            elsewhere = origin(url) != origin(self._api_url)
        except ValueError:  # a port that is no number
            elsewhere = True
        if elsewhere:
            raise GitHubRefused("github list deliveries: its next page's link is not on the GitHub API host", status=0)
        wanted = urlsplit(self._api_url)
        return given._replace(scheme=wanted.scheme, netloc=wanted.netloc).geturl()


@functools.lru_cache(maxsize=2)
def signing_key(pem: str) -> Any:
    """The app's private key, parsed. Parsing an RSA key checks it, which costs about 40 ms: a container whose
    services are built anew (its settings changed) signs with the key it parsed before, and only a rotated
    key is parsed again. ValueError, TypeError or UnsupportedAlgorithm for text that is not a key."""
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    return load_pem_private_key(normalize_pem(pem).encode(), password=None)


def normalize_pem(key: str) -> str:
    """A PEM key whose line breaks arrived escaped (a common way to put one into a variable), some or
    all of them: a PEM key never holds a backslash of its own."""
    return key.replace("\\n", "\n")


def _reason(response: requests.Response) -> str:
    """GitHub's `message` from a JSON error body, shortened; empty when there is none."""
    try:
        body = response.json()
    except ValueError:
        return ""
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        return ""
    return message if len(message) <= REASON_LIMIT else message[: REASON_LIMIT - 1] + "…"


def _is_rate_limit(response: requests.Response, reason: str) -> bool:
    headers = response.headers
    return (
        headers.get("x-ratelimit-remaining") == "0"
        or "retry-after" in headers
        or "rate limit" in reason.lower()
    )
