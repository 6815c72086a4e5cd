"""What the tests share besides fixtures (those are in conftest.py): the operator settings of a test
deployment, GitHub's and Telegram's requests signed with the test secrets, the sweep seen in the fake
world, and small readers. The fake world itself (GitHub, Telegram, the table, payloads, events, the
failure matrix) is the package `pager_world` (sim/pager_world), shared with the demo and the bench.
"""

from __future__ import annotations

import importlib.util
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pager import bootstrap
from pager.settings import Settings
from pager.signals.alarm import delivery_times, entries_now
from pager.sweep import run_sweep
from pager_world.events import LambdaContext, scheduled_event
from pager_world.events import github_event as _github_event
from pager_world.events import sign as _sign
from pager_world.events import telegram_event as _telegram_event
from pager_world.payloads import example
from pager_world.world import BOT_TOKEN, GITHUB_API, TELEGRAM_API, TELEGRAM_SECRET, WEBHOOK_SECRET, World

OWN_MESSAGE = ("⚙️ ", "✅ pager")  # how pager's own alarm begins, red or well again

TEST_ENV = {
    "PAGER_TABLE": "pager-test",
    "GITHUB_APP_ID": "12345",
    "GITHUB_APP_SLUG": "pager-test",
    "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
    "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
    "TELEGRAM_WEBHOOK_SECRET": TELEGRAM_SECRET,
    "TELEGRAM_CHAT_ID": "-1001",
    "TELEGRAM_ALLOWED_USERS": "42",
    "CONTROL_REPOSITORY": "maintainer/pager",
    "GITHUB_API_URL": GITHUB_API,
    "TELEGRAM_API_URL": TELEGRAM_API,
}


def load_payload(event: str, action: str | None = None) -> dict[str, Any]:
    """GitHub's example payload for an event and action (a fresh copy each call)."""
    return example(event, action)


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return _sign(body, secret)


def github_event(event: str, payload: dict[str, Any] | bytes, *, secret: str | None = WEBHOOK_SECRET, **kwargs: Any) -> dict[str, Any]:
    """POST /github as GitHub sends it, signed with the test secret unless told otherwise."""
    return _github_event(event, payload, secret=secret, **kwargs)


def telegram_event(update: dict[str, Any], *, secret: str | None = TELEGRAM_SECRET) -> dict[str, Any]:
    return _telegram_event(update, secret=secret)


def make_settings(**overrides) -> Settings:
    base = dict(
        table="pager-test",
        github_app_id="12345",
        github_app_slug="pager-test",
        github_private_key="unused",
        github_webhook_secret="unused",
        telegram_bot_token="unused",
        telegram_webhook_secret="unused",
        telegram_chat_id="-1001",
        control_repository="maintainer/pager",
    )
    base.update(overrides)
    return Settings(**base)


# -- the sweep in the fake world -----------------------------------------------------------------------

START = datetime(2026, 11, 12, 8, 0, tzinfo=UTC).timestamp()
ROOT = Path(__file__).resolve().parents[1]


def load_sweep_function():
    spec = importlib.util.spec_from_file_location("sweep_function", ROOT / "functions" / "sweep" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_webhook_function():
    spec = importlib.util.spec_from_file_location("webhook_function", ROOT / "functions" / "webhook" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_webhook_function = None


def invoke_webhook(world: World, event: Any) -> tuple[int, dict[str, Any]]:
    """The webhook function (functions/webhook/app.py:lambda_handler) given `event`, with the world's services:
    its status and its body (JSON) as API Gateway would send them."""
    global _webhook_function
    if _webhook_function is None:
        _webhook_function = load_webhook_function()
    bootstrap.use(world.services)
    try:
        answer = _webhook_function.lambda_handler(event, LambdaContext("WebhookFunction"))
    finally:
        bootstrap.use(None)
    return answer["statusCode"], json.loads(answer["body"])


class Sweeps:
    """A fake world seen from the sweep: events GitHub sends, the runs, what the alarm names."""

    def __init__(self, world: World, *, through_handler: bool = False) -> None:
        self.world = world
        self.github, self.telegram, self.services = world.github, world.telegram, world.services
        self.world.answer = lambda guid, redelivery: 200
        self.handler = load_sweep_function().lambda_handler if through_handler else None
        self.runs = 0

    @property
    def store(self):
        return self.world.store

    @property
    def now(self) -> float:
        return self.world.now

    @now.setter
    def now(self, value: float) -> None:
        self.world.now = value

    @property
    def answer(self):
        return self.world.answer

    @answer.setter
    def answer(self, script) -> None:
        self.world.answer = script  # what the pager answers: (guid, redelivery) -> status, 0 for no answer in time

    @property
    def down(self) -> int | None:
        return self.world.down

    @down.setter
    def down(self, status: int | None) -> None:
        self.world.down = status  # pager's endpoint itself fails: this status to deliveries and pings alike

    def deliver(self, event: str, action: str, repository_id: int) -> str:
        """GitHub sends one event (its example payload, in that repository) to the pager; its guid."""
        payload = example(event, action)
        payload["repository"]["id"] = repository_id
        return self.github.deliver(event, payload)["guid"]

    def redeliver_by_hand(self, guid: str) -> None:
        """The maintainer presses Redeliver on the app's Advanced page."""
        self.world.deliver_again(guid)

    def sweep(self, run_id: str | None = None) -> dict[str, Any]:
        """One scheduled run; GitHub then carries out the redeliveries it accepted, seconds later."""
        self.runs += 1
        run_id = run_id or f"run-{self.runs}"
        if self.handler is None:
            summary = run_sweep(self.services, now=self.now, run_id=run_id, event_id=run_id)
        else:
            summary = self._invoke(scheduled_event(run_id, self.now), run_id)
        self.now += 20
        self.github.deliver_pending()
        return summary

    def check(self, *, later: float = 20) -> dict[str, Any]:
        """One run of the every-minute check; GitHub then carries out what it was asked for, `later` seconds on."""
        from pager.sweep.run import check
        from pager.waiting import CHECK_EVENT

        self.runs += 1
        run_id = f"check-{self.runs}"
        if self.handler is None:
            summary = check(self.services, now=self.now, run_id=run_id, seconds=150.0)
        else:
            summary = self._invoke(dict(CHECK_EVENT), run_id)
        self.now += later
        self.github.deliver_pending()
        return summary

    def pager_held(self, pages: int = 3) -> tuple[str, list[str]]:
        """A delivery that passed, then pager's own endpoint answers 502 to `pages` comments (and to the run's
        ping) and the next run holds: the passed one's guid and the held comments'."""
        probe = self.deliver("workflow_run", "completed", 1)
        self.sweep()
        self.down = 502
        held = [self.deliver("issue_comment", "created", 10 + i) for i in range(pages)]
        self.advance(15)
        assert self.sweep()["recovery"] == "waiting: pager"
        return probe, held

    def list_of(self, deliveries: int) -> None:
        """A pass read, then `deliveries` that passed, a second apart, for the next run to read."""
        self.deliver("workflow_run", "completed", 1)
        self.sweep()
        self.advance(15)
        for _ in range(deliveries):
            self.deliver("workflow_run", "completed", 100)
            self.now += 1

    def minutes(self, n: int) -> list[dict[str, Any]]:
        """`n` minutes as a deployment lives them: the every-minute check at each (GitHub carrying out what
        it was asked for within the minute); the summaries."""
        summaries = []
        for _ in range(n):
            start = self.now
            summaries.append(self.check())
            self.now = start + 60
        return summaries

    def quarter_hours(self, minutes: int) -> list[dict[str, Any]]:
        """`minutes` as a deployment lives them: the check each minute, a scheduled run each fifteenth."""
        summaries = []
        for minute in range(minutes):
            start = self.now
            summaries.append(self.sweep() if minute % 15 == 14 else self.check())
            self.now = start + 60
        return summaries

    def _invoke(self, event: dict[str, Any], run_id: str) -> dict[str, Any]:
        bootstrap.use(self.services)
        try:
            return self.handler(event, LambdaContext("SweepFunction", 170, run_id))
        finally:
            bootstrap.use(None)

    def advance(self, minutes: float) -> None:
        self.world.advance(minutes)

    def attempts(self, guid: str) -> list[dict[str, Any]]:
        return self.world.attempts(guid)

    def requests_since(self, count: int) -> list[Any]:
        return self.github.requests[count:]

    def entries(self) -> dict[str, float]:
        """The delivery entries open in the control repository's alarm (guid -> time)."""
        return delivery_times(entries_now(self.services, "control"))

    def press_control(self, data: str) -> str:
        """An allowed user presses a button of the control repository's alarm (its newest message); the answer."""
        *_, message = [m for m in self.telegram.chat() if m.text.startswith(OWN_MESSAGE)]
        return self.world.update(self.world.press_update(data, message_id=message.message_id))[1]["outcome"]

    def until_nothing_waits(self) -> None:
        """The every-minute check, a minute apart, until nothing waits (nothing held, nothing queued)."""
        while self.minutes(1)[0]["outcome"] != "nothing waits":
            pass

    def alarm_text(self) -> str:
        shown = [text for text, _ in self.telegram.view().values() if text.startswith(OWN_MESSAGE)]
        return shown[-1] if shown else ""


def paced(n: int, per_minute: int) -> list[int]:
    """How many of `n` redeliveries each minute asks for, at most `per_minute` a minute (pager.sweep.deliveries.pace)."""
    return [per_minute] * (n // per_minute) + ([n % per_minute] if n % per_minute else [])


def json_lines(out: str) -> list[dict[str, Any]]:
    """The JSON objects printed to stdout (EMF metrics)."""
    lines = []
    for line in out.splitlines():
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            lines.append(parsed)
    return lines


# -- what the chat never shows: pager's own words (SPEC §6, "GitHub's words") ------------------------------

_EVENTS = ("issues", "issue_comment", "pull_request", "pull_request_review", "pull_request_review_comment",
           "discussion", "discussion_comment", "workflow_run", "workflow_job", "check_suite", "check_run",
           "code_scanning_alert", "repository_dispatch", "installation", "installation_repositories", "ping")
_ACTIONS = ("opened", "edited", "closed", "reopened", "created", "deleted", "completed", "requested", "rerequested",
            "submitted", "dismissed", "synchronize", "ready_for_review", "labeled", "unlabeled", "assigned",
            "unassigned", "transferred", "answered", "unanswered", "fixed", "appeared_in_branch", "closed_by_user",
            "reopened_by_user", "updated_assignment", "in_progress", "queued", "waiting", "added", "removed",
            "converted_to_draft", "review_requested", "locked", "unlocked", "pinned", "unpinned")
_KEYS = ("alarm", "release", "release-latest", "release-version", "release-tag", "release-waiting", "contribution",
         "press", "summary", "command", "health", "mute", "attention", "waiting", "sweep", "telegram")


def _error_classes() -> list[str]:
    """pager's exception classes whose names are no English word (Busy, Held, Conflict, Partial are)."""
    from pager import errors
    from pager.engine import settle as records

    found = {name for module in (errors, records) for name, value in vars(module).items()
             if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__}
    return sorted(name for name in found if sum(c.isupper() for c in name) >= 2)


OWN_WORDS = {
    "a delivery's guid": r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
    "a raw ISO time": r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d",
    "an event's name": r"\b(?:" + "|".join(e for e in _EVENTS if "_" in e) + r")\b",
    "an event.action": r"\b(?:" + "|".join(_EVENTS) + r")\.(?:" + "|".join(_ACTIONS) + r")\b",
    "a table key": r"(?<![\w/.-])(?:" + "|".join(_KEYS) + r")#\S|\b(?:delivery|entry):\S",
    "an exception's class": r"\b[A-Z]\w*(?:Error|Exception)\b|\b(?:" + "|".join(_error_classes()) + r")\b",
}


def own_words(text: str) -> list[str]:
    """What of pager's own words the visible text of a message, a button or an answer shows (none: []).
    It reads the whole text, what pager took from a payload too: a test's payload that carries such words
    (an issue titled "KeyError in pull_request") would be named here, and should be another."""
    import html
    import re

    visible = html.unescape(re.sub(r"<[^>]+>", "", text))
    return [f"{name}: {found.group(0)!r}" for name, pattern in OWN_WORDS.items()
            for found in [re.search(pattern, visible)] if found]


# -- pager's own first line: one plain sentence for the maintainer (SPEC §6.1, amended 2026-12-07) -------------

# What a maintainer would have to decode, which pager's own messages leave to the lines below their first:
# HTTP status codes (a standalone 100-599; a count of things is followed by what it counts), setting names as
# the environment and the deployment's parameters have them, raw chat ids (negative, or long numbers not
# after "#"), and GUIDs.
_COUNTED = r"(?!\s+(?:events?|deliver(?:y|ies)|pages?|times?|more|so far)\b)"
FIRST_LINE_WORDS = {
    "a status code": r"(?<![\w#/.:-])[1-5]\d\d(?![\w/.:-])" + _COUNTED,
    "a setting's name": r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b",
    "a raw chat id": r"(?<![\w#/-])-\d{3,}\b|(?<![\w#/.-])\d{6,}\b",
    "a GUID": OWN_WORDS["a delivery's guid"],
}
FIRST_LINE = 80  # visible characters (pager.words.FIRST_LINE): about what a phone's notification shows


def first_line_words(text: str, room: int | None = FIRST_LINE) -> list[str]:
    """What the first line of one of pager's own messages says that the maintainer would have to decode, and
    whether it is longer than `room` (too long to read at a glance; None: any length) (none: [])."""
    import html
    import re

    from pager.admin.deployment import PARAMETER_SETTINGS
    from pager.html import visible_length

    first = text.split("\n", 1)[0]
    visible = html.unescape(re.sub(r"<[^>]+>", "", first))
    found = [f"{name}: {m.group(0)!r}" for name, pattern in FIRST_LINE_WORDS.items()
             for m in [re.search(pattern, visible)] if m]
    found += [f"a setting's name: {name!r}" for name in PARAMETER_SETTINGS if re.search(rf"\b{name}\b", visible)]
    if room is not None and visible_length(first) > room:
        found.append(f"{visible_length(first)} characters: {visible!r}")
    return found


def said(requests: Any) -> list[str]:
    """Everything pager said to the chat through the fake Telegram's requests: the texts it sent and edited
    in, the labels of its buttons, its answers to presses."""
    texts = []
    for request in requests:
        method = request.url.rsplit("/", 1)[-1]
        if method not in ("sendMessage", "editMessageText", "answerCallbackQuery"):
            continue
        params = request.json()
        texts.append(str(params.get("text") or ""))
        markup = params.get("reply_markup")
        markup = json.loads(markup) if isinstance(markup, str) else markup or {}
        texts += [str(button.get("text") or "") for row in markup.get("inline_keyboard", []) for button in row]
    return texts


def examples(n: int) -> int:
    """A property test's examples: `n` in the suite; FUZZ_DEPTH times as many (`make test-deep`), or
    FUZZ_EXAMPLES exactly."""
    return int(os.environ.get("FUZZ_EXAMPLES") or n * int(os.environ.get("FUZZ_DEPTH") or 1))


def looked_again(services, *, limit: int = 3) -> list[str]:
    """The sweep's look at the releases waiting for Merge: read again, then acted on (as a run does on either
    side of its commit); their outcomes."""
    from pager.signals import release

    return release.settle_looked(services, release.look_again(services, limit=limit), services.now())
