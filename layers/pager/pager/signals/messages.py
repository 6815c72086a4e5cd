"""One thing, one message: what a record shows in the chat, and how a moment changes it.

Every signal keeps the message of its thing in its record (`Shown`: its id, its chat, the text and buttons
shown) and decides for each moment (pager.attention) whether to send it, edit it, or repost it: Telegram
notifies of new messages only, so a moment that must buzz on a thing already shown sends the message anew
with a sound and retires the old one, which the next step deletes (`tidy`). So the chat keeps one message
per thing, and the newest of them is the one that called.

Pure: records in, effects out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..attention import Sound
from ..engine.effects import Buttons, DeleteMessage, EditMessage, SendMessage, Step

RETIRED = "retired"  # a record's messages posted anew below, still to delete: [{id, chat}]


@dataclass(frozen=True)
class Shown:
    """A message as its record keeps it."""

    id: int
    chat: str | None
    text: str
    buttons: Any  # as JSON keeps them (`buttons_json`)


def buttons_json(buttons: Any) -> Any:
    """Buttons as a record keeps them (JSON has lists, not tuples), for comparing with what is shown."""
    if not buttons:
        return None
    return [[[label, data] for label, data in row] for row in buttons]


def show(shown: Shown | None, text: str, buttons: Buttons | None, sound: Sound | None, *,
         reply_to: int | None = None, reply_chat: str | None = None) -> tuple[SendMessage | EditMessage | None, bool]:
    """The effect that makes the chat show `text` and `buttons` for a moment whose `sound` is given (None:
    an edit-only moment, which never buzzes), and whether it is a repost (the old message then retires).

    Not shown yet: sent, with a sound if the moment buzzes. Shown, and the moment buzzes: sent anew with a
    sound (a repost). Shown and changed: edited. Unchanged: nothing."""
    if shown is None:
        notify = sound.buzz if sound is not None else False
        return SendMessage(text, buttons, notify=notify, reply_to=reply_to, chat=reply_chat if reply_to else None,
                           rests=notify and sound is not None and sound.rests), False
    if sound is not None and sound.buzz:
        return SendMessage(text, buttons, notify=True, rests=sound.rests), True
    if text != shown.text or buttons_json(buttons) != shown.buttons:
        return EditMessage(shown.id, text, buttons, chat=shown.chat), False
    return None, False


def retired_after(data: Mapping[str, Any], shown: Shown | None, reposted: bool) -> list[dict[str, Any]]:
    """The record's messages still to delete once a step posted (a repost retires the one shown)."""
    retired = list(data.get(RETIRED) or [])
    if reposted and shown is not None:
        retired.append({"id": shown.id, "chat": shown.chat})
    return retired


def tidy(data: dict[str, Any]) -> Step | None:
    """Delete the first message a repost retired; None when none waits."""
    retired = [r for r in data.get(RETIRED) or [] if isinstance(r, Mapping) and isinstance(r.get("id"), int)]
    if not retired:
        return None
    first, rest = retired[0], retired[1:]

    def then(_: Any) -> dict[str, Any]:
        left = {k: v for k, v in data.items() if k != RETIRED}
        return {**left, RETIRED: rest} if rest else left

    return Step("", effect=DeleteMessage(int(first["id"]), first.get("chat")), then=then)


# -- a call that holds one thing: that thing's own message, posted anew ----------------------------------------


def shown_of(data: Mapping[str, Any]) -> Shown | None:
    """The message a record shows, whichever way it keeps it: an alarm's head in `message` (while open), a
    contribution's or a release's in `message_id`, `chat`, `text` and `buttons`."""
    message = data.get("message")
    if isinstance(message, Mapping):
        if message.get("open") and isinstance(message.get("id"), int):
            return Shown(int(message["id"]), message.get("chat"), str(message.get("text", "")), message.get("buttons"))
        return None
    if isinstance(data.get("message_id"), int) and data.get("text"):
        return Shown(int(data["message_id"]), data.get("chat"), str(data["text"]), data.get("buttons"))
    return None


def _moved(data: Mapping[str, Any], posted: Any) -> dict[str, Any]:
    """The record once its message was posted anew (`posted`), in the record's own way of keeping it."""
    message = data.get("message")
    if isinstance(message, Mapping):
        return {**data, "message": {**message, "id": posted.message_id, "chat": posted.chat}}
    return {**data, **posted.fields()}


def decide_call(period: float, end: float, loud: bool, *, reply_to: int | None = None, reply_chat: str | None = None):
    """The call at the end of a quiet period (`period`: its start, `end`: when it ended) holds one thing: its own
    message, sent anew (with a sound when `loud`; a reply to `reply_to`, the first message of its thread, when
    it is not that one) and the old one deleted, as a repost does; once per period (`called_for`). Nothing
    when the record shows no message any more, or one that says it is closed (the call then says it in
    words); nothing but the mark for an alarm that rang since the period ended (it called already). An
    alarm's head keeps when it rang (`called`), as its own buzz does, another record too (`rang`); every
    record keeps the message it replaced (`moved_from`), so that a thread that began with it follows it."""

    def decide(data: dict[str, Any], now: float) -> Step:
        tidying = tidy(data)
        if tidying is not None:
            return tidying
        if data.get("called_for") == period:
            return Step("called already")
        shown = shown_of(data)
        if shown is None or data.get("state") not in (None, "open"):
            return Step("no message to call with")  # gone, or it says closed: the call says it in words
        alarm_head = isinstance(data.get("message"), Mapping)
        if alarm_head and isinstance(data.get("called"), (int, float)) and data["called"] >= end:
            return Step("rang since", data={**data, "called_for": period})
        rang = ({"called": now} if alarm_head else {"rang": now}) if loud else {}
        return Step("called with its own message", effect=_call(shown, loud, reply_to, reply_chat), then=lambda posted: {
            **_moved(data, posted), **rang, "called_for": period, "moved_from": shown.id,
            RETIRED: retired_after(data, shown, True)})

    return decide


def _call(shown: Shown, loud: bool, reply_to: int | None, reply_chat: str | None) -> SendMessage:
    """The call's message: the one the record shows, sent anew with its buttons (with a sound when `loud`), a
    reply to `reply_to` in `reply_chat` (the first message of its thread) unless it is that message itself."""
    buttons = [[(str(label), str(value)) for label, value in row] for row in shown.buttons or []] or None
    thread = reply_to if reply_to is not None and reply_to != shown.id else None
    return SendMessage(shown.text, buttons, notify=loud, rests=loud, reply_to=thread,
                       chat=reply_chat if thread is not None else None)
