"""The limits between pager and its callers and callees that a busy fleet meets, as their owners document them.

`SecondaryLimits`: GitHub's secondary rate limits for the REST API (docs.github.com, "Rate limits for the REST
API", "About secondary rate limits" and "Calculating points for the secondary rate limit"):
- no more than 900 points a minute to a single REST endpoint, where most GET, HEAD and OPTIONS requests count
  1 point and most POST, PATCH, PUT and DELETE requests 5;
- no more than 80 content-generating requests a minute and 500 an hour. Which requests generate content the
  docs do not list: `content` names the endpoints counted (`CONTENT`: a dispatch and a merge); whether a
  redelivery is one is not documented, so a world can count it (`REDELIVERY`) to see what pager does if so.
Over a limit GitHub answers 403 (or 429) with a message saying a secondary rate limit was exceeded, and "if
the retry-after response header is present, you should not retry your request until after that many seconds
has elapsed ... Otherwise, wait for at least one minute": the fake sends the header, the seconds until the
window has room again, unless a world sets `retry_after` False (then none, and the client must wait its
minute). An endpoint is its route (`endpoint`: owner, repository, numbers, a commit's ref, a login as
placeholders). Assumed, not documented: a minute and an hour are windows sliding with the world's clock, and a
refused request is not counted (GitHub warns that requests while limited may get an integration banned: pager
makes none before the wait it was given).

`Throttle`: API Gateway's throttling of an HTTP API ("Throttle requests to your HTTP APIs"): a token bucket,
`rate` requests a second steady with a `burst` on top (template.yaml: ApiRateLimit 50, ApiBurstLimit 200);
a request over it is answered 429 "Too Many Requests" without reaching the function.
"""

from __future__ import annotations

import math
import re
from collections import deque
from dataclasses import dataclass, field

from .faults import github_error
from .http import HttpResponse

POINTS_A_MINUTE = 900
CONTENT_A_MINUTE = 80
CONTENT_AN_HOUR = 500
ROUTE = ((re.compile(r"^/repos/[^/]+/[^/]+"), "/repos/{owner}/{repo}"), (re.compile(r"/commits/[^/]+"), "/commits/{ref}"),
         (re.compile(r"/collaborators/[^/]+"), "/collaborators/{username}"),
         (re.compile(r"^/app-manifests/[^/]+"), "/app-manifests/{code}"), (re.compile(r"/\d+(?=/|$)"), "/{n}"))
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})
REDELIVERY = r"POST /app/hook/deliveries/\d+/attempts"
CONTENT = (r"POST /repos/[^/]+/[^/]+/dispatches", r"PUT /repos/[^/]+/[^/]+/pulls/\d+/merge")
MESSAGE = ("You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach "
           "out to GitHub Support for help, please include the request ID.")


def endpoint(method: str, path: str) -> str:
    """The endpoint a request is to, as the points count it: its method and its route, the path's owner,
    repository, numbers, commit ref and login as placeholders (every redelivery is one endpoint, and every
    commit's check runs in every repository another)."""
    for pattern, placeholder in ROUTE:
        path = pattern.sub(placeholder, path)
    return f"{method} {path}"


@dataclass
class _Window:
    """What was counted in the last `seconds`: (at, amount), oldest first."""

    seconds: float
    limit: int
    seen: deque[tuple[float, int]] = field(default_factory=deque)

    def wait(self, now: float, amount: int) -> float:
        """0 when `amount` fits now; else the seconds until it would."""
        while self.seen and self.seen[0][0] <= now - self.seconds:
            self.seen.popleft()
        used = sum(n for _, n in self.seen)
        if used + amount <= self.limit:
            return 0.0
        for at, n in self.seen:  # the oldest leave first
            used -= n
            if used + amount <= self.limit:
                return at + self.seconds - now
        return self.seconds

    def add(self, now: float, amount: int) -> None:
        self.seen.append((now, amount))


class SecondaryLimits:
    """GitHub's secondary rate limits (see the module's docstring); `check` before a request is handled."""

    def __init__(self, *, content: tuple[str, ...] = CONTENT, retry_after: bool = True) -> None:
        self.content = tuple(re.compile(p) for p in content)
        self.retry_after = retry_after
        self._points: dict[str, _Window] = {}
        self._minute = _Window(60.0, CONTENT_A_MINUTE)
        self._hour = _Window(3600.0, CONTENT_AN_HOUR)
        self.refused = 0

    def check(self, method: str, path: str, now: float) -> HttpResponse | None:
        """None when the request may go on (it is counted); GitHub's 403 with `retry-after` when it may not."""
        points = 5 if method in WRITES else 1
        window = self._points.setdefault(endpoint(method, path), _Window(60.0, POINTS_A_MINUTE))
        content = any(p.fullmatch(f"{method} {path}") for p in self.content)
        waits = [window.wait(now, points), *(w.wait(now, 1) for w in ((self._minute, self._hour) if content else ()))]
        wait = max(waits)
        if wait > 0:
            self.refused += 1
            refusal = github_error(403, MESSAGE)
            headers = {"retry-after": str(max(1, math.ceil(wait)))} if self.retry_after else {}
            return HttpResponse(refusal.status, refusal.body, headers)
        window.add(now, points)
        if content:
            self._minute.add(now, 1)
            self._hour.add(now, 1)
        return None


class Throttle:
    """API Gateway's token bucket (see the module's docstring): `take` is False for a request it answers 429."""

    def __init__(self, rate: float = 50.0, burst: int = 200) -> None:
        self.rate, self.burst = rate, burst
        self.tokens, self.at = float(burst), None
        self.refused = 0

    def take(self, now: float) -> bool:
        if self.at is not None:
            self.tokens = min(float(self.burst), self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        self.refused += 1
        return False
