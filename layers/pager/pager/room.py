"""The room commands take in a chat: how often pager answers what people write to it, so that a command never
takes Telegram's room from a page.

Telegram limits what a bot sends to one chat (the Bot FAQ, "My bot is hitting limits, how do I avoid this?":
about one message a second, short bursts tolerated, no more than 20 messages a minute in a group); past that it
answers 429 to everything the bot sends there, pages included. Commands get a small share of that room, counted
per chat (the chat a command came from, where its answer goes), whoever wrote them:

    MESSAGES a minute     at most 4 messages in any 60 seconds, answers and "not allowed" together
    one at a time         never two within GAP_SECONDS (3): of Telegram's short burst, the pages keep the rest
    "not allowed"         at most one a minute, whoever asks (a crowd of strangers is told once)

A command without room is dropped without a word: nothing is carried out, the endpoint answers 200 and its log
line says why (never a 500, which Telegram would send again). The room is one small item per chat
(`command#room#<chat>`: the last minute's commands that took room, each as when and which message, and when
"not allowed" was said last), taken with a write conditional on the version read, so that of commands at the
same moment one takes the last room, and removed by the table's TTL a minute after its last message (what it
holds is read against `now`, so an item the TTL has not removed yet counts nothing it should not). A command
Telegram sends again (after a 500) finds its room taken already, and takes no more.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import Conflict
from .services import Services

WINDOW_SECONDS = 60.0
MESSAGES = 4  # commands' messages in a chat in any WINDOW_SECONDS: a fifth of a group's 20 a minute
GAP_SECONDS = 3.0  # at most one command's message within this (Telegram's ~1 a second, with its short burst)
NOT_ALLOWED_AGAIN_SECONDS = 60.0  # "not allowed" is said in a chat at most this often, whoever asks
RACES = 3  # lost conditional writes before a command gives up its room to those that won


def key(chat: str) -> str:
    return f"command#room#{chat}"


def no_room(data: Mapping[str, Any], now: float, *, not_allowed: bool = False) -> str:
    """Why a command may not send its answer (`not_allowed`: "not allowed") in the chat now, its room being
    `data`; "" when it may."""
    sent = recent(data, now)
    if not_allowed and now - _time(data.get("not_allowed")) < NOT_ALLOWED_AGAIN_SECONDS:
        return "said in this chat within the minute"
    if len(sent) >= MESSAGES:
        return f"{MESSAGES} commands answered in this chat within the minute"
    if sent and now - max(at for at, _ in sent) < GAP_SECONDS:
        return f"a command answered in this chat within {GAP_SECONDS:g} s"
    return ""


def taken(data: Mapping[str, Any], now: float, message: int, *, not_allowed: bool = False) -> dict[str, Any]:
    """The chat's room once the command `message` took room for its answer now."""
    said = now if not_allowed else _time(data.get("not_allowed"))
    return {"sent": [*([at, taker] for at, taker in recent(data, now)), [now, message]],
            **({"not_allowed": said} if said > float("-inf") else {})}


def recent(data: Mapping[str, Any], now: float) -> list[tuple[float, Any]]:
    """The commands that took room in the chat within the window: (when, which message) each."""
    sent = data.get("sent")
    found = []
    for pair in sent if isinstance(sent, list) else []:
        if isinstance(pair, list) and len(pair) == 2 and now - _time(pair[0]) < WINDOW_SECONDS:
            found.append((_time(pair[0]), pair[1]))
    return found


def take(services: Services, chat: str, message: int, *, not_allowed: bool = False) -> str:
    """Take room in `chat` for the answer to the command `message` now: "" once taken (or taken already, by the
    same command delivered before), else why there is none (nothing is written then). StoreUnavailable when the
    table cannot say."""
    for _ in range(RACES):
        record = services.store.load(key(chat))
        now = services.now()
        if any(taker == message for _, taker in recent(record.data, now)):
            return ""
        reason = no_room(record.data, now, not_allowed=not_allowed)
        if reason:
            return reason
        try:
            services.store.save(record, taken(record.data, now, message, not_allowed=not_allowed),
                                expires_at=int(now + WINDOW_SECONDS) + 1)
        except Conflict:  # another command took room at the same moment: look again
            continue
        return ""
    return "other commands took the room at the same moment"


def _time(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else float("-inf")
