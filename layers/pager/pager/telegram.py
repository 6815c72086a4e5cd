"""The Telegram Bot API client.

Every method is a POST of JSON to `{api_url}/bot{token}/{method}` through the injected
`requests.Session`. Every HTTP call counts in `calls`, checks the invocation's deadline first
(`pager.deadline.check`) and carries a timeout bounded by it.

Answers (`{"ok": false, "error_code", "description", "parameters"}` on failure) map onto `pager.errors`:
- 429 with `retry_after` of at most 3 s: wait (the injected `sleep`) and try once more; a longer
  wait, a second 429, 5xx, a timeout, a connection error -> TelegramUnavailable. A message that gives way
  to pages (`send_message(gives_way=True)`: an answer to a command) is not tried again: its 429 is raised
  at once;
- a group upgraded to a supergroup (400 with `parameters.migrate_to_chat_id`) -> ChatMigrated with the
  new chat's id, whatever the method; any other 4xx -> TelegramRefused, except:
- sendMessage with a reply: "message to be replied not found" (the message replied to is gone) sends it
  again without the reply, which `allow_sending_without_reply` does not do in a forum topic (ReplyParameters:
  "Always False for replies in another chat or forum topic");
- editMessageText: "message is not modified" has succeeded; any other 400 means the message cannot be
  edited ("message to edit not found": gone; "message can't be edited": not the bot's; a text it cannot
  parse) -> MessageNotEditable, which the caller answers by sending the text anew;
- deleteMessage: a 400 saying the message is not there ("message to delete not found") or cannot be
  deleted ("message can't be deleted", "... for everyone": older than 48 hours, not the bot's) is
  `False`: nothing more to do.

The bot token is part of every URL, and requests' own exceptions quote the URL: they are never
chained or quoted. The errors raised here name the method and Telegram's answer, never the token.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

import requests

from . import deadline
from .errors import ChatMigrated, MessageNotEditable, TelegramRefused, TelegramUnavailable
from .html import ELLIPSIS, cut
from .transport import may_have_arrived

CONNECT_TIMEOUT = 3.05
READ_TIMEOUT = 5.0

MAX_CALLBACK_TEXT = 200  # characters of an answerCallbackQuery notification
MAX_CALLBACK_DATA = 64  # bytes of a button's callback_data
SHORT_WAIT = 3.0  # seconds of retry_after that are worth waiting for once

NOT_MODIFIED = "message is not modified"
REPLY_GONE = "message to be replied not found"
# deleteMessage's refusals that leave nothing to do (Bot API server, Client.cpp: check_message's
# "message to delete not found"; TDLib's "Message can't be deleted" and "... for everyone")
NOT_DELETABLE = ("message to delete not found", "message can't be deleted")
# BotCommand (the Bot API): command 1-32 of lowercase English letters, digits and underscores; a
# description of 1-256 characters; setMyCommands: at most 100 commands.
COMMAND = re.compile(r"[a-z0-9_]{1,32}")
MAX_COMMAND_DESCRIPTION = 256
MAX_COMMANDS = 100

Buttons = list[list[tuple[str, str]]]


class Telegram:
    """The bot's side of the Telegram Bot API: send, edit, delete, answer a button press, the command menu."""

    def __init__(
        self,
        session: requests.Session,
        *,
        token: str,
        api_url: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._session = session
        self._token = token
        self._api_url = api_url.rstrip("/")
        self._sleep = sleep
        self._username: str | None = None  # getMe's, once asked
        self.calls = 0

    def __repr__(self) -> str:
        return f"Telegram(api_url={self._api_url!r}, calls={self.calls})"

    def send_message(
        self,
        chat_id: int | str,
        text: str,
        *,
        thread_id: int | None = None,
        buttons: Buttons | None = None,
        notify: bool = True,
        reply_to: int | None = None,
        gives_way: bool = False,
    ) -> int:
        """Send an HTML message (link previews off); returns its message_id. `reply_to` threads it under
        that message of the chat; when that one is gone it is sent all the same, as a plain message: by
        Telegram (`allow_sending_without_reply`), or, in a forum topic, where Telegram refuses it ("message
        to be replied not found"), sent again without the reply. `gives_way`: a flood limit (429) is raised
        at once, never waited out and tried again, which would take the chat's room from the pages."""
        payload: dict[str, Any] = {
            "chat_id": chat_id,
            "text": cut(text),
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True},
        }
        if thread_id is not None:
            payload["message_thread_id"] = thread_id
        if buttons:
            payload["reply_markup"] = _keyboard(buttons)
        if not notify:
            payload["disable_notification"] = True
        if reply_to is not None:
            payload["reply_parameters"] = {"message_id": reply_to, "allow_sending_without_reply": True}
        try:
            result = self._call("sendMessage", payload, patient=not gives_way)
        except ChatMigrated:
            raise
        except TelegramRefused as exc:
            if reply_to is None or exc.status != 400 or REPLY_GONE not in exc.description.lower():
                raise
            del payload["reply_parameters"]  # the message replied to is gone: the text is still worth showing
            result = self._call("sendMessage", payload, patient=not gives_way)
        message_id = result.get("message_id") if isinstance(result, dict) else None
        if not isinstance(message_id, int) or isinstance(message_id, bool):
            raise TelegramUnavailable("telegram sendMessage: answer without a message_id")
        return message_id

    def edit_message(self, chat_id: int | str, message_id: int, text: str, *, buttons: Buttons | None = None) -> None:
        """Replace a message's text and buttons; without buttons its keyboard goes away.

        "message is not modified" is success; any other 400 but a migrated group raises MessageNotEditable
        (the module docstring); a 403 stays TelegramRefused.
        """
        payload: dict[str, Any] = {
            "chat_id": chat_id,
            "message_id": message_id,
            "text": cut(text),
            "parse_mode": "HTML",
            "link_preview_options": {"is_disabled": True},
        }
        if buttons:
            payload["reply_markup"] = _keyboard(buttons)
        try:
            self._call("editMessageText", payload)
        except ChatMigrated:
            raise
        except TelegramRefused as exc:
            if exc.status != 400:
                raise
            if NOT_MODIFIED in exc.description.lower():
                return
            raise MessageNotEditable(f"telegram editMessageText: the message cannot be edited: {exc.description or 400}",
                                     status=exc.status, description=exc.description) from exc

    def delete_message(self, chat_id: int | str, message_id: int) -> bool:
        """Delete one of the bot's messages: True when deleted, False when Telegram says it is not there or
        cannot be deleted (older than 48 hours, not the bot's): either way, nothing more to do."""
        try:
            self._call("deleteMessage", {"chat_id": chat_id, "message_id": message_id})
        except ChatMigrated:
            raise
        except TelegramRefused as exc:
            if exc.status == 400 and any(words in exc.description.lower() for words in NOT_DELETABLE):
                return False
            raise
        return True

    def answer_callback(self, callback_id: str, text: str | None = None) -> None:
        """Answer a button press (Telegram shows `text` as a short notification)."""
        payload: dict[str, Any] = {"callback_query_id": callback_id}
        if text:
            payload["text"] = text if len(text) <= MAX_CALLBACK_TEXT else text[: MAX_CALLBACK_TEXT - 1] + ELLIPSIS
        self._call("answerCallbackQuery", payload)

    def get_me(self) -> dict[str, Any]:
        """The bot as Telegram knows it (getMe): the cheapest call that tells Telegram answers."""
        bot = self._object("getMe", {})
        username = bot.get("username")
        if isinstance(username, str) and username:
            self._username = username
        return bot

    def bot_username(self) -> str:
        """The bot's username (without the @), from getMe: asked once per client, then kept."""
        if self._username is None:
            self.get_me()
        if self._username is None:
            raise TelegramUnavailable("telegram getMe: answer without the bot's username")
        return self._username

    def set_my_commands(self, commands: Sequence[tuple[str, str]], *, chat: int | str | None = None) -> None:
        """The bot's command menu (setMyCommands): in one chat only (`chat`: its BotCommandScopeChat; the menu
        a phone shows after "/" there, and nowhere else), or, without `chat`, in every chat (the default
        scope). (command, description) pairs, checked as the Bot API's BotCommand before any call
        (ValueError). A group upgraded to a supergroup is ChatMigrated, as for every call naming it."""
        if len(commands) > MAX_COMMANDS:
            raise ValueError(f"setMyCommands takes at most {MAX_COMMANDS} commands, got {len(commands)}")
        for command, description in commands:
            if not COMMAND.fullmatch(command):
                raise ValueError(f"a command is 1-32 of a-z, 0-9 and _, not {command!r}")
            if not 1 <= len(description) <= MAX_COMMAND_DESCRIPTION:
                raise ValueError(f"a command's description is 1-{MAX_COMMAND_DESCRIPTION} characters, got {len(description)}")
        self._call("setMyCommands", {"commands": [{"command": c, "description": d} for c, d in commands], **scope(chat)})

    def get_my_commands(self, *, chat: int | str | None = None) -> list[dict[str, Any]]:
        """The bot's command menu in one chat (getMyCommands in its BotCommandScopeChat), or, without `chat`, the
        default scope's: BotCommand objects, as set for exactly that scope (an empty list when none is)."""
        result = self._call("getMyCommands", scope(chat))
        if not isinstance(result, list):
            raise TelegramUnavailable("telegram getMyCommands: answer is not a list")
        return [command for command in result if isinstance(command, dict)]

    def chat_member(self, chat_id: int | str, user_id: int) -> dict[str, Any]:
        """A member of a chat as Telegram knows it (getChatMember): the bot's own, whether it may post."""
        return self._object("getChatMember", {"chat_id": chat_id, "user_id": user_id})

    def chat(self, chat_id: int | str) -> dict[str, Any]:
        """The chat as Telegram knows it now (getChat): a ChatFullInfo, a group's default permissions among it."""
        return self._object("getChat", {"chat_id": chat_id})

    def may_post(self, chat_id: int | str) -> bool:
        """Whether the bot may post in the chat now: its own ChatMember (the bot's id is its token's first
        part), and for a member that is no administrator the chat itself (getChat), whose default
        permissions bind it."""
        bot = self._token.split(":", 1)[0]
        if not bot.isdigit():
            return False
        member = self.chat_member(chat_id, int(bot))
        return may_post(member, self.chat(chat_id) if member.get("status") in BOUND else None)

    def _object(self, method: str, payload: dict[str, Any]) -> dict[str, Any]:
        """A method whose result is an object (anything else is an answer pager cannot use)."""
        result = self._call(method, payload)
        if not isinstance(result, dict):
            raise TelegramUnavailable(f"telegram {method}: answer is not an object")
        return result

    # -- transport ------------------------------------------------------------------------------------

    def _call(self, method: str, payload: dict[str, Any], *, patient: bool = True) -> Any:
        """One Bot API method, with the one short wait after a brief flood limit (none when not `patient`)."""
        try:
            return self._post(method, payload)
        except TelegramUnavailable as exc:
            wait = exc.retry_after
            if not patient or exc.status != 429 or wait is None or wait > SHORT_WAIT:
                raise
            if deadline.timeout(wait) < wait:
                raise TelegramUnavailable(
                    f"telegram {method}: rate limited, retry after {wait:g} s is past the deadline",
                    status=429,
                    retry_after=wait,
                ) from None
        self._sleep(wait)
        return self._post(method, payload)

    def _post(self, method: str, payload: dict[str, Any]) -> Any:
        step = f"telegram {method}"
        deadline.check(step)
        timeout = (deadline.timeout(CONNECT_TIMEOUT), deadline.timeout(READ_TIMEOUT))
        self.calls += 1
        failure: str | None = None
        sent = False
        try:
            response = self._session.post(f"{self._api_url}/bot{self._token}/{method}", json=payload, timeout=timeout)
        except requests.RequestException as exc:
            failure = "no answer in time" if isinstance(exc, requests.Timeout) else f"no answer ({type(exc).__name__})"
            sent = may_have_arrived(exc)
        if failure is not None:
            # Raised outside the except clause: requests' exception quotes the URL, and so the token.
            raise TelegramUnavailable(f"{step}: {failure}", sent=sent)
        return self._result(response, step)

    def _result(self, response: requests.Response, step: str) -> Any:
        """The method's result; the error that Telegram's answer says otherwise (the module's docstring)."""
        status = response.status_code
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):
            if 400 <= status < 500 and status != 429:
                raise TelegramRefused(f"{step}: Telegram refused ({status})", status=status)
            raise TelegramUnavailable(f"{step}: unreadable answer ({status})", status=status)
        if body.get("ok") is True and 200 <= status < 300:
            return body.get("result")
        code = body.get("error_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else status
        given = body.get("parameters")
        raise _failure(step, code, self._scrub(str(body.get("description") or "")), given if isinstance(given, dict) else {})

    def _scrub(self, text: str) -> str:
        """Telegram's words, with the token taken out should they ever quote it."""
        return text.replace(self._token, "<token>") if self._token else text


def scope(chat: int | str | None) -> dict[str, Any]:
    """The `scope` parameter of the command menu's methods: one chat's (BotCommandScopeChat, `chat_id` an
    Integer or a String as the Bot API takes it), or none for the default scope (BotCommandScopeDefault, what
    Telegram takes when no scope is given)."""
    return {} if chat is None else {"scope": {"type": "chat", "chat_id": chat}}


# The ChatMember kinds a group's default permissions bind (an administrator and the creator they do not).
BOUND = ("member", "restricted")


def _failure(step: str, code: int, description: str, parameters: dict[str, Any]) -> TelegramUnavailable | TelegramRefused:
    """What a failed answer's error code and parameters mean: a flood limit and its wait, Telegram failing, a
    group upgraded to a supergroup, or a refusal."""
    if code == 429:
        retry_after = parameters.get("retry_after")
        retry_after = float(retry_after) if isinstance(retry_after, (int, float)) else None
        return TelegramUnavailable(
            f"{step}: rate limited" + (f", retry after {retry_after:g} s" if retry_after is not None else ""),
            status=429,
            retry_after=retry_after,
        )
    if not 400 <= code < 500:
        return TelegramUnavailable(f"{step}: Telegram answered {code}: {description}", status=code)
    migrated = parameters.get("migrate_to_chat_id")
    if isinstance(migrated, (int, str)) and not isinstance(migrated, bool) and str(migrated).lstrip("-").isdigit():
        return ChatMigrated(f"{step}: the group is now the supergroup {migrated}", status=code, description=description,
                            to_chat=str(migrated))
    return TelegramRefused(f"{step}: Telegram refused ({code}): {description}", status=code, description=description)


def may_post(member: dict[str, Any], chat: dict[str, Any] | None = None) -> bool:
    """Whether a ChatMember may post messages (the Bot API's ChatMember and ChatPermissions): the creator;
    an administrator unless a channel's without "Post messages"; a member (a restricted one only with its
    own "Send messages") while the group's default permissions (the ChatFullInfo `chat`, when read) let
    members send, never in a channel, where only administrators post."""
    status = member.get("status")
    if status in BOUND:
        chat = chat or {}
        permissions = chat.get("permissions")
        return (chat.get("type") != "channel"
                and (status == "member" or member.get("can_send_messages") is True)
                and not (isinstance(permissions, dict) and permissions.get("can_send_messages") is False))
    return status == "creator" or (status == "administrator" and member.get("can_post_messages", True) is not False)


def _keyboard(buttons: Buttons) -> dict[str, Any]:
    rows = []
    for row in buttons:
        keys = []
        for label, data in row:
            size = len(data.encode())
            if not 1 <= size <= MAX_CALLBACK_DATA:
                raise ValueError(f"callback_data must be 1-{MAX_CALLBACK_DATA} bytes, got {size}")
            keys.append({"text": label, "callback_data": data})
        rows.append(keys)
    return {"inline_keyboard": rows}
