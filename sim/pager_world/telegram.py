"""Telegram as pager sees it: the Bot API methods it calls, and the chats the bot is in as people see them.

As strict as the real Bot API (core.telegram.org/bots/api), rule by rule:

- every answer is `{"ok": true, "result": ...}` or Telegram's error object, the HTTP status equal to
  `error_code` ("Making requests");
- HTML parse mode ("Formatting options", HTML style): only the tags b, strong, i, em, u, ins, s,
  strike, del, span class="tg-spoiler", tg-spoiler, a href, tg-emoji, code, pre, blockquote; every
  `<`, `>` and `&` that is not part of a tag or an entity must be escaped; the named entities are
  only &lt; &gt; &amp; &quot;, numerical ones all. Anything else, or a tag left open, is 400
  "Bad Request: can't parse entities: ...";
- within HTML, TDLib's own parser (td/telegram/MessageEntity.cpp, `parse_html`, which the Bot API
  server calls for parse_mode HTML): a `<span>` whose class is not "tg-spoiler" is `Tag "span" must
  have class "tg-spoiler" at byte offset N`; a `<tg-emoji>` around some text whose `emoji-id` is not a
  non-zero integer is "Invalid custom emoji identifier specified" (both answered as 400 "Bad Request:
  can't parse entities: ...");
- a text is 1 to 4096 characters after entities parsing (sendMessage: "text"): 400 "message is too
  long" / "message text is empty";
- `callback_data` of a button is 1 to 64 bytes (InlineKeyboardButton): 400 "BUTTON_DATA_INVALID";
- an edit to identical text and buttons is 400 "message is not modified"; an edit of a message that
  is gone is 400 "message to edit not found"; an edit without `reply_markup` removes the inline
  keyboard (undocumented; bot developers and client libraries report it);
- a bot removed from the chat gets 403 "Forbidden: bot was kicked from the group chat" (the
  supergroup chat, the channel chat; in a private chat "Forbidden: bot was blocked by the user");
- answerCallbackQuery's `text` is 0 to 200 characters: longer is 400 "Bad Request: MESSAGE_TOO_LONG"
  (the limit is the method's; the description is what Telegram answers, as client libraries report);
- a sent or edited message comes back as a Message: message_id, date (when it was sent, on the fake's
  clock), chat (id, type, title or first_name, username, is_forum), text, `reply_markup` (its inline
  keyboard, when it has one: "Message", field reply_markup), and `reply_to_message` (the message it
  replies to, without a reply of its own: "Message", field reply_to_message). A reply may carry an inline
  keyboard like any message (sendMessage takes `reply_parameters` and `reply_markup` together);
- sendMessage's `reply_parameters` (ReplyParameters): an object, or 400 "Bad Request: object expected as
  reply parameters", holding `message_id` (else "Bad Request: can't find field \"message_id\""; 0 or
  less: no reply at all). The message replied to must be in the chat the message goes to (or in the
  chat its `chat_id` names); one that is not there is 400 "Bad Request: message to be replied not found",
  unless `allow_sending_without_reply` is true, the reply is in the same chat and the message goes to no
  forum topic: then the message is sent as a plain one (Client.cpp, `check_reply_parameters` and
  `TdOnCheckMessageCallback`, whose `allow_empty` sends it without the reply). ReplyParameters says of
  `allow_sending_without_reply`: "Pass True if the message should be sent even if the specified message
  to be replied to is not found. Always False for replies in another chat or forum topic." So a message
  sent into a topic (`message_thread_id`, a topic of a forum) whose reply is gone is refused, whatever
  the flag says. Replies across forum topics are not modelled;
- editMessageText of a message someone else wrote is 400 "Bad Request: message can't be edited" (TDLib,
  MessagesManager.cpp `can_edit_message`: in a chat other than a channel only outgoing messages; a
  bot's own message has no time limit there, `has_edit_time_limit = !(is_bot && m->is_outgoing)`);
- deleteMessage (its description's list of limitations): no `chat_id` is 400 "Bad Request: chat
  identifier is not specified" and no `message_id` "Bad Request: message identifier is not specified"
  (Client.cpp, `process_delete_message_query`); then the chat as for every call; a message that is not
  in that chat (never sent, deleted already) is 400 "Bad Request: message to delete not found"
  (`check_message`). A message can only be deleted if it was sent less than 48 hours ago; the bot may
  delete its own messages in private chats, groups and supergroups (and its posts in a channel: the fake
  does not check the bot's right to post there, and so not to delete either), incoming ones in a
  private chat, any in a group where it is an administrator, any in a supergroup or channel where it
  has `can_delete_messages` (`members` of the bot's id). Otherwise TDLib refuses, and its words depend
  on the kind of chat (MessagesManager.cpp, `delete_messages`): in a supergroup or a channel
  `can_delete_channel_message` fails and the answer is 400 "Bad Request: message can't be deleted"; in a
  group or a private chat `can_revoke_message` fails (a bot's revoke limit is 2 days) and it is 400
  "Bad Request: message can't be deleted for everyone" (seen by users, tdlib/telegram-bot-api#403).
  TDLib lets a group's message go at exactly 48 hours; the fake follows the documentation's "less
  than". A deleted message leaves the chat and is logged in `deleted`;
- flood control counts sendMessage and editMessageText only (below). Whether deleteMessage counts is
  not documented (the Bot API server's maintainer: "The limits are high enough to cover all reasonable
  usages", tdlib/telegram-bot-api#572): the fake does not count it;
- setMyCommands (BotCommand, setMyCommands): `commands` missing or empty sets an empty list (Client.cpp,
  `get_bot_commands`); not JSON is 400 "Bad Request: can't parse commands JSON object", not an array
  "Bad Request: expected an Array of BotCommand", an item that is not an object or lacks a string
  `command` or `description` "Bad Request: can't parse BotCommand: ..." (its `get_bot_command`, and
  tdutils' JsonBuilder.cpp for the words). TDLib (BotCommand.cpp, `set_commands`) trims both, drops a
  leading "/", and refuses an empty command ("Bad Request: command must be non-empty"), one longer than 32
  characters ("Bad Request: command length must not exceed 32"), an empty description ("Bad Request:
  command description must be non-empty") or one longer than 256 ("Bad Request: command description
  length must not exceed 256"). Telegram's servers then refuse a command that is not only lowercase
  English letters, digits and underscores, 400 "Bad Request: BOT_COMMAND_INVALID", and more than 100
  commands, 400 "Bad Request: BOT_COMMANDS_TOO_MUCH" (the words as client libraries report them:
  tdlib/telegram-bot-api#98, openclaw/openclaw#11567); which of the two comes first is not documented.
  The commands are kept per scope and language (`commands`, keyed by the scope and the language code, ""
  when none is given); getMyCommands answers exactly those of its scope and language, an empty list when
  none are set (no other scope's list stands in: "Determining list of commands" is what a user's app shows,
  not what getMyCommands answers); deleteMyCommands removes them ("After deletion, higher level commands
  will be shown to affected users"), and so does setMyCommands with an empty list;
- the scope (setMyCommands, getMyCommands and deleteMyCommands: `scope`, a BotCommandScope, "Defaults to
  BotCommandScopeDefault"), as the Bot API server reads it (Client.cpp, `get_bot_command_scope`, after the
  commands for setMyCommands): not JSON is 400 "Bad Request: can't parse BotCommandScope JSON object"; not an
  object, without a `type`, or of a type the docs do not list is 400 "Bad Request: can't parse
  BotCommandScope: ..." (`BotCommandScope must be an Object`, `Can't find field "type"`, `Unsupported type
  specified`). default, all_private_chats, all_group_chats and all_chat_administrators name no chat; chat,
  chat_administrators and chat_member name one by `chat_id` (an Integer or a String, "@username" of a
  supergroup; missing: `Can't find field "chat_id"`, empty: `Empty chat_id specified`), chat_member also a
  user (`user_id` above 0, else `Invalid user_id specified`). The chat is checked as for every call that
  reads its members (`check_bot_command_scope`, `check_chat` with ReadMembers): unknown is "chat not
  found", a group upgraded to a supergroup answers "upgraded" with `migrate_to_chat_id` (ReadMembers needs
  a group that is still active), a bot removed from it the 403. TDLib then (BotCommandScope.cpp,
  `get_bot_command_scope`) refuses a channel, 400 "Bad Request: can't change commands in channel chats",
  and in a private chat any scope but chat, 400 "Bad Request: can't use specified scope in private chats".
  A chat's menu is kept under the chat it names, however its id was written;

The chats, as the Bot API server (tdlib/telegram-bot-api, telegram-bot-api/Client.cpp) checks them:

- known chats only (`add_chat`; a chat someone writes in, `receive`, is known from then on):
  sendMessage, editMessageText and getChatMember naming a chat the bot does not know answer 400
  "Bad Request: chat not found" (`check_chat`, and `TdOnCheckChatCallback` when TDLib's getChat
  fails); no chat_id at all is 400 "Bad Request: chat_id is empty". "@name" resolves by a public
  username, compared case-insensitively, and only to a channel or a supergroup (`TdOnCheckChatCallback`
  allows no other kind of chat by username);
- threads (`check_message_topic`): in a forum supergroup a `message_thread_id` that is not one of its
  topics is 400 "Bad Request: message thread not found", and so is the General topic (id 1: a message
  for General carries no thread id); in a group, a supergroup that is not a forum or a channel the
  thread id is ignored (the message is in no thread); a private chat is checked like a forum (TDLib's
  getForumTopic), against the topics it was given;
- an edit names the chat its message is in (`check_message`): a message of another chat, like one
  deleted, is 400 "Bad Request: message to edit not found";
- answerCallbackQuery answers only a press Telegram knows (`register_query`, which the World does for
  every press) and not older than 15 minutes (bot developers report "query is too old" after about 15
  minutes; the Bot API says only to answer at once); else 400 "Bad Request: query is too old and response timeout
  expired or query ID is invalid" (Client.cpp maps TDLib's QUERY_ID_INVALID to it);
- flood control (on unless `flood=False`; the Bot FAQ, "My bot is hitting limits, how do I avoid
  this?": about one message a second in a chat, short bursts tolerated, and no more than 20 messages a
  minute in a group). Modelled per chat, on the fake's `clock`: at most 3 messages in any 3 seconds,
  and in a group or supergroup at most 20 in any 60 seconds; sendMessage and editMessageText both
  count (the FAQ speaks of messages; bot developers report that edits count too), a refused call does not. Past either, 429 "Too Many Requests:
  retry after N" with `parameters.retry_after` N, the whole seconds (rounded up) until the windows
  admit one more (Query.cpp, `set_retry_after_error`);
- a basic group upgraded to a supergroup (`migrate`): the supergroup is a new chat with a new id
  ("-100" and ten digits) and the same title, known from then on; every call naming the old id
  (sendMessage, editMessageText, getChatMember) answers 400 "Bad Request: group chat was upgraded to a
  supergroup chat" with `parameters.migrate_to_chat_id`, the new id as an integer (Client.cpp,
  `check_chat_access`). There the server answers it to the calls that need to write to the
  chat (sendMessage, and getChatMember of another user); an edit and getChatMember of the bot itself
  pass that check and what Telegram then answers is not documented: the fake refuses them the same way.
  Messages sent before stay in the old chat: an edit naming the new chat does not find them.

Users writing in a chat the bot is in (`command_update`), as the Bot API server sends them: an Update
with a `message` holding `from`, `chat`, `date`, `text` and the `bot_command` entity TDLib finds at
the start of the text (MessageEntity.cpp, `match_bot_commands`: "/" and 1 to 64 of A-Z a-z 0-9 _,
optionally "@" and a bot's 3 to 32 such characters, not followed by a word character, "/", "<" or ">";
offset and length in UTF-16 code units, MessageEntity). In a group or supergroup a bot in privacy mode
(getMe's `can_read_all_group_messages` false, the default) is not sent a command addressed to
another bot ("/cmd@other_bot"; @BotFather's /setprivacy: such a bot receives "only messages that either
start with the '/' symbol or mention the bot by username", and the Bot API's "Privacy mode"), and no
message reaches a bot whose `allowed_updates` leave out "message". The message is in the chat from then
on, so that a reply to it is valid.

The methods `pager setup` and `pager doctor` call ("Getting updates", "Available methods"):

- a token Telegram does not know (`token` set and another one used) answers 401 "Unauthorized";
- getMe answers the bot as a User; getWebhookInfo a WebhookInfo: `url` ("" when none is set),
  `has_custom_certificate`, `pending_update_count`, `allowed_updates`, and `last_error_date` with
  `last_error_message` when the last delivery to the webhook failed (`webhook_error`);
- `allowed_updates` is the bot's, not the webhook's (Client.cpp, `update_allowed_update_types`):
  setWebhook and getUpdates change it when given a JSON array of strings (names lowercased, unknown
  ones dropped; none known: the default), and leave it as it was otherwise; deleteWebhook keeps it.
  getWebhookInfo reports it, whether a webhook is set or not, in the server's own order of update
  types (Client.h, `UpdateType`: "message" before "callback_query") and only when it is not the
  default: every type but chat_member, message_reaction and message_reaction_count
  (`DEFAULT_ALLOWED_UPDATE_TYPES`, `JsonWebhookInfo`);
- getUpdates answers the updates waiting (`updates`; `offset` confirms those before it, `limit` 1 to
  100) and, while a webhook is set, 409 "Conflict: can't use getUpdates method while webhook is
  active; use deleteWebhook to delete the webhook first"; deleteWebhook removes it (and the waiting
  updates with `drop_pending_updates`);
- getChatMember answers a ChatMember of the kind its `status` says (`members` sets one; the bot is a
  "member" unless told otherwise, in a channel an administrator that may post, the only way a bot is
  in one); a bot removed from the chat gets the same 403 as when it sends;
- getChat answers a ChatFullInfo: the chat's id, type and title, and for a group or supergroup its
  default `permissions` (a ChatPermissions, every right allowed unless the chat's `permissions` say
  otherwise: an "only admins may write" group sets `can_send_messages` false).

Whether the bot may send (sendMessage), from its ChatMember in the chat (the Bot API's ChatMember and
ChatPermissions): in a channel only its creator or an administrator with `can_post_messages`, else 400
"Bad Request: need administrator rights in the channel chat" (teloxide/teloxide#450); in a group or
supergroup an administrator or the creator, a member (a restricted one only with its own
`can_send_messages`) only while the chat's default permissions allow sending, else 400 "Bad Request: not
enough rights to send text messages to the chat" (TDLib's `can_send_message`, as client libraries
report it: python-telegram-bot/python-telegram-bot#3956); a bot that "left" gets 403 "Forbidden: bot
is not a member of the group chat" (or supergroup, channel chat). An edit of the bot's own message is
not checked (the Bot API says nothing of it).

Every request goes through the world's `Faults` first.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .faults import Faults, telegram_error
from .http import HttpRequest, HttpResponse

TAGS = frozenset({"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a", "tg-emoji",
                  "code", "pre", "blockquote"})
MAX_TEXT = 4096
MAX_CALLBACK_DATA = 64
MAX_CALLBACK_TEXT = 200
QUERY_LIFETIME = 15 * 60.0  # seconds a callback query can still be answered (as bot developers report it)
GENERAL_TOPIC = 1  # a forum's General topic: messages for it carry no thread id (Client.h, GENERAL_FORUM_TOPIC_ID)
# Flood control, per chat: (messages, seconds) windows; a group's own limit on top (the Bot FAQ).
CHAT_WINDOWS = ((3, 3.0),)
GROUP_WINDOWS = ((3, 3.0), (20, 60.0))
CHAT_KINDS = ("private", "group", "supergroup", "channel")
DELETE_WINDOW = 48 * 3600.0  # seconds a message can still be deleted (deleteMessage)
# BotCommand and setMyCommands: a command's length, its characters, a description's length, how many.
MAX_COMMAND = 32
COMMAND_CHARACTERS = re.compile(r"[a-z0-9_]+")
MAX_COMMAND_DESCRIPTION = 256
MAX_COMMANDS = 100
# BotCommandScope's types (the Bot API): those that name no chat, and those that name one (`chat_id`)
SCOPES = ("default", "all_private_chats", "all_group_chats", "all_chat_administrators")
CHAT_SCOPES = ("chat", "chat_administrators", "chat_member")
# The update types in the Bot API server's order (Client.h, `UpdateType`); the two custom ones are its own.
UPDATE_TYPES = ("message", "edited_message", "channel_post", "edited_channel_post", "inline_query",
                "chosen_inline_result", "callback_query", "custom_event", "custom_query", "shipping_query",
                "pre_checkout_query", "poll", "poll_answer", "my_chat_member", "chat_member", "chat_join_request",
                "chat_boost", "removed_chat_boost", "message_reaction", "message_reaction_count",
                "business_connection", "business_message", "edited_business_message", "deleted_business_messages",
                "purchased_paid_media", "managed_bot", "guest_message")
DEFAULT_UPDATES = frozenset(UPDATE_TYPES) - {"chat_member", "message_reaction", "message_reaction_count"}
# A bot command at the start of a text, as TDLib finds it (MessageEntity.cpp, `match_bot_commands`).
# An "@" after the command must start a bot's username, or there is no command at all.
_BOT_COMMAND = re.compile(r"/[A-Za-z0-9_]{1,64}(?:@([A-Za-z0-9_]{3,32}))?(?![\w/<>@])")
_TAG = re.compile(r"""<(/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-zA-Z][a-zA-Z-]*(?:\s*=\s*(?:"[^"<>]*"|'[^'<>]*'|[^\s"'<>=`]+))?)*)\s*>""")
_ATTRIBUTE = re.compile(r"""([a-zA-Z][a-zA-Z-]*)(?:\s*=\s*("[^"<>]*"|'[^'<>]*'|[^\s"'<>=`]+))?""")
_ENTITY = re.compile(r"&(?:lt|gt|amp|quot|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});")
INT64 = 2 ** 63


class CantParse(ValueError):
    """What Telegram says of HTML it refuses."""


def _attributes(text: str) -> dict[str, str]:
    """A start tag's attributes as TDLib reads them: a quoted value as written, a bare one in lower case."""
    found = {}
    for attribute in _ATTRIBUTE.finditer(text):
        name, raw = attribute.group(1), attribute.group(2)
        if raw is None:
            found[name] = ""
        elif raw[0] in "\"'":
            found[name] = html.unescape(raw[1:-1])
        else:
            found[name] = raw.lower()
    return found


def _custom_emoji_id(value: str) -> bool:
    """Whether TDLib takes an emoji-id: a non-zero 64-bit integer."""
    return re.fullmatch(r"-?[0-9]+", value) is not None and int(value) != 0 and -INT64 <= int(value) < INT64


def parse_html(text: str) -> str:
    """The text a message shows once Telegram parsed its HTML; CantParse as Telegram words it."""
    shown: list[str] = []
    open_tags: list[tuple[str, dict[str, str], int]] = []  # (name, attributes, characters shown before it)
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
                if not open_tags or open_tags[-1][0] != name:
                    raise CantParse(f"Unexpected end tag at byte offset {offset}")
                _, attributes, start = open_tags.pop()
                if name == "tg-emoji" and len(shown) > start and not _custom_emoji_id(attributes.get("emoji-id", "")):
                    raise CantParse("Invalid custom emoji identifier specified")
            elif name not in TAGS:
                raise CantParse(f'Unsupported start tag "{name}" at byte offset {offset}')
            else:
                attributes = _attributes(tag.group(3))
                if name == "span" and attributes.get("class") != "tg-spoiler":
                    raise CantParse(f'Tag "span" must have class "tg-spoiler" at byte offset {offset}')
                open_tags.append((name, attributes, len(shown)))
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
        raise CantParse(f'Can\'t find end tag corresponding to start tag "{open_tags[-1][0]}"')
    return "".join(shown)


def shown_length(text: str) -> int:
    """How long Telegram counts a text: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


# The rights a ChatMemberAdministrator always carries (the Bot API's types).
ADMINISTRATOR_RIGHTS = ("can_be_edited", "is_anonymous", "can_manage_chat", "can_delete_messages", "can_manage_video_chats",
                        "can_restrict_members", "can_promote_members", "can_change_info", "can_invite_users",
                        "can_post_stories", "can_edit_stories", "can_delete_stories", "can_send_welcome_messages")
# A group's default permissions (ChatPermissions): what a member who is neither restricted nor an admin may do.
CHAT_PERMISSIONS = ("can_send_messages", "can_send_audios", "can_send_documents", "can_send_photos", "can_send_videos",
                    "can_send_video_notes", "can_send_voice_notes", "can_send_polls", "can_send_other_messages",
                    "can_add_web_page_previews", "can_react_to_messages", "can_edit_tag", "can_change_info",
                    "can_invite_users", "can_pin_messages", "can_manage_topics")
RESTRICTED_RIGHTS = CHAT_PERMISSIONS  # a restricted member carries them too, as its own

NOT_MODIFIED = ("Bad Request: message is not modified: specified new message content and reply markup are exactly "
                "the same as a current content and reply markup of the message")
QUERY_INVALID = "Bad Request: query is too old and response timeout expired or query ID is invalid"
UPGRADED = "Bad Request: group chat was upgraded to a supergroup chat"


@dataclass
class Message:
    message_id: int
    chat_id: str
    text: str
    buttons: list[list[dict[str, str]]]  # rows of {"text", "callback_data"}
    thread_id: int | None = None
    notified: bool = True  # sent with a sound (sendMessage without disable_notification)
    edits: int = 0
    reply_to: int | None = None  # the message it replies to
    sent_at: float = 0.0  # when it was sent, on the fake's clock
    author: dict[str, Any] | None = None  # the User who wrote it; None for the bot's own messages

    def labels(self) -> tuple[tuple[str, ...], ...] | None:
        return tuple(tuple(b["text"] for b in row) for row in self.buttons) or None

    @property
    def mark(self) -> str:
        """🔔 or 🔕 for the bot's messages (sent with a sound or without), 👤 for a person's."""
        return "👤" if self.author is not None else "🔔" if self.notified else "🔕"

    @property
    def replying(self) -> str:
        """" ↳ [id]" when it replies to another message, else nothing."""
        return f" ↳ [{self.reply_to}]" if self.reply_to is not None else ""


class Shown(tuple):
    """A message as `view` shows it: the pair (text, button labels by row or None) it always was, so that
    views compare as before with plain pairs, plus whether it was sent with a sound (`notified`), what it
    replies to (`reply_to`) and who wrote it (`author`, a user id; None for the bot). Two views compare
    these too, and a failing assertion prints them (🔔, 🔕, ↳, 👤)."""

    text: str
    buttons: tuple[tuple[str, ...], ...] | None

    def __new__(cls, message: Message) -> Shown:
        shown = super().__new__(cls, (message.text, message.labels()))
        shown.text, shown.buttons = message.text, message.labels()
        shown.notified, shown.reply_to = message.notified, message.reply_to
        shown.author = None if message.author is None else message.author.get("id")
        shown.marks = message.mark + message.replying
        return shown

    def _facts(self) -> tuple[Any, ...]:
        return (tuple(self), self.notified, self.reply_to, self.author)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Shown):
            return self._facts() == other._facts()
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = tuple.__hash__

    def __repr__(self) -> str:
        return f"{self.marks} {tuple.__repr__(self)}"


@dataclass
class Chat:
    """A chat the bot is in, as Telegram knows it."""

    chat_id: str  # the number, as a string ("-1001")
    kind: str  # "private", "group", "supergroup" or "channel"
    title: str = ""
    username: str | None = None  # a public chat's @name, without the @
    forum: bool = False
    topics: set[int] = field(default_factory=set)  # a forum's topics (their message_thread_id)
    migrated_to: str | None = None  # a basic group upgraded: the supergroup it became
    # a group's default ChatPermissions that differ from "allowed" (e.g. {"can_send_messages": False})
    permissions: dict[str, bool] = field(default_factory=dict)

    def as_chat(self) -> dict[str, Any]:
        """The Chat object of a Message."""
        chat: dict[str, Any] = {"id": int(self.chat_id), "type": self.kind}
        chat["first_name" if self.kind == "private" else "title"] = self.title
        if self.username:
            chat["username"] = self.username
        if self.forum:
            chat["is_forum"] = True
        return chat


class _Refused(Exception):
    """A call Telegram refuses: its status and error object."""

    def __init__(self, status: int, description: str, **parameters: Any) -> None:
        super().__init__(description)
        self.answer = (status, telegram_error(status, description, **parameters))


def _chat_number(chat_id: int | str) -> str:
    """A chat's id as pager's settings write it ("-1001"), from an int or a string."""
    text = str(chat_id).strip()
    if not re.fullmatch(r"-?[0-9]+", text):
        raise ValueError(f"a chat id is a number, not {chat_id!r}")
    return str(int(text))


class FakeTelegram:
    """The Bot API methods pager calls, keeping the known chats' messages as people would see them."""

    def __init__(self, *, faults: Faults | None = None, keep_requests: bool = True,
                 clock: Callable[[], float] = time.time, flood: bool = True) -> None:
        self.faults = faults or Faults()
        self.keep_requests = keep_requests
        self.clock = clock  # epoch seconds: flood control and the age of callback queries
        self.flood = flood  # flood control (the module docstring); off only where a test says why
        self.requests: list[HttpRequest] = []
        self.chats: dict[str, Chat] = {}  # chat id -> the chat, every chat the bot knows
        self.messages: dict[int, Message] = {}
        self.sent: list[int] = []  # message ids, in the order they were sent
        self.buzzes: list[tuple[int, float, str]] = []  # (message id, when, its first line) of each sent with a sound
        self.edits: list[int] = []  # message ids, once per edit
        self.deleted: list[int] = []  # message ids the bot deleted (deleteMessage), in order
        # (send, edit or delete; message id; when; the message's first line then) of each change the bot made to
        # a chat, in order: what a phone lived through, a deleted message's included
        self.history: list[tuple[str, int, float, str]] = []
        self.commands: dict[tuple[str, str], list[dict[str, str]]] = {}  # (scope, language) -> BotCommands (`_scope`)
        self.allowed_updates: frozenset[str] = DEFAULT_UPDATES  # the bot's, set by setWebhook and getUpdates
        self.answers: list[tuple[str, str | None]] = []  # (callback query id, text) per answerCallbackQuery
        self.queries: dict[str, float] = {}  # callback query id -> when the button was pressed
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
        self._posted: dict[str, deque[float]] = {}  # chat id -> when its recent messages were sent or edited
        self._update_ids = itertools.count(500)
        self._ids = itertools.count(100)
        self._supergroups = itertools.count(1_000_000_001)
        self._lock = threading.RLock()

    # -- the chats the bot is in

    def add_chat(self, chat_id: int | str, kind: str = "group", *, username: str | None = None, forum: bool = False,
                 topics: Iterable[int] = (), title: str | None = None) -> Chat:
        """The bot is in this chat from now on (a forum's `topics` are its message thread ids)."""
        if kind not in CHAT_KINDS:
            raise ValueError(f"a chat is one of {CHAT_KINDS}, not {kind!r}")
        if (forum or topics) and kind not in ("supergroup", "private"):
            raise ValueError("only a supergroup (or a bot's private chat) has topics")
        number = _chat_number(chat_id)
        chat = Chat(number, kind, title if title is not None else f"Chat {number}",
                    username.removeprefix("@") if username else None, forum, {int(t) for t in topics})
        with self._lock:
            self.chats[number] = chat
        return chat

    def migrate(self, chat_id: int | str) -> str:
        """The basic group becomes a supergroup: its new id ("-100" and ten digits), known from now on."""
        with self._lock:
            group = self.chats.get(_chat_number(chat_id))
            if group is None or group.kind != "group" or group.migrated_to is not None:
                raise ValueError(f"{chat_id} is no basic group the bot is in")
            new = f"-100{next(self._supergroups):010d}"
            while new in self.chats:
                new = f"-100{next(self._supergroups):010d}"
            self.add_chat(new, "supergroup", title=group.title)
            group.migrated_to = new
            return new

    def set_permissions(self, chat_id: int | str, **permissions: bool) -> None:
        """A group's administrators set its default permissions (as setChatPermissions would); none: all allowed."""
        with self._lock:
            self.chats[_chat_number(chat_id)].permissions = dict(permissions)

    def register_query(self, query_id: str, at: float | None = None) -> None:
        """Someone pressed a button: Telegram knows the callback query `query_id` from `at` (default: now)."""
        with self._lock:
            self.queries[str(query_id)] = self.clock() if at is None else float(at)

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
            try:
                if method == "sendMessage":
                    return self._send(params)
                if method == "editMessageText":
                    return self._edit(params)
                if method == "deleteMessage":
                    return self._delete(params)
                if method == "answerCallbackQuery":
                    return self._answer(params)
                if method == "setWebhook":
                    self.webhook = dict(params)
                    self.webhook_error = None  # a webhook set anew has no failed delivery yet
                    self._allow(params.get("allowed_updates"))
                    return _ok(True)
                if method in ("setMyCommands", "getMyCommands", "deleteMyCommands"):
                    return self._commands(method, params)
                if method == "getChat":
                    return _ok(self._chat_info(self._chat(params.get("chat_id"))))
                if method in ("getMe", "getWebhookInfo", "getUpdates", "deleteWebhook", "getChatMember"):
                    return self._setup_method(method, params)
            except _Refused as refused:
                return refused.answer
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
            self._allow(params.get("allowed_updates"))
            offset = params.get("offset")
            if isinstance(offset, int):
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            return _ok([dict(u) for u in self.updates[:limit]])
        if "chat_id" not in params or not isinstance(params.get("user_id"), int):
            return 400, telegram_error(400, "Bad Request: chat_id and user_id are required")
        return _ok(self._member(params["user_id"], self._chat(params["chat_id"])))

    def _webhook_info(self) -> dict[str, Any]:
        url = str(self.webhook.get("url") or "")
        info: dict[str, Any] = {"url": url, "has_custom_certificate": False,
                                "pending_update_count": self.pending_update_count if url else len(self.updates)}
        if url:
            info["max_connections"] = int(self.webhook.get("max_connections") or 40)
        if self.allowed_updates != DEFAULT_UPDATES:
            info["allowed_updates"] = [name for name in UPDATE_TYPES if name in self.allowed_updates
                                       and not name.startswith("custom_")]
        if self.webhook_error is not None:
            info["last_error_date"], info["last_error_message"] = self.webhook_error
        return info

    def _allow(self, given: Any) -> None:
        """The bot's allowed_updates after a setWebhook or getUpdates that gave `given` (the module docstring)."""
        if isinstance(given, str):
            try:
                given = json.loads(given) if given else None
            except ValueError:
                return
        if not isinstance(given, list) or not all(isinstance(name, str) for name in given):
            return
        names = frozenset(name.lower() for name in given) & frozenset(UPDATE_TYPES)
        self.allowed_updates = names or DEFAULT_UPDATES

    def _member(self, user_id: int, chat: Chat) -> dict[str, Any]:
        """A ChatMember as Telegram answers it: the fields its kind requires, the status's rights."""
        bot = user_id == self.bot["id"]
        user = dict(self.bot) if bot else {"id": user_id, "is_bot": False, "first_name": "User"}
        fields = dict(self.members.get(user_id, {}))
        status = fields.pop("status", "administrator" if bot and chat.kind == "channel" else "member")
        member: dict[str, Any] = {"status": status, "user": user}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update({name: False for name in ADMINISTRATOR_RIGHTS}, can_manage_chat=True)
            if chat.kind == "channel":  # rights of channels only
                member.update(can_post_messages=bot, can_edit_messages=False)
        elif status == "restricted":
            member.update({name: True for name in RESTRICTED_RIGHTS}, is_member=True, until_date=0)
        elif status == "kicked":
            member["until_date"] = 0
        member.update(fields)
        return member

    def receive(self, text: str, *, chat: dict[str, Any], user: dict[str, Any] | None = None,
                thread_id: int | None = None) -> dict[str, Any]:
        """Someone writes in a chat the bot is in: the Update getUpdates answers (a channel's as
        `channel_post`), kept only when the bot's `allowed_updates` take its kind (setWebhook: the setting
        "doesn't affect updates created before the call", so it filters them as they are made). The bot
        knows the chat from then on (and the forum's topic written in)."""
        with self._lock:
            known = self.chats.get(_chat_number(chat["id"]))
            if known is None:
                known = self.add_chat(chat["id"], chat.get("type", "group"), username=chat.get("username"),
                                      forum=bool(chat.get("is_forum")),
                                      title=chat.get("title") or chat.get("first_name"))
            if thread_id is not None and known.forum:
                known.topics.add(thread_id)
        message_id = next(self._ids)
        message: dict[str, Any] = {"message_id": message_id, "date": 1796200000 + message_id, "chat": dict(chat), "text": text}
        if user is not None:
            message["from"] = dict(user)
        if thread_id is not None:
            message.update(message_thread_id=thread_id, is_topic_message=True)
        kind = "channel_post" if chat.get("type") == "channel" else "message"
        update = {"update_id": next(self._update_ids), kind: message}
        with self._lock:
            if kind in self.allowed_updates:  # one of a kind the bot's setting leaves out is never kept
                self.updates.append(update)
        return update

    def command_update(self, text: str, *, chat_id: int | str, user: dict[str, Any],
                       thread_id: int | None = None) -> dict[str, Any]:
        """Someone types a command in a chat the bot is in: the Update (a `message`, with its `bot_command`
        entity) Telegram sends the bot for it (the module docstring). The message is in the chat from now
        on, so that a reply to it is valid. ValueError for what Telegram would not send this bot."""
        found = _BOT_COMMAND.match(text)
        if found is None:
            raise ValueError(f"{text!r} does not start with a bot command")
        with self._lock:
            chat = self.chats.get(_chat_number(chat_id))
            if chat is None or chat.migrated_to is not None or chat.kind == "channel":
                raise ValueError(f"{chat_id} is no chat the bot is in where people write")
            addressed = found.group(1)
            if (addressed is not None and addressed.lower() != str(self.bot.get("username", "")).lower()
                    and chat.kind in ("group", "supergroup") and not self.bot.get("can_read_all_group_messages")):
                raise ValueError(f"a bot in privacy mode is not sent a command for @{addressed}")
            if "message" not in self.allowed_updates:
                raise ValueError("the bot's allowed_updates leave out message: Telegram sends it no command")
            thread = thread_id if thread_id is not None and chat.forum else None
            if thread is not None:
                chat.topics.add(thread)
            message = Message(next(self._ids), chat.chat_id, text, [], thread, author=dict(user), sent_at=self.clock())
            self.messages[message.message_id] = message
            body = {**self._message(message), "from": dict(user),
                    "entities": [{"offset": 0, "length": shown_length(found.group(0)), "type": "bot_command"}]}
            return {"update_id": next(self._update_ids), "message": body}

    def next_update_id(self) -> int:
        """The id of the next Update Telegram sends the bot (one sequence for every kind of update)."""
        with self._lock:
            return next(self._update_ids)

    # -- the rules (the module docstring), each in one place

    def _check_text(self, params: dict[str, Any]) -> None:
        """Telegram's refusal of a message's text or buttons, if any (checked before the chat, as the
        Bot API server reads the text first)."""
        text = params.get("text")
        if not isinstance(text, str):
            raise _Refused(400, "Bad Request: message text is empty")
        if params.get("parse_mode") == "HTML":
            try:
                text = parse_html(text)
            except CantParse as exc:
                raise _Refused(400, f"Bad Request: can't parse entities: {exc}") from None
        if not text.strip():
            raise _Refused(400, "Bad Request: message text is empty")
        if shown_length(text) > MAX_TEXT:
            raise _Refused(400, "Bad Request: message is too long")
        for row in _keyboard(params):
            for button in row:
                data = button.get("callback_data")
                if not button.get("text") or not isinstance(data, str) or not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA:
                    raise _Refused(400, "Bad Request: BUTTON_DATA_INVALID")

    def _chat(self, chat_id: Any) -> Chat:
        """The chat a call names: known, not upgraded, the bot still in it."""
        text = "" if chat_id is None else str(chat_id).strip()
        if not text:
            raise _Refused(400, "Bad Request: chat_id is empty")
        chat: Chat | None
        if text.startswith("@"):
            name = text[1:].lower()
            chat = next((c for c in self.chats.values() if c.username and c.username.lower() == name
                         and c.kind in ("channel", "supergroup")), None)
        else:
            chat = self.chats.get(str(int(text))) if re.fullmatch(r"-?[0-9]+", text) else None
        if chat is None:
            raise _Refused(400, "Bad Request: chat not found")
        if chat.migrated_to is not None:
            raise _Refused(400, UPGRADED, migrate_to_chat_id=int(chat.migrated_to))
        if self.kicked:
            if chat.kind == "private":
                raise _Refused(403, "Forbidden: bot was blocked by the user")
            where = {"group": "group", "supergroup": "supergroup", "channel": "channel"}[chat.kind]
            raise _Refused(403, f"Forbidden: bot was kicked from the {where} chat")
        return chat

    def _thread(self, chat: Chat, thread_id: Any) -> int | None:
        """The topic a message goes to: checked in a forum (and a private chat), ignored elsewhere."""
        if not thread_id:
            return None
        if not (chat.forum and chat.kind == "supergroup") and chat.kind != "private":
            return None
        general = chat.kind == "supergroup" and thread_id == GENERAL_TOPIC
        if not isinstance(thread_id, int) or general or thread_id not in chat.topics:
            raise _Refused(400, "Bad Request: message thread not found")
        return thread_id

    def _flood_wait(self, chat: Chat) -> int | None:
        """Seconds until the chat's windows admit one more message, or None when they do now."""
        if not self.flood:
            return None
        now = self.clock()
        posted = self._posted.get(chat.chat_id, deque())
        wait = 0.0
        for most, seconds in GROUP_WINDOWS if chat.kind in ("group", "supergroup") else CHAT_WINDOWS:
            inside = [t for t in posted if now - t < seconds]
            if len(inside) >= most:
                wait = max(wait, inside[len(inside) - most] + seconds - now)
        return max(1, math.ceil(wait)) if wait > 0 else None

    def _flood(self, chat: Chat) -> None:
        """Refuse a message past the chat's flood limit (nothing is counted)."""
        wait = self._flood_wait(chat)
        if wait is not None:
            raise _Refused(429, f"Too Many Requests: retry after {wait}", retry_after=wait)

    def _count(self, chat: Chat) -> None:
        """A message sent or edited in the chat counts towards its limits."""
        posted = self._posted.setdefault(chat.chat_id, deque())
        now = self.clock()
        posted.append(now)
        longest = max(seconds for _, seconds in GROUP_WINDOWS)
        while posted and now - posted[0] >= longest:
            posted.popleft()

    # -- the methods

    def _reply(self, chat: Chat, given: Any, topic: int | None = None) -> int | None:
        """The message a new one replies to, or None (the module docstring: reply_parameters); `topic`: the
        forum topic the new message goes to, where a reply that is gone is never dropped."""
        if given is None:
            return None
        if isinstance(given, str):
            try:
                given = json.loads(given) if given else {}
            except ValueError:
                raise _Refused(400, "Bad Request: can't parse reply parameters JSON object") from None
        if not isinstance(given, dict):
            raise _Refused(400, "Bad Request: object expected as reply parameters")
        if not given:
            return None
        if "message_id" not in given:
            raise _Refused(400, "Bad Request: can't find field \"message_id\"")
        try:
            message_id = int(given["message_id"]) if not isinstance(given["message_id"], bool) else None
        except (TypeError, ValueError):
            message_id = None
        if message_id is None:
            raise _Refused(400, "Bad Request: field \"message_id\" must be a Number")
        if message_id <= 0:
            return None
        where = chat if given.get("chat_id") is None else self._chat(given["chat_id"])
        replied = self.messages.get(message_id)
        if replied is not None and replied.chat_id == where.chat_id:
            return message_id
        # ReplyParameters: "Always False for replies in another chat or forum topic."
        if given.get("allow_sending_without_reply") is True and where is chat and topic is None:
            return None
        raise _Refused(400, "Bad Request: message to be replied not found")

    def _chat_info(self, chat: Chat) -> dict[str, Any]:
        """getChat's ChatFullInfo: the Chat's fields, the ones ChatFullInfo requires, a group's permissions."""
        info = {**chat.as_chat(), "accent_color_id": 0, "max_reaction_count": 11,
                "accepted_gift_types": {"unlimited_gifts": False, "limited_gifts": False, "unique_gifts": False,
                                        "premium_subscription": False, "gifts_from_channels": False}}
        if chat.kind in ("group", "supergroup"):
            info["permissions"] = {name: True for name in CHAT_PERMISSIONS} | chat.permissions
        return info

    def _may_send(self, chat: Chat) -> None:
        """The bot's right to send in the chat (the module docstring)."""
        if chat.kind == "private":
            return
        member = self._member(self.bot["id"], chat)
        status = member["status"]
        if status in ("left", "kicked"):
            raise _Refused(403, f"Forbidden: bot is not a member of the {chat.kind} chat")
        if chat.kind == "channel":
            if status != "creator" and not (status == "administrator" and member.get("can_post_messages") is True):
                raise _Refused(400, "Bad Request: need administrator rights in the channel chat")
        elif status in ("member", "restricted") and not (
                member.get("can_send_messages", True) is True and chat.permissions.get("can_send_messages", True) is True):
            raise _Refused(400, "Bad Request: not enough rights to send text messages to the chat")

    def _send(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self._check_text(params)
        chat = self._chat(params.get("chat_id"))
        self._may_send(chat)
        thread = self._thread(chat, params.get("message_thread_id"))
        reply_to = self._reply(chat, params.get("reply_parameters"), thread)
        self._flood(chat)
        message = Message(next(self._ids), chat.chat_id, params["text"], _keyboard(params), thread,
                          notified=not params.get("disable_notification", False), reply_to=reply_to,
                          sent_at=self.clock())
        self.messages[message.message_id] = message
        self.sent.append(message.message_id)
        if message.notified:  # what a phone rings for (kept when the message is deleted later)
            self.buzzes.append((message.message_id, message.sent_at, message.text.split("\n", 1)[0]))
        self.history.append(("send", message.message_id, message.sent_at, message.text.split("\n", 1)[0]))
        self._count(chat)
        return _ok(self._message(message))

    def _edit(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self._check_text(params)
        chat = self._chat(params.get("chat_id"))
        try:
            message = self.messages.get(int(params.get("message_id", 0)))
        except (TypeError, ValueError):
            message = None
        if message is None or message.chat_id != chat.chat_id:
            raise _Refused(400, "Bad Request: message to edit not found")
        if message.author is not None:
            raise _Refused(400, "Bad Request: message can't be edited")
        text, buttons = params.get("text", message.text), _keyboard(params)
        if text == message.text and buttons == message.buttons:
            raise _Refused(400, NOT_MODIFIED)
        self._flood(chat)
        message.text, message.buttons = text, buttons
        message.edits += 1
        self.edits.append(message.message_id)
        self.history.append(("edit", message.message_id, self.clock(), text.split("\n", 1)[0]))
        self._count(chat)
        return _ok(self._message(message))

    def _delete(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if params.get("chat_id") in (None, ""):
            raise _Refused(400, "Bad Request: chat identifier is not specified")
        try:
            message_id = int(params.get("message_id") or 0)
        except (TypeError, ValueError):
            message_id = 0
        if message_id <= 0:
            raise _Refused(400, "Bad Request: message identifier is not specified")
        chat = self._chat(params["chat_id"])
        message = self.messages.get(message_id)
        if message is None or message.chat_id != chat.chat_id:
            raise _Refused(400, "Bad Request: message to delete not found")
        if not self._may_delete(chat, message):
            channel_like = chat.kind in ("supergroup", "channel")
            raise _Refused(400, "Bad Request: message can't be deleted" + ("" if channel_like else " for everyone"))
        del self.messages[message_id]
        self.deleted.append(message_id)
        self.history.append(("delete", message_id, self.clock(), message.text.split("\n", 1)[0]))
        return _ok(True)

    def _may_delete(self, chat: Chat, message: Message) -> bool:
        """Whether the bot may delete the message now (deleteMessage's limitations)."""
        if self.clock() - message.sent_at >= DELETE_WINDOW:
            return False
        rights = self.members.get(self.bot["id"], {})
        if chat.kind == "private" or message.author is None:
            return True
        if chat.kind == "group":
            return rights.get("status") == "administrator"
        return rights.get("status") == "administrator" and rights.get("can_delete_messages") is True

    def _commands(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """setMyCommands, getMyCommands, deleteMyCommands: the menu of one scope and language (the module
        docstring); setMyCommands' commands are read before its scope, as the Bot API server reads them."""
        commands = _bot_commands(params.get("commands")) if method == "setMyCommands" else []
        key = (self._scope(params.get("scope")), str(params.get("language_code") or ""))
        if method == "getMyCommands":
            return _ok([dict(command) for command in self.commands.get(key, [])])
        if method == "deleteMyCommands" or not commands:
            self.commands.pop(key, None)
        else:
            self.commands[key] = commands
        return _ok(True)

    def _scope(self, given: Any) -> str:
        """A BotCommandScope as the key of the menu kept for it ("default", ..., "chat -1001", "chat_member -1001
        42"), or Telegram's refusal (the module docstring)."""
        if given is None or given == "":
            return "default"
        if isinstance(given, str):
            try:
                given = json.loads(given)
            except ValueError:
                raise _Refused(400, "Bad Request: can't parse BotCommandScope JSON object") from None
        refuse = "Bad Request: can't parse BotCommandScope: "
        if not isinstance(given, dict):
            raise _Refused(400, refuse + "BotCommandScope must be an Object")
        kind = _json_string(given, "type", refuse)
        if kind in SCOPES:
            return kind
        if kind not in CHAT_SCOPES:
            raise _Refused(400, refuse + "Unsupported type specified")
        named = _json_string(given, "chat_id", refuse)
        if not named:
            raise _Refused(400, refuse + "Empty chat_id specified")
        user = ""
        if kind == "chat_member":
            user_id = given.get("user_id")
            if user_id is None:
                raise _Refused(400, refuse + 'Can\'t find field "user_id"')
            if isinstance(user_id, bool) or not isinstance(user_id, int) or user_id <= 0:
                raise _Refused(400, refuse + "Invalid user_id specified")
            user = f" {user_id}"
        chat = self._chat(named)  # as every call that reads the chat's members
        if chat.kind == "channel":
            raise _Refused(400, "Bad Request: can't change commands in channel chats")
        if chat.kind == "private" and kind != "chat":
            raise _Refused(400, "Bad Request: can't use specified scope in private chats")
        return f"{kind} {chat.chat_id}{user}"

    def menu(self, chat: int | str | None = None) -> list[tuple[str, str]]:
        """The command menu kept for a chat's scope (BotCommandScopeChat), or the default scope's without
        `chat`, as (command, description) pairs."""
        with self._lock:
            key = f"chat {_chat_number(chat)}" if chat is not None else "default"
            return [(c["command"], c["description"]) for c in self.commands.get((key, ""), [])]

    def _answer(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if len(str(params.get("text") or "")) > MAX_CALLBACK_TEXT:
            raise _Refused(400, "Bad Request: MESSAGE_TOO_LONG")
        query_id = str(params.get("callback_query_id"))
        pressed = self.queries.get(query_id)
        if pressed is None or self.clock() - pressed > QUERY_LIFETIME:
            raise _Refused(400, QUERY_INVALID)
        self.answers.append((query_id, params.get("text")))
        return _ok(True)

    def _message(self, message: Message, *, nested: bool = False) -> dict[str, Any]:
        """A Message as Telegram answers it: the chat as the bot knows it, and the message it replies to
        (which carries no reply of its own)."""
        answer: dict[str, Any] = {"message_id": message.message_id, "date": int(message.sent_at),
                                  "text": message.text, "chat": self.chats[message.chat_id].as_chat()}
        if message.author is not None and nested:
            answer["from"] = dict(message.author)
        if message.thread_id is not None:
            answer.update(message_thread_id=message.thread_id, is_topic_message=True)
        if message.buttons:
            answer["reply_markup"] = {"inline_keyboard": [[dict(b) for b in row] for row in message.buttons]}
        replied = self.messages.get(message.reply_to) if message.reply_to is not None and not nested else None
        if replied is not None:
            answer["reply_to_message"] = self._message(replied, nested=True)
        return answer

    # -- looking at the chat

    def chat(self) -> list[Message]:
        with self._lock:
            return [self.messages[k] for k in sorted(self.messages)]

    def view(self) -> dict[int, Shown]:
        """What the chat shows: message id -> (text, button labels by row, or None), each a `Shown` that
        also says whether it was sent with a sound, what it replies to and who wrote it."""
        return {m.message_id: Shown(m) for m in self.chat()}

    def render(self) -> str:
        """The chat as plain text: each message after its marks (🔔 or 🔕: sent with a sound or not; 👤 and
        a name: a person's; ↳ [id]: a reply to that message), whether it was edited, its buttons."""
        lines = []
        for m in self.chat():
            # struck-through text as a phone shows it (each character with a stroke through it)
            struck = re.sub(r"<s>(.*?)</s>", lambda s: re.sub(r"<[^>]+>", "", s.group(1)).replace("", "\u0336")[1:],
                            m.text, flags=re.S)
            text = re.sub(r"<[^>]+>", "", struck).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
            who = f"{m.author.get('first_name') or m.author.get('id')}: " if m.author is not None else ""
            lines.append(f"{m.mark} [{m.message_id}]{m.replying}" + (" (edited)" if m.edits else "") + " " + who
                         + text.replace("\n", "\n     "))
            for row in m.buttons:
                lines.append("     " + "  ".join(f"[ {b['text']} ]" for b in row))
        return "\n".join(lines)

    def delete(self, message_id: int) -> None:
        """The maintainer deletes a message in the chat (not the bot: see deleteMessage and `deleted`)."""
        with self._lock:
            del self.messages[message_id]

    def button_data(self, message_id: int, label_start: str) -> str:
        """The callback data of the button whose label starts with `label_start`."""
        message = self.messages[message_id]
        return next(b["callback_data"] for row in message.buttons for b in row if b["text"].startswith(label_start))


def _json_string(given: dict[str, Any], name: str, refuse: str) -> str:
    """A field the Bot API server reads as a string (tdutils' JSON: a number is taken as its digits), or its
    refusal."""
    value = given.get(name)
    if value is None:
        raise _Refused(400, refuse + f'Can\'t find field "{name}"')
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _Refused(400, refuse + f'Field "{name}" must be of type String')
    return str(value)


def _bot_commands(given: Any) -> list[dict[str, str]]:
    """setMyCommands' `commands` as Telegram keeps them, or its refusal (the module docstring)."""
    if given is None or given == "":
        return []
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except ValueError:
            raise _Refused(400, "Bad Request: can't parse commands JSON object") from None
    if not isinstance(given, list):
        raise _Refused(400, "Bad Request: expected an Array of BotCommand")
    commands = []
    for item in given:
        if not isinstance(item, dict):
            raise _Refused(400, "Bad Request: can't parse BotCommand: expected an Object")
        fields = {}
        for name in ("command", "description"):
            value = item.get(name)
            if value is None:
                raise _Refused(400, f'Bad Request: can\'t parse BotCommand: Can\'t find field "{name}"')
            if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise _Refused(400, f'Bad Request: can\'t parse BotCommand: Field "{name}" must be of type String')
            fields[name] = str(value).strip()
        command, description = fields["command"].removeprefix("/"), fields["description"]
        if not command:
            raise _Refused(400, "Bad Request: command must be non-empty")
        if len(command) > MAX_COMMAND:
            raise _Refused(400, f"Bad Request: command length must not exceed {MAX_COMMAND}")
        if not description:
            raise _Refused(400, "Bad Request: command description must be non-empty")
        if len(description) > MAX_COMMAND_DESCRIPTION:
            raise _Refused(400, f"Bad Request: command description length must not exceed {MAX_COMMAND_DESCRIPTION}")
        commands.append({"command": command, "description": description})
    if len(commands) > MAX_COMMANDS:
        raise _Refused(400, "Bad Request: BOT_COMMANDS_TOO_MUCH")
    if any(not COMMAND_CHARACTERS.fullmatch(c["command"]) for c in commands):
        raise _Refused(400, "Bad Request: BOT_COMMAND_INVALID")
    return commands


def _keyboard(params: dict[str, Any]) -> list[list[dict[str, str]]]:
    markup = params.get("reply_markup") or {}
    if isinstance(markup, str):
        markup = json.loads(markup)
    return [[dict(b) for b in row] for row in markup.get("inline_keyboard", [])]


def _ok(result: Any) -> tuple[int, dict[str, Any]]:
    return 200, {"ok": True, "result": result}
