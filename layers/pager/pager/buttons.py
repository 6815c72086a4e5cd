"""The Telegram endpoint's logic once the secret token was checked (docs/deploy.md, "Telegram's webhook by
hand"): button presses, and the commands written in the chat (pager.commands).

    callback_query from an allowed user in the configured chat
        fix:<id>            🛠 Start fix of the alarm of the repository with that id (pager.signals.alarm.start_fix)
        merge:<id>:<n>      🔀 Merge of a release pull request (pager.signals.release.merge_press)
        seen:<id>           👀 Seen on an alarm: someone looks at it; not called again until something new fails
                            (pager.signals.alarm.seen_press)
        mute:a:<id>         🔕 Mute owner/name 8 h on an alarm: mute that repository (pager.commands.mute_press)
        mute:c:<id>:<t><n>  🔕 Mute owner/name 8 h on a contribution: its repository (t: i issue, p pull request,
                            d discussion; n its number)
        mute:t:<id>:<t><n>  🔕 Mute this thread 8 h on a contribution: that issue, pull request or discussion alone
        unmute:<id>         🔔 Unmute owner/name, on a mute's answer or /status (pager.commands.unmute_press)
        unmute:t:<id>:<t><n>  🔔 Unmute of a thread
        again:<id>          ↻ a failed delivery once more (pager.sweep.presses.deliver_again)
        again:all           ↻ all failed deliveries, over the sweep's next runs (pager.sweep.presses.deliver_all_again)
        refused:again       ↻ the deliveries refused with 401 (pager.sweep.presses.deliver_refused_again)
        refused:pages       ↻ the signals GitHub or Telegram refused (the same, for those answered 424)
    callback_query from anyone else, or in another chat   answered "not allowed", nothing happens
    message                                                a command (pager.commands), answered once
    any other update                                       ignored

`<id>` is the repository's id (at most 19 digits: the data fits Telegram's 64 bytes for any name); the
alarm's and the release's records name the repository as GitHub called it last, and so do a thread's and a
mute's.

Every press is answered (answerCallbackQuery) in the same request, with what happened or why it
failed, and `handle_update` returns normally even when the action failed, so the endpoint answers 200
and the person can press again. A retried update (same callback id) acts once: a press is settled
like a signal (`records.settle`, with the action as its one effect) on the record `press#<callback
id>`, which keeps the answer given (for a day), so a retry only repeats the answer, and a retry that
comes while the first still acts is told so at once; the action itself is guarded again by the
record of its thing (a fix recorded, a merge recorded). A press whose act says more in the chat (a mute:
what it mutes, until when, by whom, with 🔔 Unmute) sends that as a reply to the message pressed, without a
sound; its record keeps the answer before that message is sent and the message once sent, like a
command's. The cases answered 500 are a press whose answer could not reach Telegram, and one whose message
Telegram could not take now (the press is answered all the same): Telegram then retries the update, which
acts once and answers, or sends the message still to send.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Any

from . import attention_store, commands
from .engine.effects import Press, SendMessage, Step
from .engine.perform import perform as perform_effect
from .engine.settle import Held, settle
from .errors import PagerError, Partial, Permanent, TelegramRefused, Transient, Uncertain
from .services import Services
from .signals import alarm, contribution, release
from .signals.messages import buttons_json
from .sweep import health, presses
from .values import field, text
from .words import failure

NOT_ALLOWED = "not allowed"
UNKNOWN_BUTTON = "this button is not known"
STILL_WORKING = "⏳ still working on it"
MAYBE_DONE = "⚠️ this may have happened already (an answer was lost, or pager could not record it): look before pressing again"
EARLIER_PRESS = "⏳ an earlier press is at it, or may have done it already: look before pressing again"
BUSY = "⏳ pager is busy with this message: press again in a minute"
PRESSES_DO = frozenset({"Dispatch", "MergePull", "Redeliver"})  # the effects only a press claims a record for
PRESS_TTL_SECONDS = 24 * 3600  # Telegram gives up on a press after about 150 s; a day is plenty


NUMBER = re.compile(r"[0-9]{1,10}")
ID = re.compile(r"[0-9]{1,19}")  # a repository's id (GitHub's are 64-bit)
PLAIN_ID = re.compile(r"[0-9A-Za-z_-]{1,64}")
THREAD = re.compile(r"([0-9]{1,19}):([ipd])([0-9]{1,10})")  # <repository id>:<i|p|d><number>


def press_key(callback_id: str) -> str:
    """The press's record key: its id, or a hash of an id too long or odd for a table key."""
    if PLAIN_ID.fullmatch(callback_id):
        return f"press#{callback_id}"
    return "press#h:" + hashlib.sha256(callback_id.encode("utf-8", "replace")).hexdigest()


def handle_update(update: Mapping[str, Any], services: Services) -> str:
    """Act on one Telegram update; the outcome for the log."""
    message = update.get("message")
    if isinstance(message, Mapping):
        chat = field(message, "chat")
        user = field(message, "from", "id")
        return commands.handle_message(message, services, in_chat=_in_pagers_chat(chat, services),
                                       allowed=isinstance(user, int) and user in services.settings.telegram_allowed_users)
    query = update.get("callback_query")
    if not isinstance(query, Mapping):
        return "ignored: not a button press or a command"
    return _press(query, services)


def _press(query: Mapping[str, Any], services: Services) -> str:
    """Act on a button press (a callback query) once, and answer it with what happened or why it failed."""
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
    who = text(field(query, "from", "username"))
    by = f"@{who}" if who else text(field(query, "from", "first_name"))
    chat, message_id = field(query, "message", "chat", "id"), field(query, "message", "message_id")
    pressed = (str(chat), message_id) if isinstance(chat, int) and isinstance(message_id, int) else None
    try:
        answer = settle(services, key, decide_press(text(query.get("data")), by, pressed), ttl_seconds=PRESS_TTL_SECONDS,
                        wait=False, perform=_perform).outcome
    except Held as exc:
        return _held(services, callback_id, key, exc)
    except Uncertain as exc:
        return _answer(services, callback_id, MAYBE_DONE, f"uncertain: {exc}")
    except Partial as exc:
        return _answer(services, callback_id, exc.said, f"failed: {exc}")
    except (Transient, Permanent) as exc:
        return _failed(services, callback_id, key, exc)
    except PagerError as exc:
        return _answer(services, callback_id, f"⚠️ {failure(exc)}", f"failed: {exc}")
    return _answer(services, callback_id, answer, answer)


def _held(services: Services, callback_id: str, key: str, exc: Held) -> str:
    """A press that came while its record, or the record it acts on, is held: by this very press (a retry of
    its update), by another press acting, or by a delivery rendering the message (a new message, an edit)."""
    if exc.key != key:
        return _answer(services, callback_id, EARLIER_PRESS if exc.effect in PRESSES_DO else BUSY, f"busy: {exc}")
    return _answer(services, callback_id, STILL_WORKING, "busy: the same press is being acted on")


def _failed(services: Services, callback_id: str, key: str, exc: Transient | Permanent) -> str:
    """A press whose act failed now or was refused for good: said to the person who pressed (a refusal is an
    error in the log). When it acted and only its message in the chat failed, its answer is given; a failure
    now then answers 500, so that Telegram sends the update again, which sends the message still to send."""
    said = _acted(services, key)
    if said is None:
        return _answer(services, callback_id, f"⚠️ {failure(exc)}",
                       f"{'refused' if isinstance(exc, Permanent) else 'failed'}: {exc}")
    _answer(services, callback_id, said, said)
    if isinstance(exc, Transient):
        raise exc
    return f"refused: {exc}"


def decide_press(data: str, by: str = "", pressed: tuple[str, int] | None = None):
    """A press acts once: its record keeps the answer, and a retried update only repeats it. One whose act says
    more in the chat (`commands.Reply`) keeps its answer (`said`) and the message still to send (`reply`, its
    `buttons`), then sends that message, a reply to the one `pressed` (its chat and id), without a sound."""

    def decide(record: dict[str, Any], now: float) -> Step:
        answer = record.get("answer")
        if isinstance(answer, str):
            return Step(answer)
        said, reply = record.get("said"), record.get("reply")
        if isinstance(said, str) and isinstance(reply, str) and pressed is not None:
            message = SendMessage(reply, commands.buttons_of(record.get("buttons")), notify=False, reply_to=pressed[1],
                                  to=pressed[0])
            return Step(said, effect=message, then=lambda _: {"answer": said})
        return Step(_told, effect=Press(data, by), then=lambda result: _kept(result, pressed is not None))

    return decide


def _told(result: str | commands.Reply) -> str:
    """What the press's act says, unless a message in the chat is still to say it (that step tells it)."""
    return result if isinstance(result, str) else ""


def _kept(result: str | commands.Reply, replying: bool) -> dict[str, Any]:
    """The press's record after its act: its answer; or, with a message to send in the chat, the answer to give
    once it is sent and the message (without a message pressed to reply to, only the answer)."""
    if isinstance(result, str):
        return {"answer": result}
    if not replying:
        return {"answer": result.said}
    return {"said": result.said, "reply": result.text, **({"buttons": buttons_json(result.buttons)} if result.buttons else {})}


def _acted(services: Services, key: str) -> str | None:
    """The answer of a press that acted and whose message in the chat is still to send (None: it did not act, or
    the table cannot say now)."""
    try:
        said = services.store.load(key).data.get("said")
    except PagerError:
        return None
    return said if isinstance(said, str) else None


def _perform(services: Services, effect: Any) -> Any:
    """Carry out a button's action, or send the message its act says more in."""
    if isinstance(effect, Press):
        return act(effect.data, services, effect.by)
    return perform_effect(services, effect)


def allowed(query: Mapping[str, Any], services: Services) -> bool:
    """Only the allowed users, and only in the configured chat (see `_allowed`)."""
    return _allowed(field(query, "from", "id"), field(query, "message", "chat"), services)


def _allowed(user: Any, chat: Any, services: Services) -> bool:
    """Only the allowed users, and only in pager's chat (`_in_pagers_chat`)."""
    if not isinstance(user, int) or user not in services.settings.telegram_allowed_users:
        return False
    return _in_pagers_chat(chat, services)


def _in_pagers_chat(chat: Any, services: Services) -> bool:
    """The configured chat: by its id, or, for a channel given as `@name`, by the name Telegram sends beside
    the id (`chat.username`); or the supergroup Telegram moved the configured group to (pager.chat)."""
    chat_id = field(chat, "id")
    return in_chat(chat, services.settings.telegram_chat_id) or (
        isinstance(chat_id, int) and services.chat.is_current(chat_id, services.store))


def in_chat(chat: Any, configured: str) -> bool:
    chat_id, username = field(chat, "id"), text(field(chat, "username"))
    if chat_id is not None and str(chat_id) == str(configured):
        return True
    return str(configured).startswith("@") and bool(username) and username.lower() == str(configured)[1:].lower()


def act(data: str, services: Services, by: str = "") -> str | commands.Reply:
    """Carry out a button's action for the person who pressed it; the answer to show (with a message that says
    more in the chat: a mute's). Raises PagerError when it failed."""
    whole = _WHOLE.get(data)
    if whole is not None:
        return whole(services)
    for prefix, press in _PREFIXED:
        if data.startswith(prefix):
            return press(services, data[len(prefix):], by)
    return UNKNOWN_BUTTON


def _fix(services: Services, ref: str, by: str) -> str:
    """🛠 Start fix of a repository's alarm (`ref` its id) or of pager's own."""
    if not (ID.fullmatch(ref) or ref == alarm.CONTROL):  # ASCII digits only: int() takes others
        return "this alarm is no longer known"
    return alarm.start_fix(services, ref, by)


def _seen(services: Services, ref: str, by: str) -> str:
    """👀 on a repository's alarm (`ref` its id): someone looks at it."""
    if not ID.fullmatch(ref):
        return "this alarm is no longer known"
    return alarm.seen_press(services, ref, by)


def _mute_alarm(services: Services, ref: str, by: str) -> str | commands.Reply:
    """🔕 on an alarm: its repository, named as the alarm's record names it."""
    if not ID.fullmatch(ref):
        return UNKNOWN_BUTTON
    name = text(services.store.load(alarm.alarm_key(ref)).data.get("repository"))
    return commands.mute_press(services, int(ref), name, by)


def _mute_repository(services: Services, thread: str, by: str) -> str | commands.Reply:
    """🔕 of the repository on a contribution (`thread`: <repository id>:<i|p|d><number>), named as the
    thread's record names it."""
    found = _thread(thread)
    if found is None:
        return UNKNOWN_BUTTON
    repository_id, (thing, number) = found
    return commands.mute_press(services, repository_id, _thread_named(services, repository_id, thing, number), by)


def _mute_thread(services: Services, thread: str, by: str) -> str | commands.Reply:
    """🔕 of the thread alone on a contribution (`thread` as above): that issue, pull request or discussion."""
    found = _thread(thread)
    if found is None:
        return UNKNOWN_BUTTON
    repository_id, (thing, number) = found
    name = _thread_named(services, repository_id, thing, number)
    return commands.mute_press(services, repository_id, name, by, (thing, number))


def _unmute(services: Services, ref: str, by: str) -> str:
    """🔔 Unmute of a repository (`ref` its id)."""
    return commands.unmute_press(services, int(ref)) if ID.fullmatch(ref) else UNKNOWN_BUTTON


def _unmute_thread(services: Services, thread: str, by: str) -> str:
    """🔔 Unmute of a thread (`thread` as above)."""
    found = _thread(thread)
    return commands.unmute_press(services, *found) if found is not None else UNKNOWN_BUTTON


def _thread(data: str) -> tuple[int, attention_store.Thread] | None:
    """The repository's id and the thread (issue, pull or discussion, and its number) a button's data names."""
    found = THREAD.fullmatch(data)
    if found is None:
        return None
    thing = {short: long for long, short in contribution.THINGS.items()}[found.group(2)]
    return int(found.group(1)), (thing, int(found.group(3)))


def _thread_named(services: Services, repository_id: int, thing: str, number: int) -> str:
    """The repository as the thread's record names it ("": no longer known)."""
    key = contribution.thing_key(repository_id, thing, number)
    return text(services.store.load(key, contribution.THREAD).data.get("repository"))


def _merge(services: Services, pull: str, by: str) -> str:
    """🔀 Merge of a release pull request (`pull`: <repository id>:<number>)."""
    repository_id, _, number = pull.partition(":")
    if not NUMBER.fullmatch(number):  # ASCII digits only: int() takes others, and fails on thousands
        return UNKNOWN_BUTTON
    if not ID.fullmatch(repository_id):
        return "this release is no longer known"
    return release.merge_press(services, int(repository_id), int(number))


def _again(services: Services, delivery: str, by: str) -> str:
    """↻ a failed delivery once more."""
    return presses.deliver_again(services, delivery)


# The buttons whose data is the whole of it, and what each does.
_WHOLE: Mapping[str, Callable[[Services], str]] = {
    alarm.AGAIN_ALL: lambda services: presses.deliver_all_again(services),
    alarm.REFUSED_AGAIN: lambda services: presses.deliver_refused_again(services, health.SECRET_REFUSED),
    alarm.PAGES_AGAIN: lambda services: presses.deliver_refused_again(services, health.PAGE_REFUSED),
}
# The buttons whose data is a prefix and what they are about (the rest), and what each does with that (the
# first prefix that fits: a longer one before a shorter one it begins with).
_PREFIXED: tuple[tuple[str, Callable[[Services, str, str], str | commands.Reply]], ...] = (
    (alarm.FIX_PREFIX, _fix),
    (alarm.SEEN_PREFIX, _seen),
    (alarm.MUTE_PREFIX, _mute_alarm),
    (contribution.MUTE_PREFIX, _mute_repository),
    (contribution.MUTE_THREAD_PREFIX, _mute_thread),
    (commands.UNMUTE_THREAD_PREFIX, _unmute_thread),
    (commands.UNMUTE_PREFIX, _unmute),
    (release.MERGE_PREFIX, _merge),
    (alarm.AGAIN_PREFIX, _again),
)


def _answer(services: Services, callback_id: str, answer: str, outcome: str) -> str:
    """Answer the press. Telegram unavailable propagates (500: Telegram retries, the press acts once)."""
    try:
        services.telegram.answer_callback(callback_id, answer)
    except TelegramRefused:
        pass  # too old or already answered: nothing left to tell the person
    return outcome
