"""The fake world's one fault model.

Every call to GitHub, Telegram and the table goes through `Faults.call(service, name)`, which logs it
in order and says whether it must fail. Names are what a person would recognise:

    github     "POST /repos/o/r/dispatches", "GET /app/hook/deliveries", ...
    telegram   "sendMessage", "editMessageText", "answerCallbackQuery", ...
    store      "load alarm#186853002", "save contribution#186853002#issue#1", ...

A rule matches calls of one service (by a regular expression on the name, or by the call's place in
the log) and answers the next `count` of them with a `Fault`: an HTTP status with the body and
headers the real service sends for it, or, for the table, a throttle. Named faults (`KINDS`) are the
ones the failure matrix arms at every call of a step:

    telegram-5xx        502 Bad Gateway, as Telegram's error object
    telegram-429        429 with retry_after 30 (longer than pager waits: the step fails)
    telegram-429-short  429 with retry_after 2 (pager waits and tries once more)
    github-5xx          502 with GitHub's {"message": ...}
    github-no-answer    GitHub acts, but its answer never comes (the client's read times out)
    telegram-no-answer  the same for Telegram
    store               DynamoDB throttled after boto's own retries
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Fault:
    """What a failing call answers: an HTTP status, body and headers. Status 0: the table throttles,
    or, for GitHub and Telegram, no answer comes: the call acts and its answer times out, or (`body`
    "reset") the call acts and the connection is reset before the answer, or ("unreachable") the
    connection is never made and nothing acts."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def no_answer(self) -> bool:
        return self.status == 0

    @property
    def acts(self) -> bool:
        """Whether the service acts although no answer comes."""
        return self.body != "unreachable"


def telegram_error(status: int, description: str, **parameters: Any) -> dict[str, Any]:
    """Telegram's error object (core.telegram.org/bots/api#making-requests): ok false, error_code, description."""
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if parameters:
        body["parameters"] = parameters
    return body


def telegram_flood(retry_after: int) -> Fault:
    """Telegram's flood limit: 429 "Too Many Requests: retry after N" with parameters.retry_after."""
    return Fault(429, telegram_error(429, f"Too Many Requests: retry after {retry_after}", retry_after=retry_after))


def github_error(status: int, message: str = "", *, errors: list[dict[str, Any]] | None = None) -> Fault:
    """GitHub's error answer: a JSON object with `message` and, for a refusal, `documentation_url`
    (docs.github.com, REST API troubleshooting; the OpenAPI description's basic-error and
    validation-error, whose `errors` list what failed: each with `code`, and `resource`, `field`,
    `value` where they apply)."""
    default = {401: "Bad credentials", 403: "Forbidden", 404: "Not Found", 422: "Validation Failed"}
    text = message or default.get(status) or ("Server Error" if status >= 500 else "Error")
    if status >= 500:
        return Fault(status, {"message": text})
    body: dict[str, Any] = {"message": text, "documentation_url": "https://docs.github.com/rest"}
    if errors is not None:
        body["errors"] = [dict(error) for error in errors]
    return Fault(status, body)


KINDS: dict[str, Fault] = {
    "telegram-5xx": Fault(502, telegram_error(502, "Bad Gateway")),
    "telegram-429": telegram_flood(30),
    "telegram-429-short": telegram_flood(2),
    "github-5xx": github_error(502),
    "github-no-answer": Fault(0),
    "telegram-no-answer": Fault(0),
    "github-reset": Fault(0, "reset"),
    "telegram-reset": Fault(0, "reset"),
    "github-unreachable": Fault(0, "unreachable"),
    "telegram-unreachable": Fault(0, "unreachable"),
    "store": Fault(0),
}

# The faults each service can meet, as the failure matrix tries them at every call.
FAULTS_BY_SERVICE = {
    "telegram": ("telegram-5xx", "telegram-429"),
    "github": ("github-5xx",),
    "store": ("store",),
}


@dataclass
class Rule:
    service: str
    fault: Fault
    pattern: str | None = None  # a regular expression searched in the call's name; None: any
    at: int | None = None  # the call's place in the log instead
    count: int = 1
    kind: str = ""

    def matches(self, index: int, service: str, name: str) -> bool:
        if service != self.service or self.count <= 0:
            return False
        if self.at is not None:
            return index == self.at
        return self.pattern is None or re.search(self.pattern, name) is not None


class Faults:
    """The ordered log of the world's calls, and the rules that make some of them fail."""

    def __init__(self, *, record: bool = True) -> None:
        self.record = record  # a long simulation keeps no log
        self.log: list[tuple[str, str]] = []
        self.fired: list[tuple[str, str]] = []
        self.rules: list[Rule] = []
        self.observers: list[Callable[[str, str], None]] = []
        self._calls = 0
        self._lock = threading.RLock()

    # -- arming

    def fail(self, service: str, pattern: str | None = None, *, status: int | None = None, kind: str | None = None,
             fault: Fault | None = None, count: int = 1, body: Any = None, headers: dict[str, str] | None = None) -> Rule:
        """Fail the next `count` calls of `service` whose name matches `pattern` (None: any call)."""
        rule = Rule(service, self._fault(service, status, kind, fault, body, headers), pattern=pattern, count=count, kind=kind or "")
        with self._lock:
            self.rules.append(rule)
        return rule

    def fail_call(self, after: int, kind: str) -> Rule:
        """Fail the call `after` calls from now (0: the next call of any service) with a named fault."""
        service = kind.split("-")[0]
        with self._lock:
            rule = Rule(service, KINDS[kind], at=self._calls + after, kind=kind)
            self.rules.append(rule)
        return rule

    def fail_next(self, kind: str, name: str | None = None) -> Rule:
        """Fail the next call of the kind's service (the one called `name`, if given) with a named fault."""
        pattern = None if name is None else "^" + re.escape(name) + "$"
        with self._lock:
            rule = Rule(kind.split("-")[0], KINDS[kind], pattern=pattern, kind=kind)
            self.rules.append(rule)
        return rule

    def heal(self) -> None:
        with self._lock:
            self.rules.clear()

    @staticmethod
    def _fault(service: str, status: int | None, kind: str | None, fault: Fault | None, body: Any,
               headers: dict[str, str] | None) -> Fault:
        if fault is not None:
            return fault
        if kind is not None:
            return KINDS[kind]
        if status is None:
            raise ValueError("a rule needs a status, a kind or a fault")
        if body is None and service == "telegram":
            body = telegram_error(status, "Bad Gateway" if status >= 500 else "Bad Request")
        elif body is None and service == "github":
            body = github_error(status).body
        return Fault(status, body, dict(headers or {}))

    # -- calling

    def call(self, service: str, name: str) -> Fault | None:
        """Log a call; the fault it meets, if a rule says so. Observers see it first (a race may hold it)."""
        for observe in self.observers:
            observe(service, name)
        with self._lock:
            index = self._calls
            self._calls += 1
            if self.record:
                self.log.append((service, name))
            for rule in self.rules:
                if rule.matches(index, service, name):
                    rule.count -= 1
                    if rule.count <= 0:
                        self.rules.remove(rule)
                    self.fired.append((service, name))
                    fault = rule.fault
                    break
            else:
                fault = None
        return fault
