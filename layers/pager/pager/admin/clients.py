"""The calls of `pager setup` and `pager doctor`, on the product's own GitHub and Telegram clients.

They add to the clients the functions use (same transport, timeouts, errors, and nothing that could
show a credential) the calls only the operator's commands make:

GitHub (docs.github.com, REST API)
- "Apps: Get the authenticated app" (JWT): the app's events and permissions;
- "Installations: List repositories accessible to the app installation" (installation token);
- "Apps: Create a GitHub App from a manifest": the conversion of the manifest flow's code, with no
  credential at all (the code is one: single use, within an hour).

Telegram (core.telegram.org/bots/api): getMe, getWebhookInfo, setWebhook, deleteWebhook, getUpdates,
deleteMyCommands, and the product's getChatMember, getChat, setMyCommands and getMyCommands (the command
menu in the chat's scope, BotCommandScopeChat, and in the default scope).
"""

from __future__ import annotations

from typing import Any

import requests

from pager import deadline, redact
from pager.chat import BOT_COMMANDS
from pager.errors import GitHubUnavailable, TelegramRefused, TelegramUnavailable
from pager.github import API_VERSION, CONNECT_TIMEOUT, READ_TIMEOUT, USER_AGENT, GitHub
from pager.telegram import Telegram, scope

# The updates pager's webhook takes: button presses, and messages, for the chat's commands. A bot in privacy
# mode (the default) is sent only the group messages that start with "/" or mention it (@BotFather's
# /setprivacy), which is all the commands need.
ALLOWED_UPDATES = ["callback_query", "message"]
# The updates that say where the pager should write: a group's or a private chat's message, a channel's post,
# the bot added to a chat (Bot API, getUpdates: "If not specified, the previous setting will be used").
CHAT_UPDATES = ["message", "channel_post", "my_chat_member"]


def menu_pairs(commands: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """A command menu as getMyCommands answers it, as the (command, description) pairs of BOT_COMMANDS."""
    return [(str(c.get("command", "")), str(c.get("description", ""))) for c in commands]


def menu(pairs: Any) -> str:
    """A command menu's commands as the chat writes them: "/status, /mute"."""
    return ", ".join(f"/{command}" for command, _ in pairs)


def pagers_menu(commands: list[dict[str, Any]] | None) -> bool:
    """Whether a menu (getMyCommands' answer) is pager's own, whatever its descriptions: one an earlier setup
    set in the default scope, which every private chat with the bot then showed (each command answered "not
    allowed" there). Another bot's menu of the same token is not pager's to remove."""
    names = {command for command, _ in menu_pairs(commands or [])}
    return bool(names) and names <= {command for command, _ in BOT_COMMANDS}


# What Telegram answers the command menu's methods in a channel's scope (TDLib, BotCommandScope.cpp,
# `get_bot_command_scope`: "Can't change commands in channel chats", worded by the Bot API server's
# `fail_query_with_error`): nobody writes commands in a channel, so it has no menu.
CHANNEL_REFUSAL = "can't change commands in channel chats"


def no_menu_there(exc: TelegramRefused) -> bool:
    """Whether Telegram refused a chat's menu because the chat is a channel."""
    return exc.status == 400 and CHANNEL_REFUSAL in exc.description.lower()


class AppGitHub(GitHub):
    """GitHub as the app's owner sees it."""

    def app(self) -> dict[str, Any]:
        return self._object("GET", "/app", "github get app", auth="jwt")

    def installation_repositories(self, installation_id: int) -> dict[str, Any]:
        """One repository's page, for `total_count` (how many repositories the installation reaches)."""
        response = self._send("GET", self._api_url + "/installation/repositories", step="github installation repositories",
                              auth=int(installation_id), params={"per_page": 1})
        body = self._json(response, "github installation repositories")
        if not isinstance(body, dict):
            raise GitHubUnavailable("github installation repositories: answer is not an object")
        return body

    def convert_manifest(self, code: str) -> dict[str, Any]:
        """The registered app's id, slug, owner and credentials (`pem`, `webhook_secret`, `client_secret`)."""
        step = "github manifest conversion"
        deadline.check(step)
        redact.register(code)  # a credential for an hour (it converts to the app's key), and the URL carries it
        headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": API_VERSION, "User-Agent": USER_AGENT}
        self.calls += 1
        failure = ""
        try:
            response = self._session.request("POST", f"{self._api_url}/app-manifests/{code}/conversions", headers=headers,
                                             timeout=(CONNECT_TIMEOUT, READ_TIMEOUT))
        except requests.RequestException as exc:
            failure = type(exc).__name__
        if failure:
            # Raised outside the except clause: requests' exception quotes the URL, and so the code.
            raise GitHubUnavailable(f"{step}: no answer ({failure})")
        self._raise_for_status(response, step)
        body = self._json(response, step)
        if not isinstance(body, dict) or not body.get("pem") or not body.get("id"):
            raise GitHubUnavailable(f"{step}: answer without the app's id and key")
        return body


class BotTelegram(Telegram):
    """The Bot API as the bot's owner sets it up."""

    def webhook_info(self) -> dict[str, Any]:
        return self._object("getWebhookInfo", {})

    def set_webhook(self, url: str, secret_token: str, allowed_updates: list[str]) -> None:
        self._call("setWebhook", {"url": url, "secret_token": secret_token, "allowed_updates": allowed_updates})

    def delete_webhook(self) -> None:
        self._call("deleteWebhook", {})

    def delete_my_commands(self, *, chat: int | str | None = None) -> None:
        """The bot's command menu removed (deleteMyCommands) from one chat's scope, or, without `chat`, from the
        default scope: the menu of every chat that has none of its own."""
        self._call("deleteMyCommands", scope(chat))

    def get_updates(self) -> list[dict[str, Any]]:
        """The updates waiting, of the kinds that say where the pager should write (CHAT_UPDATES). Naming the
        kinds also sets them as the bot's own from now on (without them, getUpdates keeps the setting of the
        last setWebhook, which leaves out a channel's post): setup asks once before anyone posts."""
        result = self._call("getUpdates", {"limit": 100, "allowed_updates": CHAT_UPDATES})
        if not isinstance(result, list):
            raise TelegramUnavailable("telegram getUpdates: answer is not a list")
        return [update for update in result if isinstance(update, dict)]


