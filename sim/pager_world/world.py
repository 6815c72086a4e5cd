"""A fake world in a closed loop: pager's real handlers and sweep against fake GitHub, Telegram and table.

    world = World(private_key)
    status, answer = world.deliver("issues", payload("issues", "opened", ...))
    world.chat.view(), world.hub.dispatches, world.store.dump()
    world.sweep()                         the real sweep; GitHub then delivers again what it asked for
    world.press("🛠"), world.command("/status")   a button pressed, a command typed in the chat

GitHub's side is played for real: each delivery goes through `FakeGitHub.deliver`, which calls the
real `pager.webhook.handle_github` with a signed API Gateway event and records the webhook's answer in
the app's deliveries list; the sweep reads that list through the real GitHub client, and each
redelivery it asks for goes through the handler again. The clients are the real ones, on a session
whose transport hands their requests to the fakes. One virtual clock; one fault model (`faults`).

The world is a maintainer's who followed the README: the app's installation holds exactly the
permissions pager's manifest asks for (`pager.admin.manifest.needed_permissions()`), the bot is in the
chat CHAT_ID (a basic group), and Telegram knows every press from the moment it is made (`press_update`
registers its callback query on the world's clock). Telegram's flood control runs on that clock too.

`answer`, when set, scripts the handler's answer to GitHub's deliveries: `(guid, redelivery) -> status`, 0 for
an answer that did not come in time (the sweep's scenarios); `down`, when set, is pager's endpoint itself
failing: that status to everything that reaches it, GitHub's deliveries and pager's own pings alike. `concurrently` runs deliveries or presses
at the same moment, in threads, holding every call to GitHub and Telegram until each of them has
reached the table once, so that they truly overlap; a wait inside a step then waits for the table to
change, not for the clock.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
from collections.abc import Callable
from typing import Any

from pager import attention_store
from pager.engine import settle as records
from pager.github import GitHub
from pager.permissions import needed_permissions
from pager.routing import Repository
from pager.services import Services
from pager.settings import Settings
from pager.signals.alarm import CONTROL as CONTROL_REF
from pager.signals.alarm import Alarm
from pager.telegram import Telegram
from pager.waiting import ITEM as WAITING_ITEM
from pager.waiting import SWEEP_KEY
from pager.webhook import handle_github, handle_telegram

from .clock import Clock
from .events import apigw_event, github_event, telegram_event
from .faults import Faults
from .github import FakeGitHub
from .http import HttpRequest, HttpResponse, session_for
from .payloads import INSTALLATION
from .store import FaultyStore
from .telegram import FakeTelegram

GITHUB_API = "https://api.github.test"
TELEGRAM_API = "https://api.telegram.test"
PAGER_HOST = "https://pager.test"  # pager's own endpoint, as GitHub's hook config gives it
HOOK_URL = f"{PAGER_HOST}/github"
WEBHOOK_SECRET = "test-webhook-secret"
TELEGRAM_SECRET = "test-telegram-secret"
BOT_TOKEN = "123456:TEST-bot-token-do-not-log"
CHAT_ID = "-1001"
ALLOWED_USER = 42
CONTROL = "maintainer/pager"
REPO = "Codertocat/Hello-World"  # the repository of GitHub's examples
REPO_ID = 186853002  # its id, as the examples carry it
EXAMPLE_REPO = Repository(REPO_ID, REPO)
EXAMPLE_ALARM = Alarm(str(REPO_ID), REPO)  # its alarm
CONTROL_ALARM = Alarm(CONTROL_REF, CONTROL)  # the control repository's alarm
START = 1_800_000_000.0  # the virtual clock's start (2027-01-15)
RACE_WAIT = 2.0  # real seconds a racing delivery waits at most for the table to change (a safety net)


def settings_for(private_key: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = dict(
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


class _Race:
    """Racers that each must reach the table once before any of them may call GitHub or Telegram. A racer
    held at such a call before it reached the table (a delivery that asks GitHub first) lets the others
    by: when every racer is held or has reached the table, they all go on."""

    def __init__(self, n: int) -> None:
        self.waiting = set(range(n))
        self.held: set[int] = set()
        self.cond = threading.Condition()

    def reached(self, racer: int) -> None:
        with self.cond:
            self.waiting.discard(racer)
            self.cond.notify_all()

    def hold(self, racer: int) -> None:
        with self.cond:
            self.held.add(racer)  # until it reaches the table: the racers held go on together
            self.cond.notify_all()
            self.cond.wait_for(lambda: self.waiting <= self.held, timeout=RACE_WAIT)


class World:
    """pager with its real handlers, clients and sweep, in a fake world; see the module docstring."""

    def __init__(self, private_key: str, *, store: Callable[[Faults], Any] | None = None, start: float = START,
                 **settings_overrides: Any) -> None:
        self.clock = Clock(start)
        self.faults = Faults()
        self.store = store(self.faults) if store is not None else FaultyStore(self.faults)
        self.telegram = self.chat = FakeTelegram(faults=self.faults, clock=self.clock)
        self.chat.add_chat(CHAT_ID, "group", title="pager")  # the maintainer's chat: a basic group the bot is in
        self.github = self.hub = FakeGitHub(clock=self.clock, faults=self.faults, endpoint=self._endpoint, api_url=GITHUB_API)
        self.settings = settings_for(private_key, **settings_overrides)
        self.github.app_id = self.settings.github_app_id
        self.github.installations.update({REPO: INSTALLATION, self.settings.control_repository: INSTALLATION})
        self.github.repository_ids[REPO] = REPO_ID  # as the examples' payloads carry it
        # The maintainer followed the README: the installation holds what pager's manifest asks for.
        self.github.installation_permissions[INSTALLATION] = needed_permissions()
        self.github.hook.update(url=HOOK_URL, secret=WEBHOOK_SECRET)  # the app's webhook: where GitHub delivers
        self.session = session_for({GITHUB_API: self.github, TELEGRAM_API: self.telegram, PAGER_HOST: self.pager_endpoint})
        self.sleeps: list[float] = []
        self.services = Services(
            settings=self.settings,
            store=self.store,
            github=GitHub(self.session, app_id=self.settings.github_app_id, private_key=private_key,
                          api_url=GITHUB_API, clock=self.clock),
            telegram=Telegram(self.session, token=BOT_TOKEN, api_url=TELEGRAM_API, sleep=self._wait),
            clock=self.clock,
            sleep=self._sleep,
        )
        self.answer: Callable[[str, bool], int] | None = None
        self.down: int | None = None  # pager's endpoint itself fails (its domain, API Gateway, the function): this
        # status to everything that reaches it, GitHub's deliveries and pager's own pings alike (0: no answer)
        self.signing_secret = WEBHOOK_SECRET  # the app's webhook secret as GitHub has it (a rotation: another one)
        self.answers: dict[str, dict[str, Any]] = {}  # guid -> the webhook's last answer
        self.telegram_latency = 0.0  # seconds each Telegram call takes, on the virtual clock
        self._guids = itertools.count(1)
        self._callbacks = itertools.count(1)
        self._race: _Race | None = None
        self._local = threading.local()
        self.faults.observers.append(self._observe)

    # -- time

    @property
    def now(self) -> float:
        return self.clock.now

    @now.setter
    def now(self, value: float) -> None:
        self.clock.now = float(value)

    def advance(self, minutes: float) -> None:
        self.clock.advance(minutes * 60)

    def _wait(self, seconds: float) -> None:
        """Time passing for one caller (Telegram's retry_after): the clock moves on; in a race, to `seconds`
        after this racer's own last call to Telegram (the racers wait side by side, not one after another)."""
        self.sleeps.append(seconds)
        if getattr(self._local, "racer", None) is None:
            self.clock.advance(seconds)
            return
        self.clock.set(self._local.called_at + seconds)

    def _sleep(self, seconds: float) -> None:
        """pager's wait for another delivery: in a race, until the table changes (another racer acted)."""
        self.sleeps.append(seconds)
        if getattr(self._local, "racer", None) is not None and hasattr(self.store, "changed"):
            seen = getattr(self._local, "seen", 0)
            with self.store.changed:  # another racer acts: wait for the table to change since this one read it
                self.store.changed.wait_for(lambda: self.store.version > seen, timeout=RACE_WAIT)
        else:
            self.clock.advance(seconds)

    # -- GitHub's webhook

    def _endpoint(self, guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int | tuple[int, str]:
        code = self.down if self.down is not None else self.answer(guid, redelivery) if self.answer is not None else None
        if code is not None:
            if code == 0:
                raise TimeoutError(guid)
            return code
        # The handler's deadline runs on the world's clock, as its waits do.
        status, body = handle_github(github_event(event, payload, guid=guid, secret=self.signing_secret), self.services,
                                     monotonic=self.clock)
        self.answers[guid] = body
        return status, json.dumps(body)

    def pager_endpoint(self, request: HttpRequest) -> HttpResponse:
        """pager's own endpoint as anyone outside reaches it (its domain, API Gateway, the function): what pager's
        sweep and `pager doctor` ping. `down` fails it as it fails GitHub's deliveries (`answer` scripts those
        alone: pager's handler failing on its own, its endpoint up)."""
        if self.down is not None:
            return HttpResponse(self.down, b"" if self.down else None)
        headers = {k.lower(): v for k, v in request.headers.items()}
        status, body = handle_github(apigw_event(request.method, request.path, headers, request.body), self.services,
                                     monotonic=self.clock)
        return HttpResponse(status, body)

    def deliver(self, event: str, body: dict[str, Any], *, guid: str | None = None) -> tuple[int, dict[str, Any]]:
        """GitHub sends an event to the webhook; the webhook's answer (status, body)."""
        guid = guid or f"guid-{next(self._guids)}"
        item = self.github.deliver(event, body, guid=guid)
        return item["status_code"], self.answers.get(guid, {})

    def deliver_again(self, guid: str) -> tuple[int, dict[str, Any]]:
        """Someone presses Redeliver on the app's Advanced page."""
        event, payload = self.github.payloads[guid]
        item = self.github.deliver(event, payload, guid=guid, redelivery=True)
        return item["status_code"], self.answers.get(guid, {})

    def attempts(self, guid: str) -> list[dict[str, Any]]:
        return self.github.attempts(guid)

    def sweep(self, *, run_id: str | None = None) -> dict[str, Any]:
        """One run of the real sweep now; GitHub then carries out the redeliveries it accepted, seconds later."""
        from pager.sweep import run_sweep

        summary = run_sweep(self.services, now=self.now, run_id=run_id or f"run-{int(self.now)}")
        self.clock.advance(20)
        self.github.deliver_pending()
        return summary

    # -- Telegram's webhook

    def update(self, update: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST /telegram with a valid secret token; the endpoint's answer."""
        return handle_telegram(telegram_event(update, secret=TELEGRAM_SECRET), self.services, monotonic=self.clock)

    def press_update(self, data: str, *, message_id: int, user: int = ALLOWED_USER, chat: str = CHAT_ID,
                     callback_id: str | None = None) -> dict[str, Any]:
        """A callback_query update as Telegram sends it for a press on a button; Telegram knows the
        query from now on (answerCallbackQuery answers it for 15 minutes)."""
        query_id = callback_id or f"cb-{next(self._callbacks)}"
        self.chat.register_query(query_id, self.now)
        known = self.chat.chats.get(chat)
        return {
            "update_id": self.chat.next_update_id(),
            "callback_query": {
                "id": query_id,
                "from": {"id": user, "is_bot": False, "first_name": "Maintainer"},
                "message": {"message_id": message_id, "chat": {"id": int(chat), "type": known.kind if known else "supergroup"},
                            "date": int(self.now)},
                "chat_instance": "1",
                "data": data,
            },
        }

    def press(self, label_start: str, message_id: int | None = None, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        """Press the button whose label starts with `label_start` on a message (the bot's newest by default)."""
        if message_id is None:
            message_id = max(m for m, message in self.chat.messages.items() if message.author is None)
        data = self.chat.button_data(message_id, label_start)
        return self.update(self.press_update(data, message_id=message_id, **kwargs))

    def command(self, text: str, *, user: int = ALLOWED_USER, chat: str = CHAT_ID) -> tuple[int, dict[str, Any]]:
        """Someone types `text` (a command: "/status", "/mute@pager_test_bot owner/name 8h") in the chat:
        Telegram sends the bot that message (its Update, pager_world.telegram's `command_update`), the
        message stays in the chat, and the endpoint's answer comes back."""
        person = {"id": user, "is_bot": False, "first_name": "Maintainer" if user == ALLOWED_USER else "Someone"}
        return self.update(self.chat.command_update(text, chat_id=chat, user=person))

    # -- at the same moment

    def concurrently(self, *actions: Callable[[], Any]) -> list[Any]:
        """Run the actions at the same moment, one thread each; their results in order."""
        self._race = _Race(len(actions))
        results: list[Any] = [None] * len(actions)
        began = self.clock.now

        def run(i: int, action: Callable[[], Any]) -> None:
            self._local.racer, self._local.called_at = i, began
            try:
                results[i] = action()
            finally:
                self._race.reached(i) if self._race else None
                self._local.racer = None

        threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(actions)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self._race = None
        return results

    def race(self, event: str, bodies: list[dict[str, Any]]) -> list[int]:
        """Deliver the bodies at the same moment (one guid each); the answers. A delivery answered 500
        is delivered again afterwards, as the sweep would, and must then pass."""
        guids = [f"race-{next(self._guids)}" for _ in bodies]
        answers = self.concurrently(*(lambda g=g, b=b: self.deliver(event, b, guid=g)[0] for g, b in zip(guids, bodies, strict=True)))
        for guid, status in zip(guids, answers, strict=True):
            if status != 200:
                assert status == 500, status
                assert self.deliver_again(guid)[0] == 200
        return answers

    def _observe(self, service: str, name: str) -> None:
        if service == "telegram" and self.telegram_latency:
            self.clock.advance(self.telegram_latency)  # the call takes this long (on the one clock every racer reads)
        race, racer = self._race, getattr(self._local, "racer", None)
        if race is None or racer is None:
            return
        if service == "telegram":
            self._local.called_at = self.clock.now  # when its answer came, a retry_after counts from
        if service == "store":
            self._local.seen = getattr(self.store, "version", 0)
            race.reached(racer)
        else:
            race.hold(racer)

    # -- looking

    def snapshot(self, *, presses: bool = True) -> dict[str, Any]:
        """What a maintainer and the table would show: records, the chat, dispatches, merges. Not the
        note that a service failed (the sweep's `waiting` item, pager.waiting): it records the failure
        itself, which an undisturbed run has not had, and the recovery check clears it. Nor when the phone
        last called (pager.attention_store.called): a call whose record failed after its message was sent
        is not recorded again, which costs at most one more buzz within the phone's rest, never a page."""
        dump = self.store.dump()
        dump.pop(f"{SWEEP_KEY} [{WAITING_ITEM}]", None)
        dump.pop(f"{attention_store.MUTE_KEY} [{attention_store.CALL_ITEM}]", None)
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
