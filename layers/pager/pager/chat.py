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

The chat's command menu (`BOT_COMMANDS`, the commands of pager.commands) is set in the chat's own scope
(setMyCommands with a BotCommandScopeChat), so that no other chat with the bot shows it: `pager setup` sets
it, and the container that learns of a move first sets it in the supergroup, whose id is a new chat's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from .errors import Conflict, PagerError, StoreUnavailable
from .observe import logger

if TYPE_CHECKING:  # pragma: no cover
    from .telegram import Telegram

KEY = "telegram#chat"

# The chat's command menu, (command, description) as pager.commands answers them: what `pager setup` gives
# Telegram's setMyCommands in the chat's scope (the menu a phone shows after "/" there). setMyCommands takes
# 1-32 characters of a-z, 0-9 and _ and a description of 1-256 characters (the Bot API's BotCommand).
BOT_COMMANDS: tuple[tuple[str, str], ...] = (
    ("status", "What is red now, releases waiting for Merge, mutes and the health of pager"),
    ("mute", "Silence a repository for a while: /mute owner/name 8h"),
    ("unmute", "Let a muted repository buzz again: /unmute owner/name"),
    ("help", "What pager can do here"),
)


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
    is neither the configured one nor the one known. `telegram` gives the container's Telegram client (built
    only when a move calls for the menu)."""

    def __init__(self, configured: str, telegram: Callable[[], Telegram]) -> None:
        self.configured = str(configured)
        self._current: str | None = None  # None: no move learnt (the configured chat, unless the table says otherwise)
        self._telegram = telegram

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
        container (if the table fails, they learn it from Telegram the same way). The container that records
        the move gives the new chat the command menu, which stayed with the old group's scope."""
        self._current = new
        if old != self.configured:
            return
        try:
            record = store.load(KEY)
            if moved_to(record.data, self.configured) == new:
                return  # recorded already, by the container that set the menu there
            store.save(record, {"from": old, "to": new, "at": now})
            logger.warning("chat moved", extra={"from": old, "to": new})
        except (Conflict, StoreUnavailable) as exc:  # another container recording it too, or no table: set it all the same
            logger.warning("chat move not recorded", extra={"error": type(exc).__name__})
        self._give_menu(new)

    def _give_menu(self, chat: str) -> None:
        """pager's command menu in `chat`'s scope (setMyCommands: setting it twice is harmless). A failure is
        logged and never the page's, which goes on to the new chat: `pager doctor` names a chat without the
        menu, and `make setup` sets it."""
        try:
            self._telegram().set_my_commands(BOT_COMMANDS, chat=chat)
        except PagerError as exc:
            logger.warning("chat menu not set", extra={"chat": chat, "error": type(exc).__name__})
