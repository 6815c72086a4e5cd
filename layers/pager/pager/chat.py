"""Where pager's messages go: the configured chat, or the supergroup Telegram moved it to.

Telegram turns a group into a supergroup (a new chat id) when it gains some features; from then on every
call naming the old id answers 400 "group chat was upgraded to a supergroup chat" with
`parameters.migrate_to_chat_id` (`ChatMigrated`). pager follows: the page goes to the new chat in the
same delivery, and the move is remembered in the table (`KEY`: {from, to, at}) for every later send and
edit, by every container. It applies while `TELEGRAM_CHAT_ID` is still the old id: once the setting
names the new chat (or another one), the record says nothing. The sweep shows the move in the control
repository's alarm until the setting is updated (pager.sweep.health), and `pager doctor` names it.

Message ids count per chat, so a record of a message keeps its chat beside its id (`Posted`): a message
in a chat pager no longer writes to is not edited (its id may be another message's in the new chat) but
shown anew.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import Conflict, StoreUnavailable
from .observe import logger

KEY = "telegram#chat"


def move_of(data: Mapping[str, Any], configured: str) -> Mapping[str, Any] | None:
    """The move recorded, while it is one of the configured chat's (None: the setting names another chat)."""
    return data if data.get("to") and str(data.get("from")) == str(configured) else None


def moved_to(data: Mapping[str, Any], configured: str) -> str:
    """The chat to write to: where the configured chat moved, or the configured chat itself."""
    move = move_of(data, configured)
    return str(move["to"]) if move else str(configured)


class Chat:
    """The chat of one container's services. Sends go to the configured chat until this container learns
    of a move (from Telegram's answer, or from the table when a record names a chat it does not know):
    so the usual page costs no read. The table is read only when a message or a press names a chat that
    is neither the configured one nor the one known."""

    def __init__(self, configured: str) -> None:
        self.configured = str(configured)
        self._current: str | None = None  # None: no move learnt (the configured chat, unless the table says otherwise)

    @property
    def send_to(self) -> str:
        """The chat new messages go to, as this container knows it."""
        return self._current or self.configured

    def is_current(self, chat: str | int | None, store: Any) -> bool:
        """Whether `chat` (None: the configured chat) is the one pager writes to now."""
        chat = self.configured if chat is None else str(chat)
        if chat != self.send_to and chat != self.configured:  # a chat this container has not heard of: asked
            self._current = moved_to(store.load(KEY).data, self.configured)
        return chat == self.send_to

    def moved(self, store: Any, old: str, new: str, now: float) -> None:
        """Telegram said `old` is now `new`: write there from now on; remembered in the table for every other
        container (if the table fails, they learn it from Telegram the same way)."""
        self._current = new
        if old != self.configured:
            return
        try:
            record = store.load(KEY)
            if moved_to(record.data, self.configured) != new:
                store.save(record, {"from": old, "to": new, "at": now})
                logger.warning("chat moved", extra={"from": old, "to": new})
        except (Conflict, StoreUnavailable) as exc:
            logger.warning("chat move not recorded", extra={"error": type(exc).__name__})
