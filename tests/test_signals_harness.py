"""The harness the signal tests drive deliveries through, and its own tests.

A `Harness` is pager as the webhook runs it: real `pager.webhook.handle_github` /
`handle_telegram` (signatures, 500 on Transient), the real GitHub and Telegram clients on a
`responses` mock, a MemoryStore, a virtual clock. Behind the mock sit a fake chat (messages by id,
edits applied, so the chat reads as the maintainer sees it) and a fake GitHub (installations,
dispatches, pull requests, merges).

Every external call (each store load and save, each HTTP request) is logged in order, and a fault
can be armed at the n-th call from now: a Telegram 502 or a 429 with a long retry_after, a GitHub
502, a DynamoDB throttle (StoreUnavailable). `failure_matrix` uses that: it runs a scenario
undisturbed, then once for every call of its last step and every fault that call can meet, and
checks that the step failed (answered 500) and that delivering it again ends in exactly the
undisturbed state: the same records, the same chat, the same dispatches and merges.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import pytest
import requests
import responses

from conftest import BOT_TOKEN, TELEGRAM_SECRET, WEBHOOK_SECRET, github_event, load_payload, telegram_event
from pager.errors import StoreUnavailable, Transient
from pager.github import GitHub
from pager.services import Services
from pager.settings import Settings
from pager.store import MemoryStore, Record
from pager.telegram import Telegram
from pager.webhook import handle_github, handle_telegram

from pager.signals import records

GITHUB_API = "https://api.github.test"
TELEGRAM_API = "https://api.telegram.test"
CHAT_ID = "-1001"
ALLOWED_USER = 42
CONTROL = "maintainer/pager"
REPO = "Codertocat/Hello-World"
INSTALLATION = 1
START = 1_800_000_000.0  # the virtual clock's start (2027-01-15)


def settings_for(private_key: str, **overrides: Any) -> Settings:
    values = dict(
        table="pager-test",
        github_app_id="12345",
        github_app_slug="pager-test",
        github_private_key=private_key,
        github_webhook_secret=WEBHOOK_SECRET,
        telegram_bot_token=BOT_TOKEN,
        telegram_webhook_secret=TELEGRAM_SECRET,
        telegram_chat_id=CHAT_ID,
        control_repository=CONTROL,
        telegram_allowed_users=frozenset({ALLOWED_USER}),
        github_api_url=GITHUB_API,
        telegram_api_url=TELEGRAM_API,
    )
    values.update(overrides)
    return Settings(**values)


# -- payloads ----------------------------------------------------------------------------------------


def payload(event: str, action: str | None, /, *, variant: str = "", **changes: Any) -> dict[str, Any]:
    """GitHub's example payload for an event and action, in the harness's repository and installation.

    `changes` set nested fields by dotted path, e.g. `**{"issue.author_association": "NONE"}`.
    """
    if variant:
        from conftest import FIXTURES

        data = json.loads((FIXTURES / event / f"{action}.{variant}.payload.json").read_text())
    else:
        data = load_payload(event, action)
    base = load_payload("issues", "opened")["repository"]
    data["repository"] = copy.deepcopy(base)
    data["installation"] = {"id": INSTALLATION}
    for path, value in changes.items():
        set_path(data, path, value)
    return data


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    current = data
    for name in parents:
        current = current.setdefault(name, {})
    current[last] = value


def iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the fakes behind the mock -------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str  # telegram-5xx, telegram-429 (30 s), telegram-429-short (2 s), github-5xx, store
    at: int | None  # index in the call log; None: the next call of the kind's service ...
    name: str | None = None  # ... with this name, if given

    def matches(self, index: int, service: str, name: str) -> bool:
        if self.at is not None:
            return self.at == index
        return self.kind.split("-")[0] == service and self.name in (None, name)


class Calls:
    """The ordered log of external calls, and the one armed fault."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.fault: Fault | None = None
        self.fired: list[tuple[str, str]] = []
        self._lock = threading.RLock()

    def arm(self, kind: str, after: int) -> None:
        """Fail the call `after` calls from now (0: the next one) with `kind`."""
        with self._lock:
            self.fault = Fault(kind, len(self.log) + after)

    def arm_next(self, kind: str, name: str | None = None) -> None:
        """Fail the next call of the kind's service (named `name`, if given) with `kind`."""
        with self._lock:
            self.fault = Fault(kind, None, name)

    def disarm(self) -> None:
        with self._lock:
            self.fault = None

    def call(self, service: str, name: str) -> str | None:
        """Log a call; the fault kind when this call must fail."""
        with self._lock:
            index = len(self.log)
            self.log.append((service, name))
            if self.fault is not None and self.fault.matches(index, service, name):
                kind = self.fault.kind
                self.fault = None
                self.fired.append((service, name))
                return kind
        return None


class FlakyStore:
    """A MemoryStore whose calls are logged and can be made to fail as a throttled DynamoDB.

    (tests/test_deliveries.py runs the same harness on DynamoStore over moto, with the throttle
    raised by the boto3 client instead.)"""

    def __init__(self, calls: Calls) -> None:
        self.inner = MemoryStore()
        self.calls = calls

    def load(self, key: str) -> Record:
        if self.calls.call("store", f"load {key}"):
            raise StoreUnavailable(f"DynamoDB load {key}: ThrottlingException")
        return self.inner.load(key)

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        if self.calls.call("store", f"save {record.key}"):
            raise StoreUnavailable(f"DynamoDB save {record.key}: ThrottlingException")
        return self.inner.save(record, data, expires_at=expires_at)

    def dump(self) -> dict[str, Any]:
        return self.inner.dump()


class FakeChat:
    """Telegram's side: the chat as the maintainer sees it, and what the bot asked of it."""

    def __init__(self) -> None:
        self.messages: dict[int, dict[str, Any]] = {}
        self.sent: list[int] = []
        self.edits: list[int] = []
        self.answers: list[tuple[str, str | None]] = []
        self._ids = itertools.count(100)
        self._lock = threading.Lock()

    def handle(self, method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if method == "sendMessage":
                message_id = next(self._ids)
                self.messages[message_id] = {
                    "text": body["text"],
                    "buttons": _labels(body.get("reply_markup")),
                    "data": _callback_data(body.get("reply_markup")),
                    "notify": not body.get("disable_notification", False),
                    "thread": body.get("message_thread_id"),
                }
                self.sent.append(message_id)
                return 200, {"ok": True, "result": {"message_id": message_id, "chat": {"id": int(CHAT_ID)}}}
            if method == "editMessageText":
                message = self.messages.get(body["message_id"])
                if message is None:
                    return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message to edit not found"}
                buttons = _labels(body.get("reply_markup"))
                if message["text"] == body["text"] and message["buttons"] == buttons:
                    return 400, {
                        "ok": False,
                        "error_code": 400,
                        "description": "Bad Request: message is not modified: specified new message content "
                        "and reply markup are exactly the same as a current content and reply markup of the message",
                    }
                message.update(text=body["text"], buttons=buttons, data=_callback_data(body.get("reply_markup")))
                self.edits.append(body["message_id"])
                return 200, {"ok": True, "result": {"message_id": body["message_id"]}}
            if method == "answerCallbackQuery":
                self.answers.append((body["callback_query_id"], body.get("text")))
                return 200, {"ok": True, "result": True}
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}

    def view(self) -> dict[int, tuple[str, Any]]:
        """Each message as it reads now: its text and its buttons' labels."""
        with self._lock:
            return {mid: (m["text"], m["buttons"]) for mid, m in self.messages.items()}

    def delete(self, message_id: int) -> None:
        with self._lock:
            del self.messages[message_id]

    def button_data(self, message_id: int, label_start: str) -> str:
        for row in self.messages[message_id]["data"]:
            for label, data in row:
                if label.startswith(label_start):
                    return data
        raise AssertionError(f"message {message_id} has no button {label_start!r}")


def _labels(markup: Any) -> Any:
    if not markup:
        return None
    return tuple(tuple(button["text"] for button in row) for row in markup["inline_keyboard"])


def _callback_data(markup: Any) -> list[list[tuple[str, str]]]:
    if not markup:
        return []
    return [[(b["text"], b["callback_data"]) for b in row] for row in markup["inline_keyboard"]]


class FakeGitHub:
    """GitHub's side: installations, repository dispatches, pull requests and merges."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.dispatches: list[dict[str, Any]] = []
        self.merges: list[dict[str, Any]] = []
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.merge_refusal: tuple[int, str] | None = None
        self._lock = threading.Lock()

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        with self._lock:
            if method == "POST" and re.fullmatch(r"/app/installations/\d+/access_tokens", path):
                return 201, {"token": "ghs_test_installation_token", "expires_at": iso(self.clock() + 3600)}
            found = re.fullmatch(r"/repos/([^/]+/[^/]+)/(.*)", path)
            if not found:
                return 404, {"message": "Not Found"}
            repo, rest = found.groups()
            if method == "GET" and rest == "installation":
                return 200, {"id": INSTALLATION}
            if method == "POST" and rest == "dispatches":
                self.dispatches.append({"repository": repo, **body})
                return 204, None
            pull = re.fullmatch(r"pulls/(\d+)(/merge)?", rest)
            if pull:
                number = int(pull.group(1))
                current = self.pulls.get((repo, number))
                if current is None:
                    return 404, {"message": "Not Found"}
                if method == "GET" and not pull.group(2):
                    return 200, copy.deepcopy(current)
                if method == "PUT" and pull.group(2):
                    if self.merge_refusal is not None:
                        status, message = self.merge_refusal
                        return status, {"message": message}
                    if body.get("sha") != current["head"]["sha"]:
                        return 409, {"message": "Head branch was modified. Review and try the merge again."}
                    if current.get("merged"):
                        return 405, {"message": "Pull Request is not mergeable"}
                    current.update(merged=True, state="closed", merge_commit_sha="5eaf00d" + "0" * 33)
                    self.merges.append({"repository": repo, "number": number, **body})
                    return 200, {"sha": current["merge_commit_sha"], "merged": True, "message": "Pull Request successfully merged"}
            return 404, {"message": "Not Found"}


# -- the harness ---------------------------------------------------------------------------------------


class Harness:
    """pager with fakes behind the real clients; use as a context manager (it holds the mock)."""

    def __init__(self, private_key: str, *, store: Callable[[Calls], Any] | None = None, **settings_overrides: Any) -> None:
        self.now = START
        self.calls = Calls()
        self.store = store(self.calls) if store is not None else FlakyStore(self.calls)
        self.chat = FakeChat()
        self.hub = FakeGitHub(lambda: self.now)
        self.sleeps: list[float] = []
        self.settings = settings_for(private_key, **settings_overrides)
        session = requests.Session()
        self.services = Services(
            settings=self.settings,
            store=self.store,
            github=GitHub(session, app_id=self.settings.github_app_id, private_key=private_key, api_url=GITHUB_API, clock=lambda: self.now),
            telegram=Telegram(session, token=BOT_TOKEN, api_url=TELEGRAM_API, sleep=self.sleeps.append),
            clock=lambda: self.now,
            sleep=self.sleeps.append,
        )
        self._guids = itertools.count(1)
        self._callbacks = itertools.count(1)
        self._updates = itertools.count(1)
        self.mock = responses.RequestsMock(assert_all_requests_are_fired=False)
        self.mock.add_callback(responses.POST, re.compile(re.escape(TELEGRAM_API) + r"/bot[^/]+/\w+"), callback=self._telegram)
        for method in (responses.GET, responses.POST, responses.PUT):
            self.mock.add_callback(method, re.compile(re.escape(GITHUB_API) + r"/.*"), callback=self._github)

    def __enter__(self) -> "Harness":
        self.mock.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.mock.stop()
        self.mock.reset()

    # transport
    def _telegram(self, request: Any) -> tuple[int, dict[str, str], str]:
        method = request.url.rsplit("/", 1)[-1]
        fault = self.calls.call("telegram", method)
        if fault == "telegram-5xx":
            return 502, {}, json.dumps({"ok": False, "error_code": 502, "description": "Bad Gateway"})
        if fault in ("telegram-429", "telegram-429-short"):
            wait = 30 if fault == "telegram-429" else 2
            body = {"ok": False, "error_code": 429, "description": f"Too Many Requests: retry after {wait}", "parameters": {"retry_after": wait}}
            return 429, {}, json.dumps(body)
        status, body = self.chat.handle(method, json.loads(request.body))
        return status, {"content-type": "application/json"}, json.dumps(body)

    def _github(self, request: Any) -> tuple[int, dict[str, str], str]:
        path = re.sub(r"^" + re.escape(GITHUB_API), "", request.url.split("?", 1)[0])
        fault = self.calls.call("github", f"{request.method} {path}")
        if fault == "github-5xx":
            return 502, {}, json.dumps({"message": "Server Error"})
        body = json.loads(request.body) if request.body else None
        status, answer = self.hub.handle(request.method, path, body)
        return status, {"content-type": "application/json"}, "" if answer is None else json.dumps(answer)

    # driving
    def deliver(self, event: str, body: dict[str, Any], *, guid: str | None = None) -> tuple[int, dict[str, Any]]:
        """POST /github as GitHub would send it; the webhook's answer (status, body)."""
        guid = guid or f"guid-{next(self._guids)}"
        return handle_github(github_event(event, body, guid=guid), self.services)

    def slow_chat(self, seconds: float = 0.2) -> None:
        """Telegram takes `seconds` per call, so that deliveries sent together overlap."""
        fast = self.chat.handle

        def slow(method: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
            time.sleep(seconds)
            return fast(method, body)

        self.chat.handle = slow

    def race(self, event: str, bodies: list[dict[str, Any]]) -> list[int]:
        """Deliver the bodies at the same moment (one thread and guid each); the answers. A delivery
        answered 500 is delivered again afterwards, as the sweep would, and must then pass."""
        start = threading.Barrier(len(bodies))
        answers: list[tuple[dict[str, Any], int]] = []

        def deliver(i: int, body: dict[str, Any]) -> None:
            start.wait()
            answers.append((body, self.deliver(event, body, guid=f"race-{i}")[0]))

        threads = [threading.Thread(target=deliver, args=(i, b)) for i, b in enumerate(bodies)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for body, status in answers:
            if status != 200:
                assert status == 500
                assert self.deliver(event, body)[0] == 200
        return [status for _, status in answers]

    def update(self, update: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST /telegram with a valid secret token; the endpoint's answer."""
        return handle_telegram(telegram_event(update), self.services)

    def press_update(self, data: str, *, message_id: int, user: int = ALLOWED_USER, chat: str = CHAT_ID,
                     callback_id: str | None = None) -> dict[str, Any]:
        """A callback_query update as Telegram sends it for a press on a button."""
        return {
            "update_id": next(self._updates),
            "callback_query": {
                "id": callback_id or f"cb-{next(self._callbacks)}",
                "from": {"id": user, "is_bot": False, "first_name": "Maintainer"},
                "message": {"message_id": message_id, "chat": {"id": int(chat), "type": "supergroup"}, "date": int(self.now)},
                "chat_instance": "1",
                "data": data,
            },
        }

    def press(self, label_start: str, message_id: int | None = None, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        """Press the button whose label starts with `label_start` on a message (the newest by default)."""
        message_id = message_id if message_id is not None else max(self.chat.messages)
        data = self.chat.button_data(message_id, label_start)
        return self.update(self.press_update(data, message_id=message_id, **kwargs))

    # looking
    def snapshot(self, *, presses: bool = True) -> dict[str, Any]:
        """What a maintainer and the table would show: records, the chat, dispatches, merges."""
        dump = self.store.dump()
        if not presses:
            dump = {k: v for k, v in dump.items() if not k.startswith("press#")}
        return {
            "records": dump,
            "chat": self.chat.view(),
            "dispatches": copy.deepcopy(self.hub.dispatches),
            "merges": copy.deepcopy(self.hub.merges),
        }

    def effects(self) -> dict[str, Any]:
        """Every side effect so far, edits included: what 'the same side effects' compares."""
        return {
            "sent": list(self.chat.sent),
            "edits": list(self.chat.edits),
            "dispatches": copy.deepcopy(self.hub.dispatches),
            "merges": copy.deepcopy(self.hub.merges),
        }

    def pending_claims(self) -> list[str]:
        return [key for key, data in self.store.dump().items() if records.PENDING in data]


@pytest.fixture
def harness(private_key_pem: str):
    with Harness(private_key_pem) as h:
        yield h


def delivering(event: str, body: dict[str, Any]) -> Callable[[Harness], int]:
    """A scenario's act: deliver this body; the webhook's status."""
    return lambda h: h.deliver(event, body)[0]


@pytest.fixture
def make_harness(private_key_pem: str):
    """A factory of fresh harnesses (each started, all stopped at the end of the test)."""
    made: list[Harness] = []

    def make(**overrides: Any) -> Harness:
        h = Harness(private_key_pem, **overrides)
        h.__enter__()
        made.append(h)
        return h

    yield make
    for h in reversed(made):  # patches undo last-in first-out
        h.__exit__(None, None, None)


# -- the failure matrix -------------------------------------------------------------------------------

FAULTS_BY_SERVICE = {
    "telegram": ("telegram-5xx", "telegram-429"),
    "github": ("github-5xx",),
    "store": ("store",),
}


@dataclass
class Scenario:
    """A signal's case: `setup` brings the state before, `act` is the delivery (or press) under test.

    `act` returns the answer's status. `again` delivers it once more after a failure (by default
    `act` itself); a press failed at its action is pressed anew, so it has its own `again`.
    """

    name: str
    setup: Callable[[Harness], None]
    act: Callable[[Harness], int]
    again: Callable[[Harness, int], int] | None = None
    presses: bool = True  # compare press records too (not when a press is made anew)


@dataclass
class MatrixReport:
    calls: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[int, str, tuple[str, str]]] = field(default_factory=list)
    absorbed: list[tuple[int, str, tuple[str, str]]] = field(default_factory=list)


def undisturbed(make: Callable[..., Harness], scenario: Scenario) -> tuple[Harness, list[tuple[str, str]]]:
    h = make()
    scenario.setup(h)
    start = len(h.calls.log)
    status = scenario.act(h)
    assert status == 200, f"{scenario.name}: the undisturbed delivery answered {status}"
    assert not h.pending_claims()
    return h, h.calls.log[start:]


def failure_matrix(make: Callable[..., Harness], scenario: Scenario) -> MatrixReport:
    """Fail each call of `scenario.act` in turn with each fault it can meet, then deliver again."""
    base, calls = undisturbed(make, scenario)
    expected = base.snapshot(presses=scenario.presses)
    report = MatrixReport(calls=calls)
    assert calls, f"{scenario.name}: the delivery made no external call"
    for index, (service, name) in enumerate(calls):
        for kind in FAULTS_BY_SERVICE[service]:
            h = make()
            scenario.setup(h)
            h.calls.arm(kind, after=index)
            status = scenario.act(h)
            assert h.calls.fired == [(service, name)], (
                f"{scenario.name}: call {index} was {(service, name)} undisturbed, the fault met {h.calls.fired}"
            )
            where = f"{scenario.name}: {kind} at call {index} ({service} {name})"
            if status == 200:
                # Only the table's trouble at recording an effect may be absorbed (it is tried again).
                assert service == "store", f"{where} answered 200"
                report.absorbed.append((index, kind, (service, name)))
            else:
                assert status == 500, f"{where} answered {status}"
                report.failed.append((index, kind, (service, name)))
                assert not h.pending_claims(), f"{where} left a claim behind"
                again = scenario.again or (lambda hh, _status: scenario.act(hh))
                assert again(h, status) == 200, f"{where}: the delivery again did not pass"
            assert h.snapshot(presses=scenario.presses) == expected, f"{where}: the end state differs from an undisturbed delivery"
    return report


# -- the harness's own tests ---------------------------------------------------------------------------


def test_the_fake_chat_applies_edits_and_says_not_modified_and_not_found_like_telegram():
    chat = FakeChat()
    status, answer = chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "a"})
    message_id = answer["result"]["message_id"]
    assert chat.handle("editMessageText", {"message_id": message_id, "text": "b"})[0] == 200
    status, answer = chat.handle("editMessageText", {"message_id": message_id, "text": "b"})
    assert status == 400 and "message is not modified" in answer["description"]
    status, answer = chat.handle("editMessageText", {"message_id": 999, "text": "b"})
    assert status == 400 and "message to edit not found" in answer["description"]
    assert chat.view() == {message_id: ("b", None)}


def test_an_armed_fault_fires_once_at_the_chosen_call(harness):
    harness.calls.arm("store", after=1)
    harness.store.load("a")
    with pytest.raises(StoreUnavailable):
        harness.store.load("b")
    harness.store.load("c")
    assert harness.calls.fired == [("store", "load b")]
    assert [name for _, name in harness.calls.log] == ["load a", "load b", "load c"]


def test_a_telegram_fault_reaches_the_client_as_unavailable(harness):
    harness.calls.arm("telegram-429", after=0)
    with pytest.raises(Transient):
        harness.services.telegram.send_message(CHAT_ID, "x")
    assert harness.services.telegram.send_message(CHAT_ID, "x") == 100
