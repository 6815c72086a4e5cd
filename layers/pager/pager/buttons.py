"""The Telegram endpoint's logic once the secret token was checked (SPEC §6): button presses.

    callback_query from an allowed user in the configured chat
        fix:<ref>           🛠 Start fix of the repository's alarm (pager.signals.alarm.start_fix)
        merge:<ref>:<n>     🔀 Merge of a release pull request (pager.signals.release.merge_press)
    callback_query from anyone else, or in another chat   answered "not allowed", nothing happens
    any other update                                       ignored

`<ref>` is a short hash of the repository (callback data is at most 64 bytes); the index record
`ref#<ref>` written before the first button of that repository names it.

Every press is answered (answerCallbackQuery) in the same request, with what happened or why it
failed, and `handle_update` returns normally even when the action failed, so the endpoint answers 200
and the person can press again. A retried update (same callback id) acts once: the record
`press#<callback id>` keeps the answer given (for a day) and a retry only repeats the answer; the
action itself is guarded again by the record of its thing (a fix recorded, a merge recorded). The
one case answered 500 is a press whose answer could not reach Telegram (or whose record could not be
read): Telegram then retries the update, which acts once and answers.
"""

from __future__ import annotations

from typing import Any, Mapping

from .errors import Conflict, PagerError, StoreUnavailable, TelegramRefused, Transient
from .services import Services
from .signals import alarm, release
from .signals.common import field, ref_key, text
from .signals.records import LEASE_SECONDS, PENDING

NOT_ALLOWED = "not allowed"
PRESS_TTL_SECONDS = 24 * 3600  # Telegram gives up on a press after about 150 s; a day is plenty


def press_key(callback_id: str) -> str:
    return f"press#{callback_id}"


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

    store = services.store
    now = services.now()
    expires_at = int(now + PRESS_TTL_SECONDS)
    record = store.load(press_key(callback_id))
    answer = record.data.get("answer")
    if not isinstance(answer, str):
        claim = record.data.get(PENDING)
        if isinstance(claim, dict) and float(claim.get("until", 0)) > now:
            return _answer(services, callback_id, "⏳ still working on it", "busy: the same press is being acted on")
        try:
            claimed = store.save(record, {PENDING: {"effect": "press", "until": now + LEASE_SECONDS}}, expires_at=expires_at)
        except Conflict:
            return _answer(services, callback_id, "⏳ still working on it", "busy: the same press is being acted on")
        try:
            answer = act(text(query.get("data")), services)
        except PagerError as exc:
            _forget(store, claimed, expires_at)
            return _answer(services, callback_id, f"⚠️ {_reason(exc)}; press again", f"failed: {exc}")
        except BaseException:
            _forget(store, claimed, expires_at)
            raise
        try:
            store.save(claimed, {"answer": answer}, expires_at=expires_at)
        except (Conflict, StoreUnavailable):
            pass  # the action is recorded with its thing; a retry would only find it done
    return _answer(services, callback_id, answer, answer)


def allowed(query: Mapping[str, Any], services: Services) -> bool:
    """Only the allowed users, and only in the configured chat."""
    settings = services.settings
    user = field(query, "from", "id")
    chat = field(query, "message", "chat", "id")
    return (
        isinstance(user, int)
        and user in settings.telegram_allowed_users
        and chat is not None
        and str(chat) == str(settings.telegram_chat_id)
    )


def act(data: str, services: Services) -> str:
    """Carry out a button's action; the answer to show. Raises PagerError when it failed."""
    if data.startswith(alarm.FIX_PREFIX):
        repository = _repository(data[len(alarm.FIX_PREFIX):], services)
        return alarm.start_fix(services, repository) if repository else "this alarm is no longer known"
    if data.startswith(release.MERGE_PREFIX):
        ref, _, number = data[len(release.MERGE_PREFIX):].partition(":")
        repository = _repository(ref, services)
        if not repository or not number.isdigit():
            return "this release is no longer known"
        return release.merge_press(services, repository, int(number))
    return "this button is not known"


def _repository(ref: str, services: Services) -> str:
    return text(services.store.load(ref_key(ref)).data.get("repository")) if ref else ""


def _answer(services: Services, callback_id: str, answer: str, outcome: str) -> str:
    """Answer the press. Telegram unavailable propagates (500: Telegram retries, the press acts once)."""
    try:
        services.telegram.answer_callback(callback_id, answer)
    except TelegramRefused:
        pass  # too old or already answered: nothing left to tell the person
    return outcome


def _forget(store: Any, claimed: Any, expires_at: int) -> None:
    """Take back the claim of a press whose action failed, so that a retry of it may act."""
    try:
        store.save(claimed, {}, expires_at=expires_at)
    except (Conflict, StoreUnavailable):
        pass


def _reason(exc: PagerError) -> str:
    if isinstance(exc, Transient):
        return f"failed for now ({exc})"
    return f"refused ({exc})"
