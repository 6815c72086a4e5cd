"""`pager setup`: from nothing to a working pager, one step after the other, each done only when missing.

    control      the control repository (a parameter of the stack; asked for `make serve`)
    github-app   registered from a manifest (`pager.admin.manifest`, `pager.admin.form`); its private key
                 and webhook secret stored at once, its id, slug and owner saved for `make deploy`; with
                 Workflows: write when chosen (`--workflows`, or yes to the question: a fleet whose release
                 pull requests change .github/workflows/, which GitHub refuses to merge to an app without it)
    secrets      secrets given in the environment, stored where the functions read them
    bot          the bot's token, checked with getMe and stored
    secret-token Telegram's webhook secret token (generated here when none is stored)
    chat         the chat, its forum topic and who may press buttons, found with getUpdates
    webhook      Telegram's webhook at the stack's /telegram with the secret token, for button presses and
                 the chat's commands (allowed_updates callback_query and message)
    commands     the bot's command menu in the chat's scope (setMyCommands with BotCommandScopeChat), as
                 pager.commands lists the commands, and none in every other chat: the default scope's list an
                 earlier setup set is removed (deleteMyCommands), as there each command is answered "not allowed"
    quiet        the maintainer's time zone and quiet hours, 22:00-07:00 on this machine's clock offered
                 (`--time-zone`, `--quiet-hours`: without asking); `none` is kept as chosen, so that it is
                 never asked again, where empty (a guided deploy's Enter) is not chosen yet
    test-message a message to the chat, when this run changed where the pager writes
    and then     what is left for the person: `make deploy`, installing the app, `make doctor`

A step's `done` is a pure function of what was gathered (`State`); a second run finds every step done
and changes nothing. A registered app is never registered again: with an app id set whose key does not
work, setup stops and says how to fix it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from importlib import resources
from pathlib import Path
from typing import Any

import requests

from pager.attention import QuietHours
from pager.commands import BOT_COMMANDS
from pager.errors import ChatMigrated, PagerError, TelegramRefused, Transient
from pager.settings import QUIET_NONE, REPOSITORY, SECRET_NAMES

from .clients import ALLOWED_UPDATES, AppGitHub, BotTelegram, menu, menu_pairs, no_menu_there, pagers_menu
from .console import Console
from .deployment import Target, is_placeholder
from .form import ManifestForm
from .manifest import AppPages, manifest, new_app_url, web_root

FORM_TIMEOUT = 15 * 60.0  # seconds to wait for GitHub's redirect
FORM_POLL = 0.5
CHAT_ATTEMPTS = 5
TOKEN_ATTEMPTS = 3
SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")  # setWebhook's secret_token
CHAT_ID = re.compile(r"-?[0-9]+|@[A-Za-z0-9_]{5,}")
DAY = 86_400.0
TEST_MESSAGE = "✅ <b>pager</b> is set up: this chat gets its pages."
QUIET_OFFER = "22:00-07:00"  # the night offered: the bench's week buzzes 36 times in it without quiet hours
QUIET_ATTEMPTS = 3


@dataclass
class Tools:
    """Everything setup does outside itself, handed in (the CLI's context; tests pass fakes)."""

    console: Console
    session: requests.Session
    now: Callable[[], float]
    sleep: Callable[[float], None]
    open_browser: Callable[[str], Any]
    ask_secret: Callable[[str], str]
    token: Callable[[int], str]
    environ: dict[str, str]
    machine_zone: Callable[[], str]  # this machine's time zone (`machine_zone`)


@dataclass
class Options:
    org: str = ""
    name: str = ""
    test_message: bool = False
    workflows: bool | None = None  # Workflows: write for the app (None: ask when registering it)
    quiet_hours: str | None = None  # as `quiet_hours_answer` gives it (None: ask while none are chosen)
    time_zone: str | None = None  # as `time_zone_answer` gives it (None: ask while no quiet hours are chosen)


WORKFLOWS_QUESTION = ("Do your release pull requests change .github/workflows/? pager then needs Workflows: write to "
                      "merge them (GitHub refuses otherwise) [y/N]: ")


def wants_workflows(options: Options, console: Console) -> bool:
    """Whether the app gets Workflows: write: `--workflows`, else the person's answer (default no)."""
    if options.workflows is not None:
        return options.workflows
    return console.ask(WORKFLOWS_QUESTION).lower() in ("y", "yes")


@dataclass
class State:
    """What setup found, and what this run changed."""

    target: Target
    values: dict[str, str]  # the settings in use, the secrets left out
    secrets: dict[str, str]  # the secrets in use (environment, .env, the secret)
    stored: dict[str, str] = field(default_factory=dict)  # the secrets the target itself holds
    app: dict[str, Any] | None = None
    app_problem: str = ""
    bot: dict[str, Any] | None = None
    bot_problem: str = ""
    unreachable: str = ""  # GitHub or Telegram did not answer setup (no answer, a 5xx, a rate limit): a try later
    webhook_info: dict[str, Any] | None = None
    commands: list[dict[str, Any]] | None = None  # the chat's command menu as Telegram has it (None: not read)
    channel: bool = False  # the chat is a channel, where Telegram keeps no command menu
    default_commands: list[dict[str, Any]] | None = None  # the menu of the default scope: every other chat's
    now: float = 0.0
    changed: set[str] = field(default_factory=set)

    @property
    def github_api(self) -> str:
        return self.values.get("GITHUB_API_URL") or "https://api.github.com"

    @property
    def telegram_api(self) -> str:
        return self.values.get("TELEGRAM_API_URL") or "https://api.telegram.org"


# -- gathering ---------------------------------------------------------------------------------------------


def github(state: State, tools: Tools) -> AppGitHub:
    return AppGitHub(tools.session, app_id=state.values.get("GITHUB_APP_ID", "0"),
                     private_key=state.secrets.get("GITHUB_PRIVATE_KEY", ""), api_url=state.github_api, clock=tools.now)


def telegram(state: State, tools: Tools) -> BotTelegram:
    return BotTelegram(tools.session, token=state.secrets.get("TELEGRAM_BOT_TOKEN", ""), api_url=state.telegram_api,
                       sleep=tools.sleep)


def gather(target: Target, tools: Tools) -> State:
    found = target.values(tools.environ)
    secrets = target.secrets(found)
    tools.console.hide(*secrets.values())
    values = {name: value for name, value in found.items() if name not in SECRET_NAMES}
    state = State(target, values, secrets, target.stored_secrets(), now=tools.now())
    ignored = sorted(name for name in SECRET_NAMES if target.stack is not None and tools.environ.get(name)
                     and state.stored.get(name) and tools.environ[name] != state.stored[name])
    if ignored:
        one = len(ignored) == 1
        tools.console.line(f"  {', '.join(ignored)} in your environment {'differs' if one else 'differ'} from "
                           f"{target.where_secrets()}: the stack's {'is' if one else 'are'} kept (the functions read "
                           f"{'it' if one else 'them'}); setup asks for a new one only when Telegram or GitHub refuses it")
    check_app(state, tools)
    check_bot(state, tools)
    return state


def check_app(state: State, tools: Tools) -> None:
    if is_placeholder(state.values.get("GITHUB_APP_ID")):
        return
    if not state.secrets.get("GITHUB_PRIVATE_KEY"):
        state.app_problem = f"its private key is not in {state.target.where_secrets()}"
        return
    try:
        state.app = github(state, tools).app()
    except Transient as exc:
        state.unreachable = f"GitHub could not be asked: {exc}"
    except PagerError as exc:
        state.app_problem = str(exc)


def check_bot(state: State, tools: Tools) -> None:
    if not state.secrets.get("TELEGRAM_BOT_TOKEN"):
        return
    client = telegram(state, tools)
    try:
        state.bot = client.get_me()
        state.webhook_info = client.webhook_info()
        read_menus(state, client)
    except Transient as exc:
        state.unreachable = state.unreachable or f"Telegram could not be asked: {exc}"
    except PagerError as exc:
        state.bot, state.bot_problem = None, str(exc)


# -- what is done (pure) -------------------------------------------------------------------------------------


def control_done(state: State) -> str:
    control = state.values.get("CONTROL_REPOSITORY", "")
    return f"control repository {control}" if REPOSITORY.fullmatch(control) else ""


def app_done(state: State) -> str:
    if state.app is None:
        return ""
    return f"GitHub App {state.app.get('slug')} (id {state.app.get('id')}) is registered and GitHub accepts its key"


def secrets_done(state: State) -> str:
    missing = sorted(name for name, value in state.secrets.items() if state.stored.get(name) != value)
    return "" if missing else f"the secrets are in {state.target.where_secrets()}"


def bot_done(state: State) -> str:
    if state.bot is None:
        return ""
    return f"Telegram bot @{state.bot.get('username')} accepts its token"


def secret_token_done(state: State) -> str:
    value = state.secrets.get("TELEGRAM_WEBHOOK_SECRET", "")
    return "Telegram's webhook secret token is set" if SECRET_TOKEN.fullmatch(value) else ""


def chat_done(state: State) -> str:
    chat = state.values.get("TELEGRAM_CHAT_ID", "")
    if is_placeholder(chat) or chat == "0":
        return ""
    thread = state.values.get("TELEGRAM_THREAD_ID", "")
    users = state.values.get("TELEGRAM_ALLOWED_USERS", "")
    topic = f", topic {thread}" if thread and thread != "0" else ""
    who = f"users {users} may press the buttons" if users else "nobody may press the buttons (TELEGRAM_ALLOWED_USERS is empty)"
    return f"chat {chat}{topic}; {who}"


def webhook_done(state: State) -> str:
    info, expected = state.webhook_info, state.target.telegram_webhook_url
    if info is None or not expected or state.changed & {"secret-token", "webhook-deleted"}:
        return ""
    # Telegram reports allowed_updates in its own order (and none at all for its default): compared as a set.
    if info.get("url") != expected or set(info.get("allowed_updates") or ()) != set(ALLOWED_UPDATES):
        return ""
    refused = "401" in str(info.get("last_error_message", "")) and state.now - float(info.get("last_error_date") or 0) < DAY
    return "" if refused else f"Telegram's webhook points at {expected} (button presses and commands)"


def read_menus(state: State, client: BotTelegram) -> None:
    """The menus as Telegram has them: the default scope's, and the chat's own scope's when a chat is set (a
    channel has none; a chat Telegram refuses is read as none, and the step says Telegram's words)."""
    state.default_commands = client.get_my_commands()
    chat = state.values.get("TELEGRAM_CHAT_ID", "")
    if is_placeholder(chat) or chat == "0":
        return
    try:
        state.commands = client.get_my_commands(chat=chat)
    except TelegramRefused as exc:  # a channel, a group made a supergroup, a chat the bot is not in
        state.commands, state.channel = None, no_menu_there(exc)


def commands_done(state: State) -> str:
    """The chat lists pager's commands (a channel none, as it takes none), and no other chat does: the default
    scope holds no list of pager's."""
    if "chat" in state.changed or pagers_menu(state.default_commands):
        return ""
    if state.channel:
        return "no command menu: a channel takes none (nobody writes commands there)"
    if state.commands is None or menu_pairs(state.commands) != list(BOT_COMMANDS):
        return ""
    return f"Telegram's command menu lists {menu(BOT_COMMANDS)} in the chat alone"


def quiet_done(state: State, options: Options) -> str:
    """Quiet hours are chosen (a time or `none`), and no flag asks for others or another time zone."""
    hours, zone = state.values.get("QUIET_HOURS", ""), state.values.get("TIMEZONE") or "UTC"
    if not hours or options.quiet_hours not in (None, hours) or options.time_zone not in (None, zone):
        return ""
    return quiet_words(hours, zone)


def quiet_words(hours: str, zone: str) -> str:
    if hours == QUIET_NONE:
        return f"no quiet hours, as chosen: what needs you buzzes day and night (the chat's times on {zone}'s clock)"
    return f"quiet hours {hours} on {zone}'s clock: nothing buzzes inside them, one summary when they end"


def message_done(state: State, wanted: bool) -> str:
    if wanted or state.changed & {"chat", "webhook"}:
        return ""
    return "no test message: nothing changed where the pager writes (--test-message sends one)"


def run_setup(target: Target, tools: Tools, options: Options) -> int:
    console = tools.console
    console.line(f"pager setup: {target.describe()}")
    name = target.stack.name if target.stack is not None else ""
    other = target.samconfig.stack_name() if name else ""
    if other and other != name:  # checked first: registering an app is not undone
        console.failed(f"samconfig.local.toml deploys the stack {other}, not {name}: setup keeps the app's id, slug "
                       "and owner there, for the next `make deploy`",
                       f"run it for {other} (without --stack), or from a folder whose samconfig.local.toml deploys {name}")
        return 1
    state = gather(target, tools)
    if state.unreachable:  # never a reason to replace a key or a token, nor to register another app
        console.failed(state.unreachable, f"nothing to replace: check this machine's network and the service's status, "
                                          f"then run `{target.setup_command()}` again")
        return 1
    for _, done, step in STEPS:
        finished = done(state, options)
        if finished:
            console.done(finished)
        elif not step(state, tools, options):
            return 1
    what_is_left(state, tools, options)
    return 0


def store_secrets(state: State, updates: dict[str, str]) -> None:
    state.target.store_secrets(updates)
    state.secrets.update(updates)
    state.stored.update(updates)


def store_settings(state: State, updates: dict[str, str]) -> None:
    state.target.store_settings(updates)
    state.values.update(updates)


def step_control(state: State, tools: Tools, options: Options) -> bool:
    console = tools.console
    for _ in range(3):
        answer = console.ask("owner/name of the pager's own repository (the control repository): ")
        if REPOSITORY.fullmatch(answer):
            store_settings(state, {"CONTROL_REPOSITORY": answer})
            console.done(f"control repository {answer} (in {state.target.where_settings()})")
            return True
        console.line("  that is not owner/name")
    console.failed("no control repository",
                   f"run `{state.target.setup_command()}` again with the repository's owner/name at hand")
    return False


def step_app(state: State, tools: Tools, options: Options) -> bool:
    console = tools.console
    app_id = state.values.get("GITHUB_APP_ID", "")
    if not is_placeholder(app_id):
        console.failed(
            f"the GitHub App {app_id} is set, but GitHub cannot be asked for it: {state.app_problem}",
            "setup never registers a second app. Generate a private key on the app's General page and "
            f"{state.target.put_key()} (or, to register a new app, remove GITHUB_APP_ID from "
            f"{state.target.where_settings()}); then run `{state.target.setup_command()}` again",
        )
        return False
    if state.secrets.get("GITHUB_PRIVATE_KEY"):  # a key without an app id: an app was registered already
        console.failed(
            f"{state.target.where_secrets()} holds an app's private key, but no GITHUB_APP_ID is set",
            f"set GitHubAppId, GitHubAppSlug and GitHubAppOwner (the app's General page) in {state.target.where_settings()}, "
            f"then run `{state.target.setup_command()}` again; it never registers a second app",
        )
        return False
    webhook_url = state.target.github_webhook_url
    if not webhook_url:
        console.failed("no webhook URL for the app",
                       f"give the tunnel's URL in front of `make serve`: `{state.target.setup_command()}`")
        return False
    org = options.org or state.values.get("GITHUB_APP_OWNER", "")
    if not org:
        org = console.ask("Register the app for your user account (Enter) or for an organization (its login): ")
    control = state.values["CONTROL_REPOSITORY"]
    name = options.name or f"{org or control.split('/')[0]}-pager"[:34]
    workflows = wants_workflows(options, console)
    code = register_in_browser(state, tools, name=name, org=org, webhook_url=webhook_url, workflows=workflows)
    if code is None:
        return False
    credentials = github(state, tools).convert_manifest(code)
    return keep_credentials(state, tools, credentials, org)


def register_in_browser(state: State, tools: Tools, *, name: str, org: str, webhook_url: str,
                        workflows: bool = False) -> str | None:
    """Serve the form, let the person register the app on GitHub; the code GitHub's redirect brought back."""
    console = tools.console
    web = web_root(state.github_api)
    form = ManifestForm(tools.token(24)).start()
    try:
        app = manifest(name=name, homepage=f"{web}/{state.values['CONTROL_REPOSITORY']}", webhook_url=webhook_url,
                       redirect_url=form.redirect_url, workflows=workflows)
        owner = f"It will belong to the organization {org}." if org else "It will belong to your user account."
        form.show(action=new_app_url(web, org, form.state), manifest=app, owner=owner)
        console.doing(f"registering the GitHub App “{name}” from a manifest: its webhook is {webhook_url}")
        console.line(f"  Opening {form.url} in your browser (open it yourself if nothing opens). Press")
        console.line("  “Continue to GitHub”, then “Create GitHub App” on GitHub's page.")
        tools.open_browser(form.url)
        deadline = tools.now() + FORM_TIMEOUT
        while not form.got.is_set():
            if tools.now() >= deadline:
                console.failed("GitHub's redirect did not come back in time", f"run `{state.target.setup_command()}` again")
                return None
            tools.sleep(FORM_POLL)
        return form.code
    finally:
        form.stop()


def keep_credentials(state: State, tools: Tools, credentials: dict[str, Any], org: str) -> bool:
    """Store what the conversion answered, before anything else can fail."""
    console = tools.console
    pem, hook_secret = str(credentials.get("pem") or ""), str(credentials.get("webhook_secret") or "")
    console.hide(pem, hook_secret, str(credentials.get("client_secret") or ""))
    owner = credentials.get("owner") or {}
    org = owner.get("login", org) if owner.get("type") == "Organization" else ""
    secrets = {"GITHUB_PRIVATE_KEY": pem}
    if hook_secret:
        secrets["GITHUB_WEBHOOK_SECRET"] = hook_secret
    store_secrets(state, secrets)
    settings = {"GITHUB_APP_ID": str(credentials["id"]), "GITHUB_APP_SLUG": str(credentials.get("slug", "")),
                "GITHUB_APP_OWNER": org}
    store_settings(state, settings)
    state.app = {k: v for k, v in credentials.items() if k not in ("pem", "webhook_secret", "client_secret")}
    state.changed.add("github-app")
    where = (f"its private key, webhook secret, id, slug and owner are in {state.target.where_all()}"
             if state.target.stack is None else f"its private key and webhook secret are in {state.target.where_secrets()}, "
                                                f"its id, slug and owner in {state.target.where_settings()}")
    console.done(f"registered the GitHub App {settings['GITHUB_APP_SLUG']} (id {settings['GITHUB_APP_ID']}) for "
                 f"{owner.get('login', org or 'your account')}: {where}")
    if not hook_secret:
        pages = AppPages(settings["GITHUB_APP_SLUG"], org, web_root(state.github_api))
        console.failed("GitHub gave the app no webhook secret",
                       f"set one on {pages.settings} and put it into {state.target.where_secrets()} as GITHUB_WEBHOOK_SECRET")
        return False
    return True


def step_secrets(state: State, tools: Tools, options: Options) -> bool:
    missing = {name: value for name, value in state.secrets.items() if state.stored.get(name) != value}
    store_secrets(state, missing)
    tools.console.done(f"stored {', '.join(sorted(missing))} (from the environment) in {state.target.where_secrets()}")
    return True


def step_bot(state: State, tools: Tools, options: Options) -> bool:
    console = tools.console
    if state.bot_problem:
        console.line(f"  The bot's token does not work: {state.bot_problem}")
    console.line("  Telegram bot: in Telegram, talk to @BotFather, /newbot (or /token for an existing bot).")
    for _ in range(TOKEN_ATTEMPTS):
        token = tools.ask_secret("Paste the bot's token (it is not shown), then Enter: ").strip()
        console.hide(token)
        if not token:
            continue
        state.secrets["TELEGRAM_BOT_TOKEN"] = token
        try:
            check = telegram(state, tools)
            state.bot = check.get_me()
            state.webhook_info = check.webhook_info()
            read_menus(state, check)
        except TelegramRefused:
            console.line("  Telegram refuses that token; try again.")
            continue
        store_secrets(state, {"TELEGRAM_BOT_TOKEN": token})
        state.changed.add("bot")
        console.done(f"Telegram bot @{state.bot.get('username')}: its token is in {state.target.where_secrets()}")
        return True
    console.failed("no bot token Telegram accepts",
                   f"get one from @BotFather, then run `{state.target.setup_command()}` again")
    return False


def step_secret_token(state: State, tools: Tools, options: Options) -> bool:
    value = tools.token(48)
    tools.console.hide(value)
    store_secrets(state, {"TELEGRAM_WEBHOOK_SECRET": value})
    state.changed.add("secret-token")
    tools.console.done(f"generated Telegram's webhook secret token; it is in {state.target.where_secrets()}")
    return True


def step_webhook(state: State, tools: Tools, options: Options) -> bool:
    url = state.target.telegram_webhook_url
    if not url:
        tools.console.failed("no URL for Telegram's webhook", f"give the tunnel's URL: `{state.target.setup_command()}`")
        return False
    telegram(state, tools).set_webhook(url, state.secrets["TELEGRAM_WEBHOOK_SECRET"], ALLOWED_UPDATES)
    state.changed.add("webhook")
    tools.console.done(f"set Telegram's webhook: {url}, with the secret token, for button presses and commands")
    return True


def step_commands(state: State, tools: Tools, options: Options) -> bool:
    """pager's menu in the chat's scope (a group Telegram made a supergroup: in the supergroup; a channel takes
    none), then the default scope's list of pager's removed: every other chat showed it."""
    client, chat = telegram(state, tools), state.values["TELEGRAM_CHAT_ID"]
    try:
        if "chat" in state.changed or state.commands is None or menu_pairs(state.commands) != list(BOT_COMMANDS):
            client.set_my_commands(BOT_COMMANDS, chat=chat)
            tools.console.done(f"set the bot's command menu in the chat (what Telegram lists after / there): "
                               f"{menu(BOT_COMMANDS)}")
    except ChatMigrated as moved:
        client.set_my_commands(BOT_COMMANDS, chat=moved.to_chat)
        tools.console.done(f"set the bot's command menu in the supergroup {moved.to_chat}, which Telegram made of the group "
                           f"{chat} (set TELEGRAM_CHAT_ID to {moved.to_chat}): {menu(BOT_COMMANDS)}")
    except TelegramRefused as exc:
        if not no_menu_there(exc):
            tools.console.failed(f"Telegram refuses the command menu in the chat {chat}: {exc}",
                                 f"add the bot to the chat {chat}, then run `{state.target.setup_command()}` again")
            return False
        tools.console.done("no command menu in the chat: a channel takes none (nobody writes commands there)")
    state.commands = [{"command": command, "description": description} for command, description in BOT_COMMANDS]
    if pagers_menu(state.default_commands):
        client.delete_my_commands()
        state.default_commands = []
        tools.console.done("removed the command menu from every other chat (the default scope an earlier setup set, where "
                           "each command was answered “not allowed”)")
    state.changed.add("commands")
    return True


def step_quiet(state: State, tools: Tools, options: Options) -> bool:
    """The time zone, then the quiet hours on its clock (`_quiet_chosen`), stored once both are chosen."""
    console = tools.console
    zone, hours = _quiet_chosen(state, tools, options)
    if zone is None or hours is None:
        example = state.target.setup_command("--time-zone", "Europe/Berlin", "--quiet-hours", QUIET_OFFER)
        console.failed(f"no {'time zone' if zone is None else 'quiet hours'} chosen",
                       f"run `{state.target.setup_command()}` again, or give both: `{example}` (or --quiet-hours none)")
        return False
    store_settings(state, {"TIMEZONE": zone, "QUIET_HOURS": hours})
    state.changed.add("quiet")
    console.done(f"{quiet_words(hours, zone)}; in {state.target.where_settings()}")
    return True


def _quiet_chosen(state: State, tools: Tools, options: Options) -> tuple[str | None, str | None]:
    """The time zone and the quiet hours: each from its flag, else, while no quiet hours are chosen, asked (Enter
    takes what is offered), else kept as it is; None for one still not chosen (the answers refused)."""
    console = tools.console
    chosen, current = state.values.get("QUIET_HOURS", ""), state.values.get("TIMEZONE", "")
    zone = options.time_zone or ((current or "UTC") if chosen else None)
    hours = options.quiet_hours or chosen or None
    if zone is None or hours is None:
        console.line("  When may pager buzz? Inside quiet hours nothing does: what needs you then comes in one "
                     "summary when they end.")
    if zone is None:
        zone = _ask_zone(tools, current)
    if zone is not None and hours is None:
        hours = ask_until(console, f"Quiet hours on that clock, HH:MM-HH:MM or none [Enter for {QUIET_OFFER}]: ",
                          quiet_hours_answer, QUIET_OFFER)
    return zone, hours


def _ask_zone(tools: Tools, current: str) -> str | None:
    """The time zone asked for, offering the one chosen in the guided deploy (`current`), else this machine's."""
    deployed = bool(current) and current != "UTC"  # a zone chosen in the guided deploy, else this machine's
    offered, whose = (current, "the deployment's") if deployed else (tools.machine_zone(), "this machine's")
    return ask_until(tools.console, f"Your time zone, for quiet hours and the chat's times [Enter for {offered}, {whose}]: ",
                     time_zone_answer, offered)


def ask_until(console: Console, question: str, answer: Callable[[str], str], offered: str) -> str | None:
    """The person's answer as `answer` takes it (Enter: `offered`), asked again after one it refuses; None after
    QUIET_ATTEMPTS refused."""
    for _ in range(QUIET_ATTEMPTS):
        try:
            return answer(console.ask(question) or offered)
        except ValueError as exc:
            console.line(f"  {exc}")
    return None


def step_test_message(state: State, tools: Tools, options: Options) -> bool:
    thread = state.values.get("TELEGRAM_THREAD_ID", "")
    telegram(state, tools).send_message(state.values["TELEGRAM_CHAT_ID"], TEST_MESSAGE,
                                        thread_id=int(thread) if thread.isdigit() and thread != "0" else None)
    tools.console.done("sent a test message to the chat")
    return True


Done = Callable[[State, Options], str]
Step = Callable[[State, Tools, Options], bool]

STEPS: tuple[tuple[str, Done, Step], ...] = (
    ("control", lambda state, _: control_done(state), step_control),
    ("github-app", lambda state, _: app_done(state), step_app),
    ("secrets", lambda state, _: secrets_done(state), step_secrets),
    ("bot", lambda state, _: bot_done(state), step_bot),
    ("secret-token", lambda state, _: secret_token_done(state), step_secret_token),
    ("chat", lambda state, _: chat_done(state), lambda state, tools, options: step_chat(state, tools, options)),
    ("webhook", lambda state, _: webhook_done(state), step_webhook),
    ("commands", lambda state, _: commands_done(state), step_commands),
    ("quiet", quiet_done, step_quiet),
    ("test-message", lambda state, options: message_done(state, options.test_message), step_test_message),
)


# -- the maintainer's clock ------------------------------------------------------------------------------------


def quiet_hours_answer(text: str) -> str:
    """Quiet hours as setup keeps them: HH:MM-HH:MM as the functions read it (pager.attention.QuietHours), or
    `none` (in any case). ValueError, in words for the person, for anything else."""
    value = text.strip()
    if value.lower() == QUIET_NONE:
        return QUIET_NONE
    try:
        hours = QuietHours.parse(value, UTC)  # the form alone: no zone plays a part
    except ValueError as exc:
        raise ValueError(f"{exc}; give them such as {QUIET_OFFER}, or none") from None
    if hours is None:  # nothing at all (a flag given empty)
        raise ValueError(f"quiet hours are HH:MM-HH:MM; give them such as {QUIET_OFFER}, or none")
    return value


def time_zone_answer(text: str) -> str:
    """A time zone of the IANA database, as the database spells it (`europe/berlin` is Europe/Berlin).
    ValueError, in words for the person, for anything else."""
    value = text.strip()
    known = iana_zones().get(value.lower())
    if known is None:
        raise ValueError(f"{value or 'nothing'} is not a time zone of the IANA database (such as Europe/Berlin)")
    return known


@functools.cache
def iana_zones() -> dict[str, str]:
    """The IANA database's zones by their lower case, as the tzdata package lists them: the functions carry that
    package, so a zone it lists works in Lambda, whatever this machine's own zoneinfo holds (`localtime`)."""
    names = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8").split()
    return {name.lower(): name for name in names}


def machine_zone(environ: Mapping[str, str], etc: Path = Path("/etc")) -> str:
    """This machine's time zone, found by hand where tzlocal looks: TZ (`Europe/Berlin`, `:Europe/Berlin`, or a
    path into a zoneinfo folder), else where the link /etc/localtime points into zoneinfo (what the C library
    reads, on Linux and macOS: so it comes before a stale file), else /etc/timezone (Debian's, for a localtime
    copied rather than linked); UTC when none names a zone of the IANA database (Windows, or a POSIX rule in TZ
    such as `CET-1CEST`)."""
    found = [environ.get("TZ", "")]
    localtime = etc / "localtime"
    if localtime.is_symlink():
        found += [os.readlink(localtime), os.path.realpath(localtime)]
    try:
        found += (etc / "timezone").read_text(encoding="utf-8").splitlines()[:1]
    except (OSError, UnicodeDecodeError):  # no such file (or not text): no name from it
        pass
    for text in found:
        name = text.strip().removeprefix(":").rsplit("zoneinfo/", 1)[-1].removeprefix("posix/").removeprefix("right/")
        if name.lower() in iana_zones():
            return iana_zones()[name.lower()]
    return "UTC"


# -- the chat ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChatFound:
    chat_id: str
    kind: str  # private, group, supergroup, channel
    title: str
    thread_id: int | None = None
    users: tuple[tuple[int, str], ...] = ()

    def describe(self) -> str:
        topic = f", topic {self.thread_id}" if self.thread_id else ""
        return f"{self.kind} “{self.title}” ({self.chat_id}{topic})"


def chats_in(updates: list[dict[str, Any]]) -> list[ChatFound]:
    """The chats (and forum topics) the updates come from, with the people who wrote there, oldest first."""
    found: dict[tuple[str, int | None], dict[str, Any]] = {}
    for update in updates:
        message = update.get("message") or update.get("channel_post") or update.get("my_chat_member") or {}
        chat = message.get("chat") if isinstance(message, dict) else None
        if not isinstance(chat, dict) or "id" not in chat:
            continue
        thread = message.get("message_thread_id") if message.get("is_topic_message") else None
        entry = found.setdefault((str(chat["id"]), thread), {"chat": chat, "users": {}})
        entry["users"].update(_writer(message.get("from")))
    return [ChatFound(chat_id, str(entry["chat"].get("type", "")), _chat_title(entry["chat"], chat_id), thread,
                      tuple(entry["users"].items()))
            for (chat_id, thread), entry in found.items()]


def _writer(sender: Any) -> dict[int, str]:
    """The person who wrote a message, by id, as setup names them (their username, else their first name);
    none for a bot or a sender Telegram did not say."""
    if not isinstance(sender, dict) or sender.get("is_bot") or not isinstance(sender.get("id"), int):
        return {}
    return {sender["id"]: sender.get("username") or sender.get("first_name") or str(sender["id"])}


def _chat_title(chat: dict[str, Any], chat_id: str) -> str:
    """A chat as setup names it: a group's or a channel's title, a private chat's @username or first name,
    else its id."""
    return str(chat.get("title") or (f"@{chat['username']}" if chat.get("username") else chat.get("first_name") or chat_id))


def allowed_users(chosen: ChatFound, chats: list[ChatFound]) -> dict[int, str]:
    """Who may press the buttons: the people who wrote in the chosen chat, or to the bot in private."""
    users = dict(chosen.users)
    for chat in chats:
        if chat.kind == "private":
            users.update(chat.users)
    return users


def step_chat(state: State, tools: Tools, options: Options) -> bool:
    console = tools.console
    client = telegram(state, tools)
    if (state.webhook_info or {}).get("url"):
        client.delete_webhook()
        state.changed.add("webhook-deleted")
        console.doing("removed the bot's webhook for now: getUpdates works only without one (it is set again below)")
    client.get_updates()  # the kinds of update it looks for are the bot's from now on: a channel's post is kept
    bot = f"@{(state.bot or {}).get('username', 'your_bot')}"
    console.line("  Where should the pager write? In Telegram:")
    console.line(f"  - a group: add {bot} and send /start{bot} there (in the forum topic it should write into, if any);")
    console.line(f"  - a channel: make {bot} an administrator that may post messages, and post something;")
    console.line(f"  - and whoever may press the buttons sends {bot} a private message.")
    chats: list[ChatFound] = []
    for _ in range(CHAT_ATTEMPTS):
        answer = console.ask("Press Enter once sent (or type the chat id): ")
        if CHAT_ID.fullmatch(answer):
            chats = [ChatFound(answer, "chat", answer)]
            break
        chats = chats_in(client.get_updates())
        if chats:
            break
        console.line("  Nothing has arrived yet.")
    if not chats:
        console.failed("no chat found", f"send a message where the pager should write (the bot {bot} must be there), "
                                        f"then run `{state.target.setup_command()}` again")
        return False
    chosen = choose_chat(chats, console)
    users = allowed_users(chosen, chats)
    allowed = choose_users(users, console)
    settings = {"TELEGRAM_CHAT_ID": chosen.chat_id, "TELEGRAM_THREAD_ID": str(chosen.thread_id or ""),
                "TELEGRAM_ALLOWED_USERS": ",".join(str(user) for user in allowed)}
    store_settings(state, settings)
    state.changed.add("chat")
    who = f"users {settings['TELEGRAM_ALLOWED_USERS']} may press the buttons" if allowed else "nobody may press the buttons"
    console.done(f"the pager writes to the {chosen.describe()}; {who}; in {state.target.where_settings()}")
    return True


def choose_chat(chats: list[ChatFound], console: Console) -> ChatFound:
    groups = [chat for chat in chats if chat.kind != "private"] or chats
    if len(groups) == 1:
        return groups[0]
    for number, chat in enumerate(groups, start=1):
        console.line(f"  {number}. {chat.describe()}")
    answer = console.ask(f"Which chat should the pager write to? [1-{len(groups)}, Enter for 1]: ")
    index = int(answer) - 1 if answer.isdigit() and 1 <= int(answer) <= len(groups) else 0
    return groups[index]


def choose_users(users: dict[int, str], console: Console) -> list[int]:
    if users:
        listed = ", ".join(f"{name} ({user})" for user, name in users.items())
        answer = console.ask(f"Allow {listed} to press the buttons? [Enter: yes, or type the user ids]: ")
    else:
        answer = console.ask("Telegram user ids who may press the buttons (comma-separated; Enter for nobody): ")
    if not answer or answer.lower() in ("y", "yes"):
        return list(users)
    return [int(part) for part in re.split(r"[,\s]+", answer) if part.isdigit()]


# -- what is left --------------------------------------------------------------------------------------------


def what_is_left(state: State, tools: Tools, options: Options | None = None) -> None:
    """Say what only the person can do: deploy the parameters, install the app, give an app registered before
    the Workflows permission asked for (`--workflows`); then the doctor."""
    console = tools.console
    console.line()
    console.line("What is left for you:")
    pending = state.target.pending()
    if pending:
        console.line(f"  - run `make deploy`: {', '.join(sorted(pending))} in samconfig.local.toml reach the functions then")
    if state.app is not None:
        for line in app_left(state, tools) + workflows_left(state, options or Options()):
            console.line(f"  - {line}")
    console.line(f"  - check it all with `{state.target.doctor_command()}`")


def workflows_left(state: State, options: Options) -> list[str]:
    """An app registered without Workflows: write when `--workflows` asks for it: where to add it (a manifest
    sets permissions only when the app is registered)."""
    held = (state.app or {}).get("permissions")
    if not options.workflows or not isinstance(held, dict) or held.get("workflows") == "write":
        return []
    pages = AppPages(state.values.get("GITHUB_APP_SLUG", ""), state.values.get("GITHUB_APP_OWNER", ""), web_root(state.github_api))
    return [f"give the app Workflows: on {pages.permissions}, Repository permissions → Workflows: Read and write, Save "
            "changes; the installation's owner then accepts it (pager merges release pull requests that change "
            ".github/workflows/ only with it)"]


def app_left(state: State, tools: Tools) -> list[str]:
    slug, org = state.values.get("GITHUB_APP_SLUG", ""), state.values.get("GITHUB_APP_OWNER", "")
    pages = AppPages(slug, org, web_root(state.github_api))
    control = state.values.get("CONTROL_REPOSITORY", "")
    client = github(state, tools)
    lines = []
    try:
        hook = client.hook_config()
        if state.target.github_webhook_url and hook.get("url") != state.target.github_webhook_url:
            lines.append(f"set the app's Webhook URL to {state.target.github_webhook_url} on {pages.settings}")
    except PagerError as exc:
        lines.append(f"check the app's webhook on {pages.settings} ({exc})")
    try:
        installation = client.installation(control)
    except PagerError:
        lines.append(f"install the app: {pages.install} → Only select repositories → every repository of the "
                     f"fleet and {control}")
        return lines
    lines.append(f"add repositories to the fleet whenever you like: {installation.get('html_url') or pages.install}")
    return lines
