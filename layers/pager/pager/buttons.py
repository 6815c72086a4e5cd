"""The Telegram endpoint's logic once the secret token was checked (README, "Telegram webhook"): button presses.

    callback_query from an allowed user in the configured chat
        fix:<id>            🛠 Start fix of the alarm of the repository with that id (`fix:control`: the
                            control repository's; pager.signals.alarm.start_fix)
        merge:<id>:<n>      🔀 Merge of a release pull request (pager.signals.release.merge_press)
        again:<id>          ↻ a failed delivery once more (pager.sweep.presses.deliver_again)
        again:all           ↻ all failed deliveries, over the sweep's next runs (pager.sweep.presses.deliver_all_again)
        refused:again       ↻ the deliveries refused with 401 (pager.sweep.presses.deliver_refused_again)
        refused:pages       ↻ the signals GitHub or Telegram refused (the same, for those answered 424)
    callback_query from anyone else, or in another chat   answered "not allowed", nothing happens
    any other update                                       ignored

`<id>` is the repository's id (at most 19 digits: the data fits Telegram's 64 bytes for any name); the
alarm's and the release's records name the repository as GitHub called it last.

Every press is answered (answerCallbackQuery) in the same request, with what happened or why it
failed, and `handle_update` returns normally even when the action failed, so the endpoint answers 200
and the person can press again. A retried update (same callback id) acts once: a press is settled
like a signal (`records.settle`, with the action as its one effect) on the record `press#<callback
id>`, which keeps the answer given (for a day), so a retry only repeats the answer, and a retry that
comes while the first still acts is told so at once; the action itself is guarded again by the
record of its thing (a fix recorded, a merge recorded). The one case answered 500 is a press whose
answer could not reach Telegram: Telegram then retries the update, which acts once and answers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from .errors import PagerError, TelegramRefused, Transient, Uncertain
from .services import Services
from .signals import alarm, release
from .signals.records import Held, settle
from .signals.steps import Press, Step
from .values import field, text

NOT_ALLOWED = "not allowed"
STILL_WORKING = "⏳ still working on it"
MAYBE_DONE = "⚠️ this may have happened already, but pager could not record it: look before pressing again"
EARLIER_PRESS = "⏳ an earlier press is at it, or may have done it already: look before pressing again"
PRESS_TTL_SECONDS = 24 * 3600  # Telegram gives up on a press after about 150 s; a day is plenty


NUMBER = re.compile(r"[0-9]{1,10}")
ID = re.compile(r"[0-9]{1,19}")  # a repository's id (GitHub's are 64-bit)
PLAIN_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")


def press_key(callback_id: str) -> str:
    """The press's record key: its id, or a hash of an id too long or odd for a table key."""
    if PLAIN_ID.fullmatch(callback_id):
        return f"press#{callback_id}"
    return "press#h:" + hashlib.sha256(callback_id.encode("utf-8", "replace")).hexdigest()


def handle_update(update: Mapping[str, Any], services: Services) -> str:
    """Act on one Telegram update; the outcome for the log."""
    query = update.get("callback_query")
    if not isinstance(query, Mapping):
        return "ignored: not a button press"
    callback_id = text(query.get("id"))
    if not callback_id:
        return "ignored: a press without an id"
    if not allowed(query, services):
        try:
            services.telegram.answer_callback(callback_id, NOT_ALLOWED)
        except PagerError:
            pass
        return NOT_ALLOWED
    key = press_key(callback_id)
    try:
        answer = settle(services, key, decide_press(text(query.get("data"))), ttl_seconds=PRESS_TTL_SECONDS,
                        wait=False, perform=_perform).outcome
    except Held as exc:
        if exc.key != key:
            return _answer(services, callback_id, EARLIER_PRESS, f"busy: {exc}")
        return _answer(services, callback_id, STILL_WORKING, "busy: the same press is being acted on")
    except Uncertain as exc:
        return _answer(services, callback_id, MAYBE_DONE, f"uncertain: {exc}")
    except PagerError as exc:
        return _answer(services, callback_id, f"⚠️ {_reason(exc)}; press again", f"failed: {exc}")
    return _answer(services, callback_id, answer, answer)


def decide_press(data: str):
    """A press acts once: its record keeps the answer, and a retried update only repeats it."""

    def decide(record: dict[str, Any], now: float) -> Step:
        answer = record.get("answer")
        if isinstance(answer, str):
            return Step(answer)
        return Step(lambda said: said, effect=Press(data), then=lambda said: {"answer": said})

    return decide


def _perform(services: Services, effect: Any) -> str:
    assert isinstance(effect, Press)
    return act(effect.data, services)


def allowed(query: Mapping[str, Any], services: Services) -> bool:
    """Only the allowed users, and only in the configured chat: by its id, or, for a channel given as
    `@name`, by the name Telegram sends beside the id (`message.chat.username`); or in the supergroup
    Telegram moved the configured group to (pager.chat)."""
    settings = services.settings
    user = field(query, "from", "id")
    if not isinstance(user, int) or user not in settings.telegram_allowed_users:
        return False
    chat_id = field(query, "message", "chat", "id")
    return in_chat(query, settings.telegram_chat_id) or (
        isinstance(chat_id, int) and services.chat.is_current(chat_id, services.store))


def in_chat(query: Mapping[str, Any], configured: str) -> bool:
    chat = field(query, "message", "chat")
    chat_id, username = field(chat, "id"), text(field(chat, "username"))
    if chat_id is not None and str(chat_id) == str(configured):
        return True
    return str(configured).startswith("@") and bool(username) and username.lower() == str(configured)[1:].lower()


def act(data: str, services: Services) -> str:
    """Carry out a button's action; the answer to show. Raises PagerError when it failed."""
    if data.startswith(alarm.FIX_PREFIX):
        ref = data[len(alarm.FIX_PREFIX):]
        if not (ID.fullmatch(ref) or ref == alarm.CONTROL):  # ASCII digits only: int() takes others
            return "this alarm is no longer known"
        return alarm.start_fix(services, ref)
    if data.startswith(release.MERGE_PREFIX):
        repository_id, _, number = data[len(release.MERGE_PREFIX):].partition(":")
        if not NUMBER.fullmatch(number):  # ASCII digits only: int() takes others, and fails on thousands
            return "this button is not known"
        if not ID.fullmatch(repository_id):
            return "this release is no longer known"
        return release.merge_press(services, int(repository_id), int(number))
    if data.startswith(alarm.AGAIN_PREFIX) or data in (alarm.REFUSED_AGAIN, alarm.PAGES_AGAIN):
        from .sweep import health, presses

        if data == alarm.AGAIN_ALL:
            return presses.deliver_all_again(services)
        if data == alarm.REFUSED_AGAIN:
            return presses.deliver_refused_again(services, health.SECRET_REFUSED)
        if data == alarm.PAGES_AGAIN:
            return presses.deliver_refused_again(services, health.PAGE_REFUSED)
        return presses.deliver_again(services, data[len(alarm.AGAIN_PREFIX):])
    return "this button is not known"


def _answer(services: Services, callback_id: str, answer: str, outcome: str) -> str:
    """Answer the press. Telegram unavailable propagates (500: Telegram retries, the press acts once)."""
    try:
        services.telegram.answer_callback(callback_id, answer)
    except TelegramRefused:
        pass  # too old or already answered: nothing left to tell the person
    return outcome


def _reason(exc: PagerError) -> str:
    if isinstance(exc, Transient):
        return f"failed for now ({exc})"
    return f"refused ({exc})"
