"""Telegram as pager sees it: the Bot API methods it calls, and one chat as the maintainer sees it.

As strict as the real Bot API (core.telegram.org/bots/api), rule by rule:

- every answer is `{"ok": true, "result": ...}` or Telegram's error object, the HTTP status equal to
  `error_code` ("Making requests");
- HTML parse mode ("Formatting options", HTML style): only the tags b, strong, i, em, u, ins, s,
  strike, del, span class="tg-spoiler", tg-spoiler, a href, tg-emoji, code, pre, blockquote; every
  `<`, `>` and `&` that is not part of a tag or an entity must be escaped; the named entities are
  only &lt; &gt; &amp; &quot;, numerical ones all. Anything else, or a tag left open, is 400
  "Bad Request: can't parse entities: ...";
- a text is 1 to 4096 characters after entities parsing (sendMessage: "text"): 400 "message is too
  long" / "message text is empty";
- `callback_data` of a button is 1 to 64 bytes (InlineKeyboardButton): 400 "BUTTON_DATA_INVALID";
- an edit to identical text and buttons is 400 "message is not modified"; an edit of a message that
  is gone is 400 "message to edit not found"; an edit without `reply_markup` removes the inline
  keyboard (undocumented, confirmed by client libraries: see API-NOTES);
- a bot removed from the chat gets 403 "Forbidden: bot was kicked from the supergroup chat";
- answerCallbackQuery's `text` is 0 to 200 characters: longer is 400 "Bad Request: MESSAGE_TOO_LONG"
  (the limit is the method's; the description is what Telegram answers, as client libraries report);
- a sent or edited message comes back as a Message: message_id, date, chat {id, type}, text.

The methods `pager setup` and `pager doctor` call ("Getting updates", "Available methods"):

- a token Telegram does not know (`token` set and another one used) answers 401 "Unauthorized";
- getMe answers the bot as a User; getWebhookInfo a WebhookInfo: `url` ("" when none is set),
  `has_custom_certificate`, `pending_update_count`, `allowed_updates` as set, and `last_error_date`
  with `last_error_message` when the last delivery to the webhook failed (`webhook_error`);
- getUpdates answers the updates waiting (`updates`; `offset` confirms those before it, `limit` 1 to
  100) and, while a webhook is set, 409 "Conflict: can't use getUpdates method while webhook is
  active; use deleteWebhook to delete the webhook first"; deleteWebhook removes it (and the waiting
  updates with `drop_pending_updates`);
- getChatMember answers a ChatMember of the kind its `status` says (`members` sets one; the bot is a
  "member" unless told otherwise); a bot removed from the chat gets the same 403 as when it sends.

Every request goes through the world's `Faults` first.
"""

from __future__ import annotations

import html
import itertools
import json
import re
import threading
from dataclasses import dataclass
from typing import Any

from .faults import Faults, telegram_error
from .http import HttpRequest, HttpResponse

TAGS = frozenset({"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a", "tg-emoji",
                  "code", "pre", "blockquote"})
MAX_TEXT = 4096
MAX_CALLBACK_DATA = 64
MAX_CALLBACK_TEXT = 200
_TAG = re.compile(r"""<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z][a-zA-Z-]*(?:\s*=\s*(?:"[^"<>]*"|'[^'<>]*'|[^\s"'<>=`]+))?)*)\s*>""")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});")


class CantParse(ValueError):
    """What Telegram says of HTML it refuses."""


def parse_html(text: str) -> str:
    """The text a message shows once Telegram parsed its HTML; CantParse as Telegram words it."""
    shown: list[str] = []
    open_tags: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        offset = len(text[:i].encode())
        if char == "<":
            tag = _TAG.match(text, i)
            if tag is None:
                raise CantParse(f"Unsupported start tag at byte offset {offset}")
            closing, name = tag.group(1), tag.group(2).lower()
            if closing:
                if not open_tags or open_tags[-1] != name:
                    raise CantParse(f"Unexpected end tag at byte offset {offset}")
                open_tags.pop()
            elif name not in TAGS:
                raise CantParse(f'Unsupported start tag "{name}" at byte offset {offset}')
            else:
                open_tags.append(name)
            i = tag.end()
        elif char == "&":
            entity = _ENTITY.match(text, i)
            if entity is None:
                raise CantParse(f"Character '&' is reserved and must be escaped at byte offset {offset}")
            shown.append(html.unescape(entity.group(0)))
            i = entity.end()
        elif char == ">":
            raise CantParse(f"Character '>' is reserved and must be escaped at byte offset {offset}")
        else:
            shown.append(char)
            i += 1
    if open_tags:
        raise CantParse(f'Can\'t find end tag corresponding to start tag "{open_tags[-1]}"')
    return "".join(shown)


def shown_length(text: str) -> int:
    """How long Telegram counts a text: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


# The rights a ChatMemberAdministrator and a ChatMemberRestricted always carry (the Bot API's types).
ADMINISTRATOR_RIGHTS = ("can_be_edited", "is_anonymous", "can_manage_chat", "can_delete_messages", "can_manage_video_chats",
                        "can_restrict_members", "can_promote_members", "can_change_info", "can_invite_users",
                        "can_post_stories", "can_edit_stories", "can_delete_stories", "can_send_welcome_messages")
RESTRICTED_RIGHTS = ("can_send_messages", "can_send_audios", "can_send_documents", "can_send_photos", "can_send_videos",
                     "can_send_video_notes", "can_send_voice_notes", "can_send_polls", "can_send_other_messages",
                     "can_add_web_page_previews", "can_react_to_messages", "can_edit_tag", "can_change_info",
                     "can_invite_users", "can_pin_messages", "can_manage_topics")

NOT_MODIFIED = ("Bad Request: message is not modified: specified new message content and reply markup are exactly "
                "the same as a current content and reply markup of the message")


@dataclass
class Message:
    message_id: int
    chat_id: str
    text: str
    buttons: list[list[dict[str, str]]]  # rows of {"text", "callback_data"}
    thread_id: int | None = None
    notified: bool = True
    edits: int = 0

    def labels(self) -> tuple[tuple[str, ...], ...] | None:
        return tuple(tuple(b["text"] for b in row) for row in self.buttons) or None


class FakeTelegram:
    """The Bot API methods pager calls, keeping one chat's messages as a person would see them."""

    def __init__(self, *, faults: Faults | None = None, keep_requests: bool = True) -> None:
        self.faults = faults or Faults()
        self.keep_requests = keep_requests
        self.requests: list[HttpRequest] = []
        self.messages: dict[int, Message] = {}
        self.sent: list[int] = []  # message ids, in the order they were sent
        self.edits: list[int] = []  # message ids, once per edit
        self.answers: list[tuple[str, str | None]] = []  # (callback query id, text) per answerCallbackQuery
        self.webhook: dict[str, Any] = {}
        self.kicked = False  # the bot was removed from the chat
        self.refused: list[tuple[str, str]] = []  # (method, description) of every call answered 4xx
        self.token: str | None = None  # when set, only this bot token is known
        self.bot: dict[str, Any] = {"id": 123456, "is_bot": True, "first_name": "pager", "username": "pager_test_bot",
                                    "can_join_groups": True, "can_read_all_group_messages": False,
                                    "supports_inline_queries": False}
        self.updates: list[dict[str, Any]] = []  # waiting for getUpdates
        self.webhook_error: tuple[int, str] | None = None  # (last_error_date, last_error_message)
        self.pending_update_count = 0  # updates waiting for the webhook
        self.members: dict[int, dict[str, Any]] = {}  # user id -> the ChatMember fields to answer (status, rights)
        self._update_ids = itertools.count(500)
        self._ids = itertools.count(100)
        self._lock = threading.RLock()

    # -- faults

    def fail(self, pattern: str | None, status: int, count: int = 1, body: Any = None) -> Any:
        """The next `count` calls of a method matching `pattern` answer `status` (Telegram's error object)."""
        return self.faults.fail("telegram", pattern, status=status, count=count, body=body)

    def heal(self) -> None:
        self.faults.heal()

    # -- the Bot API

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if self.keep_requests:
            with self._lock:
                self.requests.append(request)
        method = request.path.rsplit("/", 1)[-1]
        fault = self.faults.call("telegram", method)
        if fault is not None and fault.no_answer:
            if fault.acts:
                self.handle(method, request.json())  # Telegram acts; its answer is lost on the way back
            return HttpResponse(0, fault.body)
        if fault is not None:
            return HttpResponse(fault.status, fault.body, dict(fault.headers))
        token = request.path.split("/")[1].removeprefix("bot") if request.path.count("/") >= 2 else ""
        if self.token is not None and token != self.token:
            return HttpResponse(401, telegram_error(401, "Unauthorized"))
        status, body = self.handle(method, request.json())
        if 400 <= status < 500:
            with self._lock:
                self.refused.append((method, str(body.get("description"))))
        return HttpResponse(status, body)

    def handle(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            if method in ("sendMessage", "editMessageText"):
                refused = self._refusal(params)
                if refused is not None:
                    return refused
            if method == "sendMessage":
                return self._send(params)
            if method == "editMessageText":
                return self._edit(params)
            if method == "answerCallbackQuery":
                if len(str(params.get("text") or "")) > MAX_CALLBACK_TEXT:
                    return 400, telegram_error(400, "Bad Request: MESSAGE_TOO_LONG")
                self.answers.append((str(params.get("callback_query_id")), params.get("text")))
                return _ok(True)
            if method == "setWebhook":
                self.webhook = dict(params)
                self.webhook_error = None  # a webhook set anew has no failed delivery yet
                return _ok(True)
            if method in ("getMe", "getWebhookInfo", "getUpdates", "deleteWebhook", "getChatMember"):
                return self._setup_method(method, params)
        return 404, telegram_error(404, "Not Found")

    def _setup_method(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The methods of the setup and the health check (the module docstring)."""
        if method == "getMe":
            return _ok(dict(self.bot))
        if method == "getWebhookInfo":
            return _ok(self._webhook_info())
        if method == "deleteWebhook":
            self.webhook = {}
            if params.get("drop_pending_updates"):
                self.updates.clear()
            return _ok(True)
        if method == "getUpdates":
            if self.webhook.get("url"):
                return 409, telegram_error(409, "Conflict: can't use getUpdates method while webhook is active; "
                                                "use deleteWebhook to delete the webhook first")
            limit = params.get("limit", 100)
            if not isinstance(limit, int) or not 1 <= limit <= 100:
                return 400, telegram_error(400, "Bad Request: limit must be between 1 and 100")
            offset = params.get("offset")
            if isinstance(offset, int):
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            return _ok([dict(u) for u in self.updates[:limit]])
        if "chat_id" not in params or not isinstance(params.get("user_id"), int):
            return 400, telegram_error(400, "Bad Request: chat_id and user_id are required")
        if self.kicked:
            return 403, telegram_error(403, "Forbidden: bot was kicked from the supergroup chat")
        return _ok(self._member(params["user_id"]))

    def _webhook_info(self) -> dict[str, Any]:
        url = str(self.webhook.get("url") or "")
        info: dict[str, Any] = {"url": url, "has_custom_certificate": False,
                                "pending_update_count": self.pending_update_count if url else len(self.updates)}
        if url:
            info["max_connections"] = int(self.webhook.get("max_connections") or 40)
            allowed = self.webhook.get("allowed_updates")
            if isinstance(allowed, str):
                allowed = json.loads(allowed)
            if allowed is not None:
                info["allowed_updates"] = list(allowed)
        if self.webhook_error is not None:
            info["last_error_date"], info["last_error_message"] = self.webhook_error
        return info

    def _member(self, user_id: int) -> dict[str, Any]:
        """A ChatMember as Telegram answers it: the fields its kind requires, the status's rights."""
        user = dict(self.bot) if user_id == self.bot["id"] else {"id": user_id, "is_bot": False, "first_name": "User"}
        fields = dict(self.members.get(user_id, {}))
        status = fields.pop("status", "member")
        member: dict[str, Any] = {"status": status, "user": user}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update({name: False for name in ADMINISTRATOR_RIGHTS}, can_manage_chat=True)
        elif status == "restricted":
            member.update({name: True for name in RESTRICTED_RIGHTS}, is_member=True, until_date=0)
        elif status == "kicked":
            member["until_date"] = 0
        member.update(fields)
        return member

    def receive(self, text: str, *, chat: dict[str, Any], user: dict[str, Any] | None = None,
                thread_id: int | None = None) -> dict[str, Any]:
        """Someone writes in a chat the bot is in: the Update getUpdates answers (a channel's as `channel_post`)."""
        message_id = next(self._ids)
        message: dict[str, Any] = {"message_id": message_id, "date": 1796200000 + message_id, "chat": dict(chat), "text": text}
        if user is not None:
            message["from"] = dict(user)
        if thread_id is not None:
            message.update(message_thread_id=thread_id, is_topic_message=True)
        kind = "channel_post" if chat.get("type") == "channel" else "message"
        update = {"update_id": next(self._update_ids), kind: message}
        with self._lock:
            self.updates.append(update)
        return update

    def _refusal(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """Telegram's refusal of a message's text or buttons, if any (the rules in the module docstring)."""
        if self.kicked:
            return 403, telegram_error(403, "Forbidden: bot was kicked from the supergroup chat")
        text = params.get("text")
        if not isinstance(text, str):
            return 400, telegram_error(400, "Bad Request: message text is empty")
        if params.get("parse_mode") == "HTML":
            try:
                text = parse_html(text)
            except CantParse as exc:
                return 400, telegram_error(400, f"Bad Request: can't parse entities: {exc}")
        if not text.strip():
            return 400, telegram_error(400, "Bad Request: message text is empty")
        if shown_length(text) > MAX_TEXT:
            return 400, telegram_error(400, "Bad Request: message is too long")
        for row in _keyboard(params):
            for button in row:
                data = button.get("callback_data")
                if not button.get("text") or not isinstance(data, str) or not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA:
                    return 400, telegram_error(400, "Bad Request: BUTTON_DATA_INVALID")
        return None

    def _send(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        message = Message(next(self._ids), str(params["chat_id"]), params["text"], _keyboard(params),
                          params.get("message_thread_id"), not params.get("disable_notification", False))
        self.messages[message.message_id] = message
        self.sent.append(message.message_id)
        return _ok(_message(message))

    def _edit(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        message = self.messages.get(int(params.get("message_id", 0)))
        if message is None:
            return 400, telegram_error(400, "Bad Request: message to edit not found")
        text, buttons = params.get("text", message.text), _keyboard(params)
        if text == message.text and buttons == message.buttons:
            return 400, telegram_error(400, NOT_MODIFIED)
        message.text, message.buttons = text, buttons
        message.edits += 1
        self.edits.append(message.message_id)
        return _ok(_message(message))

    # -- looking at the chat

    def chat(self) -> list[Message]:
        with self._lock:
            return [self.messages[k] for k in sorted(self.messages)]

    def view(self) -> dict[int, tuple[str, tuple[tuple[str, ...], ...] | None]]:
        """What the chat shows: message id -> (text, button labels by row, or None)."""
        return {m.message_id: (m.text, m.labels()) for m in self.chat()}

    def render(self) -> str:
        """The chat as plain text: each message, its buttons, whether it was edited."""
        lines = []
        for m in self.chat():
            text = re.sub(r"<[^>]+>", "", m.text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
            lines.append(f"[{m.message_id}]" + (" (edited)" if m.edits else "") + " " + text.replace("\n", "\n     "))
            for row in m.buttons:
                lines.append("     " + "  ".join(f"[ {b['text']} ]" for b in row))
        return "\n".join(lines)

    def delete(self, message_id: int) -> None:
        """The maintainer deletes a message in the chat."""
        with self._lock:
            del self.messages[message_id]

    def button_data(self, message_id: int, label_start: str) -> str:
        """The callback data of the button whose label starts with `label_start`."""
        message = self.messages[message_id]
        return next(b["callback_data"] for row in message.buttons for b in row if b["text"].startswith(label_start))


def _keyboard(params: dict[str, Any]) -> list[list[dict[str, str]]]:
    markup = params.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [[dict(b) for b in row] for row in markup.get("inline_keyboard", [])]


def _message(message: Message) -> dict[str, Any]:
    """A Message as Telegram answers it: the chat as its number (a @name resolved) and its type."""
    chat = message.chat_id
    number = int(chat) if chat.lstrip("-").isdigit() else -1000000000000 - sum(map(ord, chat))
    kind = "private" if number > 0 else "supergroup" if str(number).startswith("-100") else "group"
    return {"message_id": message.message_id, "date": 1796200000 + message.message_id, "text": message.text,
            "chat": {"id": number, "type": kind}}


def _ok(result: Any) -> tuple[int, dict[str, Any]]:
    return 200, {"ok": True, "result": result}
