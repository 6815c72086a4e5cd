"""`pager doctor`: what is wrong with a live deployment, check by check, each with its fix.

First the facts are gathered (every call made once, each failure kept as a fact: `gather`), then each
check is a pure function from the facts to `Check` lines (`checks`). A check that needs what could not
be read, or the stack when none was found, is skipped with a note. A line of information (ℹ) neither
holds nor fails. The exit status is 0 only when no check fails.

    settings       complete and well-formed, read as the functions read them
    deployed       samconfig.local.toml's parameters are the stack's (else: `make deploy`)
    app            the private key signs a JWT GitHub accepts (GET /app); id, slug and owner as set
    events         the app subscribes to every event the signals table needs
    permissions    the app holds every permission its calls need (and which it holds beyond them)
    webhook        active, with a secret, at the stack's /github; form-encoded is information (pager reads
                   its payload field), JSON holds
    endpoint       pager's endpoint answers a ping signed with GITHUB_WEBHOOK_SECRET, sent as GitHub sends one to the
                   URL the app's webhook delivers to, with 2xx: a 401 (the secrets differ), a 403 or 404 (no route of
                   pager's there), a 5xx or no answer (the function fails) each with its fix; information when GitHub
                   delivers nothing (no URL, inactive)
    installation   on the control repository, its permissions accepted, on how many repositories
    workflows      information: whether the app may merge release pull requests that change .github/workflows/
                   (the optional Workflows permission, the app's and the installation's); never a failure
    deliveries     the last day: how many failed, how many were refused with 401, which kept failing
    bot            Telegram accepts the token (getMe)
    telegram       its webhook at the stack's /telegram, button presses and commands allowed, no recent error
    commands       the chat's command menu is pager's (getMyCommands in the chat's scope, BotCommandScopeChat;
                   pager.commands.BOT_COMMANDS), and no other chat's: the default scope lists none of pager's
                   (an earlier setup's list showed in every private chat, each command answered "not allowed")
    chat           the bot may post in the chat (getChatMember, and unless it is an administrator getChat: a
                   group's default permissions); a group Telegram made a supergroup is named
    quiet hours    set, or none as chosen; information when none are set at all (what needs the maintainer then
                   buzzes day and night), with how to set them; never a failure
    table          the table exists, with its TTL
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pager.chat import KEY as CHAT_KEY
from pager.chat import move_of
from pager.commands import BOT_COMMANDS
from pager.errors import ChatMigrated, ConfigError, PagerError, TelegramRefused, Transient
from pager.github import HOOK_WAIT, signing_key
from pager.settings import QUIET_NONE, SECRET_NAMES, Settings, in_parameter_store
from pager.store import ROOT_ITEM, TABLE_ITEM, TABLE_KEY, TABLE_TTL
from pager.sweep.lists import FAILED, NO_ANSWER, outcome_of
from pager.telegram import BOUND
from pager.telegram import may_post as bot_may_post
from pager.values import parse_iso
from pager.words import plural

from .clients import ALLOWED_UPDATES, menu, menu_pairs, no_menu_there, pagers_menu
from .deployment import DEPLOY_FILE, Target, is_placeholder, known
from .manifest import (
    AppPages,
    beyond,
    describe,
    missing_permissions,
    needed_permissions,
    optional_permissions,
    web_root,
)

DAY = 86_400.0
DELIVERY_PAGES = 10  # pages of 100 read for the last day; a busier day is counted as far as they reach
# The settings each call is built from: none is made while the settings line calls one of them malformed
# (GitHub asked with a JWT whose issuer is not an app id, Telegram's getMe with what is no bot token).
GITHUB_CALL = ("GITHUB_APP_ID", "GITHUB_API_URL")
TELEGRAM_CALL = ("TELEGRAM_BOT_TOKEN", "TELEGRAM_API_URL")
APP_PAGE = ("GITHUB_APP_SLUG", "GITHUB_APP_OWNER", "GITHUB_API_URL")  # the app's page on GitHub


@dataclass(frozen=True)
class Check:
    ok: bool | None  # None: skipped
    line: str
    fix: str = ""  # for information: how to change it
    info: bool = False  # information (ℹ): neither holds nor fails


@dataclass
class Facts:
    """What doctor found: values read, and for each thing it could not read, why."""

    target: Target
    values: dict[str, str]
    secrets: dict[str, str]
    now: float
    key_ok: bool = False
    settings_problems: list[str] = field(default_factory=list)
    unread: str = ""  # why the secret could not be read ("" when it could, or was not needed)
    unread_cause: str = ""  # what kept it from being read, for the fix (deployment.unread_cause)
    secret_id: str = ""
    found: dict[str, Any] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    statuses: dict[str, int | None] = field(default_factory=dict)

    unreachable: set[str] = field(default_factory=set)  # read without the service's own answer: no refusal
    local: set[str] = field(default_factory=set)  # not asked at all: pager refused its own setting (the key)
    retry_after: dict[str, float | None] = field(default_factory=dict)

    def read(self, name: str, read: Callable[[], Any]) -> Any:
        try:
            self.found[name] = read()
        except PagerError as exc:
            self.failed(name, exc)
        return self.found.get(name)

    def failed(self, name: str, exc: PagerError) -> None:
        """Why `name` could not be read; a failure a later attempt may fix (no answer, a 5xx, a 429) is not
        the service refusing: no advice to replace a key or a token follows from it."""
        self.errors[name], self.statuses[name] = str(exc), getattr(exc, "status", None)
        if isinstance(exc, Transient):
            self.unreachable.add(name)
            self.retry_after[name] = getattr(exc, "retry_after", None)
        elif isinstance(exc, ConfigError):
            self.local.add(name)

    def get(self, name: str) -> Any:
        return self.found.get(name)

    def setting(self, name: str) -> str:
        return self.values.get(name) or self.secrets.get(name) or ""

    def malformed(self, *names: str) -> list[str]:
        """Those of `names` the settings line calls malformed or out of range (pager.settings' problems name
        the setting first): no link or call is built from them."""
        return [name for name in names if any(problem.startswith((f"{name} ", f"{name}:"))
                                              for problem in self.settings_problems)]

    @property
    def pages(self) -> AppPages:
        """The app's pages on GitHub, for the checks that run once GitHub answered with the app: its own slug
        and owner (before that, the settings': `app_page` says where they may not be used)."""
        app = self.get("app") or {}
        owner = app.get("owner") or {}
        slug, org = ((str(app.get("slug", "")), str(owner.get("login", "")) if owner.get("type") == "Organization" else "")
                     if app else (self.setting("GITHUB_APP_SLUG"), self.setting("GITHUB_APP_OWNER")))
        return AppPages(slug, org, web_root(self.setting("GITHUB_API_URL") or "https://api.github.com"))

    def app_page(self, section: str) -> str:
        """Where a section of the app's settings is on GitHub, for a fix given before GitHub answered with the
        app: "on <its page> (<section>)" from GITHUB_APP_SLUG and GITHUB_APP_OWNER, or, when the slug is not set
        or the settings line calls one of them malformed, the way there (a link built from them leads nowhere)."""
        if is_placeholder(self.setting("GITHUB_APP_SLUG")) or self.malformed(*APP_PAGE):
            return f"on GitHub (Settings → Developer settings → GitHub Apps → the app → {section})"
        return f"on {self.pages.settings} ({section})"


# -- gathering (I/O) ---------------------------------------------------------------------------------------


def gather(target: Target, *, environ: dict[str, str], github: Callable[..., Any], telegram: Callable[..., Any],
           dynamodb: Callable[[], Any] | None, now: float) -> Facts:
    """Everything the checks look at. `github(values, secrets)` and `telegram(values, secrets)` build the
    clients; `dynamodb()` the table's boto3 client (None: no stack)."""
    facts = _read_settings(target, environ, now)
    values, secrets = facts.values, facts.secrets
    if (not is_placeholder(values.get("GITHUB_APP_ID")) and secrets.get("GITHUB_PRIVATE_KEY")
            and not facts.malformed(*GITHUB_CALL)):
        gather_github(facts, github(values, secrets))
    if secrets.get("TELEGRAM_BOT_TOKEN") and not facts.malformed(*TELEGRAM_CALL):
        gather_telegram(facts, telegram(values, secrets))
    if dynamodb is not None and target.stack is not None:
        gather_table(facts, dynamodb(), target.stack.outputs["TableName"])
    return facts


def _read_settings(target: Target, environ: dict[str, str], now: float) -> Facts:
    """The values and secrets as the functions would read them (for a stack, its own: never a shell's secret),
    and every settings problem at once."""
    found = target.values(environ)
    if target.stack is not None:  # the functions see the stack's secret, never a shell's
        found = {k: v for k, v in found.items() if k not in SECRET_NAMES}
    secrets, unread, cause = target.readable_secrets(found)  # a secret that cannot be read skips only what needs it
    values = {k: v for k, v in found.items() if k not in SECRET_NAMES}
    facts = Facts(target, values, secrets, now, unread=unread, unread_cause=cause,
                  secret_id=target.secret.secret_id if target.secret is not None else values.get("PAGER_SECRET_ID", ""))
    facts.key_ok = _key_loads(secrets.get("GITHUB_PRIVATE_KEY", ""))
    # `make serve` makes its own table unless PAGER_TABLE is named (an empty one is missing, as serve says)
    table = {} if target.stack is not None else {"PAGER_TABLE": target.local_table(environ)}
    unchecked = {name: STAND_INS[name] for name in SECRET_NAMES if unread and not secrets.get(name)}
    try:  # read as the functions read them, placeholders as not set: every problem at once
        Settings.from_env({**known(values), **unchecked, **known(secrets), **table}, lambda _: {})
    except ConfigError as exc:
        facts.settings_problems = exc.problems
    return facts


# Stand-ins of the right form for the secrets doctor could not read: the settings line then names what is wrong
# with the rest, after saying that the secret could not be read, rather than calling those secrets missing.
STAND_INS = {"GITHUB_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----", "GITHUB_WEBHOOK_SECRET": "unread",
             "TELEGRAM_BOT_TOKEN": "0:unread", "TELEGRAM_WEBHOOK_SECRET": "unread"}


def gather_github(facts: Facts, client: Any) -> None:
    app = facts.read("app", client.app)
    if app is None:
        return
    hook = facts.read("hook", client.hook_config)
    secret = facts.secrets.get("GITHUB_WEBHOOK_SECRET", "")
    if (hook and hook.get("url") and app.get("events") and secret and not is_placeholder(secret)
            and not facts.malformed("GITHUB_WEBHOOK_SECRET")):  # GitHub delivers there: ping it as GitHub would
        facts.found["ping"] = client.ping_hook(str(hook["url"]), secret, f"doctor-{int(facts.now)}")
    control = facts.values.get("CONTROL_REPOSITORY", "")
    if (control and not facts.malformed("CONTROL_REPOSITORY")
            and facts.read("installation", lambda: client.installation(control)) is not None):
        facts.read("repositories", lambda: client.installation_repositories(facts.found["installation"]["id"]))
    facts.read("deliveries", lambda: recent_deliveries(client, facts.now - DAY))


def recent_deliveries(client: Any, since: float, pages: int = DELIVERY_PAGES) -> tuple[list[dict[str, Any]], bool]:
    """The app's deliveries back to `since` (newest first), and whether the pages reached that far."""
    items: list[dict[str, Any]] = []
    page = client.list_deliveries(per_page=100)
    for number in range(pages):
        for item in page.items:
            delivered = parse_iso(item.get("delivered_at"))
            if delivered is not None and delivered < since:
                return items, True
            items.append(item)
        if not page.next_url:
            return items, True
        if number + 1 < pages:
            page = client.list_deliveries(url=page.next_url)
    return items, False


def gather_telegram(facts: Facts, client: Any) -> None:
    bot = facts.read("bot", client.get_me)
    if bot is None:
        return
    facts.read("webhook_info", client.webhook_info)
    facts.read("default_commands", client.get_my_commands)  # the default scope: every chat without a menu of its own
    chat = facts.values.get("TELEGRAM_CHAT_ID", "")
    if not chat or is_placeholder(chat) or facts.malformed("TELEGRAM_CHAT_ID"):
        return
    try:
        facts.found["member"] = client.chat_member(chat, int(bot["id"]))
    except ChatMigrated as moved:  # the group became a supergroup: look there, and say so
        chat = facts.found["moved"] = moved.to_chat
        facts.read("member", lambda: client.chat_member(chat, int(bot["id"])))
    except PagerError as exc:
        facts.failed("member", exc)
    if (facts.get("member") or {}).get("status") in BOUND:  # no administrator: the group's permissions bind it
        facts.read("chat", lambda: client.chat(chat))
    gather_menu(facts, client, chat)


def gather_menu(facts: Facts, client: Any, chat: str) -> None:
    """The chat's own command menu (getMyCommands in its scope), in the supergroup Telegram made of the group
    when it says so; a channel has none (`channel`)."""
    try:
        facts.found["commands"] = client.get_my_commands(chat=chat)
    except ChatMigrated as moved:
        chat = facts.found.setdefault("moved", moved.to_chat)
        facts.read("commands", lambda: client.get_my_commands(chat=chat))
    except TelegramRefused as exc:
        if no_menu_there(exc):
            facts.found["channel"] = True
        else:
            facts.failed("commands", exc)
    except PagerError as exc:
        facts.failed("commands", exc)
    facts.found["menu_chat"] = chat


def gather_table(facts: Facts, client: Any, table: str) -> None:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        facts.found["table"] = client.describe_table(TableName=table)["Table"]
        facts.found["ttl"] = client.describe_time_to_live(TableName=table).get("TimeToLiveDescription", {})
        # pager's own record of a move of the chat (pager.chat), which the functions learnt from Telegram
        stored = client.get_item(TableName=table, Key={TABLE_KEY: {"S": CHAT_KEY}, TABLE_ITEM: {"S": ROOT_ITEM}})
        move = move_of(json.loads(stored["Item"]["data"]["S"]) if "Item" in stored else {},
                            facts.values.get("TELEGRAM_CHAT_ID", ""))
        if move:
            facts.found.setdefault("moved", str(move["to"]))
    except ClientError as exc:
        facts.errors["table"] = str(exc.response.get("Error", {}).get("Code", "error"))
    except BotoCoreError as exc:
        facts.errors["table"] = type(exc).__name__


def _key_loads(pem: str) -> bool:
    if not pem:
        return False
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        key = signing_key(pem)  # as the functions load it
    except (ValueError, TypeError, UnsupportedAlgorithm):  # never shown: the library's words may quote the key
        return False
    return isinstance(key, rsa.RSAPrivateKey)


# -- the checks (pure) -------------------------------------------------------------------------------------


def checks(facts: Facts) -> list[Check]:
    out = [check_settings(facts), check_deployed(facts)]
    out += [check_app(facts), check_events(facts), check_permissions(facts), check_webhook(facts), check_endpoint(facts)]
    out += [check_installation(facts), check_workflows(facts), check_deliveries(facts)]
    out += [check_bot(facts), check_telegram_webhook(facts), check_telegram_commands(facts), check_chat(facts)]
    out += [check_quiet_hours(facts), check_table(facts)]
    return out


def _skip(what: str, why: str) -> Check:
    return Check(None, f"{what}: skipped ({why})")


def _unread(facts: Facts, name: str) -> str:
    """Why a check that needs the secret `name` cannot run: the secret could not be read, and neither the
    environment nor `.env` gives it ("" when it can run)."""
    return f"needs {name}: {facts.unread}" if facts.unread and not facts.secrets.get(name) else ""


def _malformed(facts: Facts, *names: str) -> str:
    """Why a call was not made: the settings line calls a setting it is built from malformed ("" when none is)."""
    bad = facts.malformed(*names)
    return f"the settings line names what is wrong with {', '.join(bad)}" if bad else ""


def _no_key(facts: Facts) -> str:
    """Why GitHub was not asked for the app: its key could not be read, the app's id or key is not set, or a
    setting the call is built from is malformed."""
    return (_unread(facts, "GITHUB_PRIVATE_KEY") or _malformed(facts, *GITHUB_CALL)
            or "needs GITHUB_APP_ID and GITHUB_PRIVATE_KEY")


def _no_app(facts: Facts) -> str:
    """Why a check of the app was not made: its key could not be read, GitHub was not asked (a malformed
    setting), or it could not be asked for it."""
    return _unread(facts, "GITHUB_PRIVATE_KEY") or _malformed(facts, *GITHUB_CALL) or "the app could not be read"


def _no_bot(facts: Facts) -> str:
    """Why a check of the bot was not made: its token could not be read, Telegram was not asked (a malformed
    token or API URL), or it could not be asked."""
    return _unread(facts, "TELEGRAM_BOT_TOKEN") or _malformed(facts, *TELEGRAM_CALL) or "the bot could not be read"


def _unreachable(facts: Facts, name: str, what: str) -> Check | None:
    """The check's line when `name` could not be read for want of the service's own answer: a network or
    service problem (no answer, a 5xx), a rate limit, or an answer that is not the API's (a wrong URL);
    never a reason to replace a key or a token."""
    if name not in facts.unreachable:
        return None
    service, setting, url = (("GitHub", "GITHUB_API_URL", facts.setting("GITHUB_API_URL") or "https://api.github.com")
                             if what != "telegram" else
                             ("Telegram", "TELEGRAM_API_URL", facts.setting("TELEGRAM_API_URL") or "https://api.telegram.org"))
    status, error = facts.statuses.get(name), facts.errors[name]
    if status is not None and 200 <= status < 300:
        example = " (GitHub Enterprise Server: https://<host>/api/v3)" if service == "GitHub" else ""
        return Check(False, f"{service} could not be asked: what answered at {url} is not its API ({error})",
                     f"check {setting}{example}; nothing to replace")
    if status == 429 or "rate limited" in error:
        wait = facts.retry_after.get(name)
        return Check(False, f"{service} limits the rate of the app's calls: {error}",
                     f"wait{f' {wait:.0f} s' if wait else ''} and run `{facts.target.doctor_command()}` again; nothing to replace")
    page = "https://www.githubstatus.com" if service == "GitHub" else "https://t.me/BotNews"
    why = f"it answered {status}" if status else "no answer"
    return Check(False, f"{service} could not be asked ({why}): {error}",
                 f"nothing to replace: check this machine's network (DNS, proxy, firewall) and that {url} is reachable "
                 f"from it, or {service}'s status ({page}); then run `{facts.target.doctor_command()}` again")


def check_settings(facts: Facts) -> Check:
    """Every problem of the settings in one pass: what is missing, malformed or out of range (pager.settings,
    as the functions read them), and a private key that does not load as RSA."""
    target = facts.target
    where = target.where_all()
    problems = list(facts.settings_problems)
    pem_named = any("GITHUB_PRIVATE_KEY" in p for p in problems) or _unread(facts, "GITHUB_PRIVATE_KEY")
    if not facts.key_ok and not pem_named:
        problems.append("GITHUB_PRIVATE_KEY is not an RSA private key in PEM form")
    if facts.unread:  # the secrets it holds cannot be checked: the checks that need them are skipped below
        others = f"; {'; '.join(problems)}" if problems else "; the other settings are complete and well-formed"
        return Check(False, f"settings: {facts.unread}{others}", _secret_fix(facts))
    if problems:
        missing = any(p.startswith("missing") for p in problems)
        fix = (f"run `{target.setup_command()}`, or set them in {where}" if missing else f"correct them in {where}")
        return Check(False, f"settings: {'; '.join(problems)}", fix)
    return Check(True, f"settings: complete and well-formed, read from {target.describe()}")


def _secret_fix(facts: Facts) -> str:
    """What lets doctor read the secret, by what kept it from it: a JSON object in it, a region, AWS credentials
    at all, credentials that may read it, or AWS's answer. For a stack the functions read it with their own
    role, which this says nothing about; for `.env`, `make serve` reads it as doctor does."""
    target, cause = facts.target, facts.unread_cause
    if cause == "json":
        return (f"the secret {facts.secret_id} must hold a JSON object of {', '.join(SECRET_NAMES)}: run "
                f"`{target.setup_command()}` once it is one, or put them there")
    if cause == "region":
        where = (f"in the environment or in {target.dotenv.name}, where `make serve` reads it too" if target.stack is None
                 else "in the environment")
        return f"set AWS_REGION ({where}), or give the region: `{target.doctor_command('--region', '<region>')}`"
    if cause == "credentials":
        fix = ("sign in to AWS on this machine (`aws sts get-caller-identity` says whether you are, and as whom; "
               f"`aws sso login` or `aws configure`), then run `{target.doctor_command()}` again")
    elif cause == "unreachable":
        fix = f"AWS did not answer: check this machine's network, then run `{target.doctor_command()}` again"
    else:
        may = ("ssm:GetParameter on it and kms:Decrypt of its key" if in_parameter_store(facts.secret_id)
               else "secretsmanager:GetSecretValue on it")
        fix = f"run `{target.doctor_command()}` with AWS credentials that may read the secret ({may})"
    if target.stack is None:
        return fix
    return f"{fix}; the functions read it with their own role, so this says nothing about them"


def check_deployed(facts: Facts) -> Check:
    if facts.target.stack is None:
        return _skip("deployed parameters", facts.target.note or "no stack")
    pending = facts.target.pending()
    if pending:
        return Check(False, f"deployed parameters: samconfig.local.toml has {', '.join(sorted(pending))} the stack does "
                            "not have yet", "run `make deploy`")
    return Check(True, f"deployed parameters: the stack {facts.target.stack.name} has what samconfig.local.toml holds")


def check_app(facts: Facts) -> Check:
    app = facts.get("app")
    if app is None:
        return _app_unread(facts)
    slug, owner = str(app.get("slug", "")), app.get("owner") or {}
    org = owner.get("login", "") if owner.get("type") == "Organization" else ""
    if slug != facts.setting("GITHUB_APP_SLUG") or org != facts.setting("GITHUB_APP_OWNER"):
        return Check(False, f"GitHub App: the key is app {app.get('id')}'s, whose slug is {slug} and owner "
                            f"{org or 'a user'}, but GITHUB_APP_SLUG is {facts.setting('GITHUB_APP_SLUG')} and "
                            f"GITHUB_APP_OWNER {facts.setting('GITHUB_APP_OWNER') or 'empty'}",
                     f"set GITHUB_APP_SLUG={slug} and GITHUB_APP_OWNER={org} in {facts.target.where_settings()}"
                     " (the Advanced page links are built from them)")
    return Check(True, f"GitHub accepts the app's JWT: {slug} (id {app.get('id')})")


def _app_unread(facts: Facts) -> Check:
    """Why the app could not be read with its JWT: no key to sign it, a key that does not load, this machine's
    clock off, GitHub out of reach, or a key that is not the app's."""
    if "app" not in facts.errors:
        return _skip("GitHub App", _no_key(facts))
    if "app" in facts.local:  # GitHub was never asked: the key itself does not load
        why = ("it is the first line of a .pem file alone" if _first_line_alone(facts.secrets.get("GITHUB_PRIVATE_KEY", ""))
               else facts.errors["app"])
        return Check(False, f"GitHub App: GITHUB_PRIVATE_KEY does not load as the app's key ({why})",
                     f"{facts.target.put_key()}; or generate one {facts.app_page('Private keys')}")
    if _clock_off(facts.errors.get("app", "")):
        return Check(False, f"GitHub refuses the app's JWT for its times: {facts.errors['app']}",
                     "this machine's clock is off (the JWT says when it was made and when it expires): set it right "
                     f"(NTP), then run `{facts.target.doctor_command()}` again; the key is fine")
    return _unreachable(facts, "app", "github") or Check(False, f"GitHub refuses the app's JWT: {facts.errors['app']}",
                 f"GITHUB_PRIVATE_KEY must be a key of the app {facts.setting('GITHUB_APP_ID')}: generate one "
                 f"{facts.app_page('Private keys')}, then {facts.target.put_key()}")


def _first_line_alone(pem: str) -> bool:
    """A key that is a .pem file's first line and nothing else: what a reader that ends a value at its line's
    end (`.env` unquoted) makes of a .pem file pasted across lines."""
    return pem.strip().startswith("-----BEGIN") and "\n" not in pem.strip() and "-----END" not in pem


def _clock_off(error: str) -> bool:
    """GitHub's words for a JWT whose `iat` or `exp` this machine's clock set wrong."""
    return "'Expiration time' claim" in error or "'Issued at' claim" in error


def check_events(facts: Facts) -> Check:
    from pager.signals import subscribed_events

    app = facts.get("app")
    if app is None:
        return _skip("events", _no_app(facts))
    held = set(app.get("events") or [])
    needed = set(subscribed_events())
    missing = sorted(needed - held)
    extra = sorted(held - needed)
    if missing:
        return Check(False, f"events: the app does not subscribe to {', '.join(missing)}",
                     f"tick them under Subscribe to events on {facts.pages.permissions} (the webhook must be Active), "
                     "then Save changes")
    note = f"; also {', '.join(extra)}, which pager answers as ignored" if extra else ""
    return Check(True, f"events: the app subscribes to all {len(needed)} the signals need{note}")


def check_permissions(facts: Facts) -> Check:
    app = facts.get("app")
    if app is None:
        return _skip("permissions", _no_app(facts))
    held = app.get("permissions") or {}
    needed = needed_permissions()
    missing = missing_permissions(held, needed)
    more = beyond(held, {**needed, **optional_permissions(workflows=True)})  # an optional one is the operator's choice
    if missing:
        return Check(False, f"permissions: the app lacks {describe(missing)}",
                     f"choose them under Repository permissions on {facts.pages.permissions}, Save changes, then accept "
                     "them for the installation (GitHub asks its owner)")
    note = f"; beyond that it holds {describe(more)} (not needed: you may take it away)" if more else ""
    return Check(True, f"permissions: the app holds all {len(needed)} its calls need{note}")


def check_webhook(facts: Facts) -> Check:
    hook, app = facts.get("hook"), facts.get("app")
    if hook is None or app is None:
        return _skip("webhook", facts.errors.get("hook") or _no_app(facts))
    expected = facts.target.github_webhook_url
    url = str(hook.get("url") or "")
    problems = _webhook_problems(hook, app) + _webhook_url_problems(url, expected)
    if problems:
        return Check(False, f"webhook: {'; '.join(problems)}",
                     f"on {facts.pages.settings}: tick Active, Webhook URL {expected or '<your URL>/github'}, a Webhook "
                     "secret equal to GITHUB_WEBHOOK_SECRET; Save changes")
    if hook.get("content_type") == "form":  # SPEC §4: the endpoint takes a form's `payload=` field as well
        return Check(None, f"webhook: active, form-encoded, signed, at {url}: pager reads the JSON in its payload field",
                     f"nothing to change; for JSON itself, choose Content type application/json on {facts.pages.settings} "
                     "and Save changes", info=True)
    return Check(True, f"webhook: active, JSON, signed, at {url}")


def _webhook_problems(hook: dict[str, Any], app: dict[str, Any]) -> list[str]:
    """What is wrong with the app's webhook but its URL: inactive, neither JSON nor form-encoded (GitHub's two
    content types, both of which pager reads), unverified, unsigned."""
    problems = []
    if not app.get("events"):
        problems.append("not active (the app subscribes to no event)")
    if hook.get("content_type") not in ("json", "form"):
        problems.append(f"content type {hook.get('content_type')}, not json")
    if str(hook.get("insecure_ssl", "0")) != "0":
        problems.append("SSL verification is off")
    if not hook.get("secret"):
        problems.append("no secret: pager refuses unsigned deliveries with 401")
    return problems


def _webhook_url_problems(url: str, expected: str) -> list[str]:
    """Where the app's webhook points, when it is not the stack's /github (or, with no stack, any /github)."""
    if expected and url != expected:
        return [f"it points at {url or 'nothing'}, not at {expected}"]
    if not expected and not url.endswith("/github"):
        return [f"it points at {url or 'nothing'}, not at pager's /github"]
    return []


ENDPOINT = "pager's endpoint"


def check_endpoint(facts: Facts) -> Check:
    """pager's own endpoint as GitHub reaches it: its answer to a `ping` signed with GITHUB_WEBHOOK_SECRET and sent
    as GitHub sends one to the URL the app's webhook delivers to (its hook config; pager.github.ping_hook, the
    sweep's own observation of it). Information, and no ping, where GitHub delivers nothing."""
    hook, app = facts.get("hook"), facts.get("app")
    if hook is None or app is None:
        return _skip(ENDPOINT, facts.errors.get("hook") or (_no_app(facts) if "app" in facts.errors else _no_key(facts)))
    url = str(hook.get("url") or "")
    if not url or not app.get("events"):
        why = ("the app has no webhook URL, so GitHub delivers nothing" if not url else
               f"the app's webhook is not active, so GitHub delivers nothing to {url}")
        return Check(None, f"{ENDPOINT}: not pinged: {why}",
                     f"once the webhook line holds, `{facts.target.doctor_command()}` pings it", info=True)
    if "ping" not in facts.found:
        return _skip(ENDPOINT, _unread(facts, "GITHUB_WEBHOOK_SECRET") or _malformed(facts, "GITHUB_WEBHOOK_SECRET")
                     or "needs GITHUB_WEBHOOK_SECRET")
    return _ping_answered(facts, int(facts.found["ping"]), url)


def _ping_answered(facts: Facts, status: int, url: str) -> Check:
    """What the endpoint's answer to the ping means, as GitHub would take it (2xx passes), with the fix."""
    said = f"{ENDPOINT} answered GitHub's signed ping: {status}"
    if 200 <= status < 300:
        return Check(True, said)
    if status == 401:
        return Check(False, f"{said}: the secret it checks signatures with is not GITHUB_WEBHOOK_SECRET",
                     _secrets_differ(facts, url))
    if status in (403, 404):
        return Check(False, f"{said}: nothing of pager's answers at {url}", _not_pagers(facts, url))
    if status == 0 or status >= 500:
        line = (f"{ENDPOINT} gave no answer to GitHub's signed ping within {HOOK_WAIT:.0f} s" if status == 0
                else f"{said}: the webhook function fails")
        return Check(False, line, f"see why in {_endpoint_log(facts)}; what GitHub delivers meanwhile fails alike, and the "
                                  "sweep brings it back once the endpoint answers"
                                  + ("" if status else f" (no line of the ping there: {url} is not reached)"))
    if status == 429 and facts.target.stack is not None:
        return Check(False, f"{said}: API Gateway throttles what reaches pager",
                     f"a burst passes by itself: run `{facts.target.doctor_command()}` again; if it stays, raise ApiRateLimit "
                     f"or ApiBurstLimit in {DEPLOY_FILE} and `make deploy`")
    if 300 <= status < 400:
        return Check(False, f"{said}: a redirect, which GitHub does not follow: pager never runs",
                     f"give the app's webhook the URL the redirect leads to, on {facts.pages.settings}{_elsewhere(facts, url)}")
    return Check(False, f"{said}: GitHub counts an answer other than 2xx as a failed delivery",
                 f"see why in {_endpoint_log(facts)}{_elsewhere(facts, url)}")


def _secrets_differ(facts: Facts, url: str) -> str:
    """The fix of a ping refused with 401: GitHub signs with the app's Webhook secret, pager checks with
    GITHUB_WEBHOOK_SECRET where the secrets go, and a running pager reads a changed one later."""
    target = facts.target
    reads = ("the functions read a changed secret within ten minutes (at once: docs/operations.md, Changing a secret)"
             if target.stack is not None else "`make serve` reads it when started again")
    return (f"make the app's Webhook secret (on {facts.pages.settings}: GitHub signs with it) and GITHUB_WEBHOOK_SECRET "
            f"in {target.where_secrets()} (pager checks with it) the same; {reads}{_elsewhere(facts, url)}")


def _elsewhere(facts: Facts, url: str) -> str:
    """A note that GitHub delivers elsewhere than the stack's (or the tunnel's) /github ("" when it does not)."""
    expected = facts.target.github_webhook_url
    return f"; GitHub delivers to {url}, not to {expected}: the webhook line says how" if expected and url != expected else ""


def _not_pagers(facts: Facts, url: str) -> str:
    """Where pager's endpoint is, for a ping GitHub's URL answers as no route of pager's: the stack's output
    GitHubWebhookUrl, or for `make serve` the tunnel's /github."""
    target = facts.target
    expected = target.github_webhook_url
    if target.stack is not None and url != expected:
        return (f"GitHub delivers to {url}, the stack's URL is {expected} (its output GitHubWebhookUrl): set the "
                f"Webhook URL on {facts.pages.settings} to it, Save changes")
    if target.stack is not None:
        return f"{url} is the stack's own output GitHubWebhookUrl, yet its API has no such route: `make deploy` again"
    if expected and url != expected:
        return f"GitHub delivers to {url}, not to {expected}: run `{target.setup_command()}`, which sets it"
    return (f"GitHub delivers to {url}: it must be the URL of the tunnel in front of `make serve` with /github, both "
            f"running (`{target.setup_command()}` sets it)")


def _endpoint_log(facts: Facts) -> str:
    """Where pager's endpoint says why it failed: the webhook function's log, or `make serve`'s output."""
    if facts.target.stack is not None:
        return "the webhook function's log (`make logs FUNCTION=WebhookFunction`)"
    return "`make serve`'s output (is it running, and the tunnel in front of it?)"


def check_installation(facts: Facts) -> Check:
    control = facts.values.get("CONTROL_REPOSITORY", "")
    installation = facts.get("installation")
    if facts.get("app") is None:
        return _skip("installation", _no_app(facts))
    if not control or facts.malformed("CONTROL_REPOSITORY"):
        return _skip("installation", _malformed(facts, "CONTROL_REPOSITORY") or "the control repository is unknown")
    if installation is None:
        if facts.statuses.get("installation") == 404:
            return Check(False, f"installation: the app is not installed on the control repository {control}",
                         f"{facts.pages.install} → Only select repositories → the fleet and {control}")
        return (_unreachable(facts, "installation", "github")
                or Check(False, f"installation: {facts.errors.get('installation')}",
                               f"run `{facts.target.doctor_command()}` again"))
    account = (installation.get("account") or {}).get("login", "")
    settings = installation.get("html_url") or facts.pages.install
    if installation.get("suspended_at"):
        return Check(False, f"installation: the installation on {account} is suspended", f"unsuspend it on {settings}")
    unaccepted = missing_permissions(installation.get("permissions") or {}, needed_permissions())
    if unaccepted:
        return Check(False, f"installation: the installation on {account} has not accepted {describe(unaccepted)}",
                     f"accept the app's new permissions on {settings}")
    count = (facts.get("repositories") or {}).get("total_count")
    reach = f"on {plural(count, 'repository', 'repositories')}" if isinstance(count, int) else "(its repositories could not be counted)"
    return Check(True, f"installation: on the control repository {control} and {reach} of {account}")


def check_workflows(facts: Facts) -> Check:
    """Information: whether GitHub lets the app merge a release pull request that changes .github/workflows/
    (the Workflows permission, optional: `pager setup --workflows`), the app's and its installation's."""
    app, installation = facts.get("app"), facts.get("installation")
    if app is None:
        return _skip("workflows", _no_app(facts))
    wanted = optional_permissions(workflows=True)
    refused = "merges of release pull requests that change .github/workflows/ are refused (merge those on GitHub)"
    if missing_permissions(app.get("permissions") or {}, wanted):
        return Check(None, f"workflows: the app lacks {describe(wanted)}, so {refused}; fine when no release "
                           "changes workflows", f"on {facts.pages.permissions}: Repository permissions → Workflows: "
                           "Read and write, Save changes; then the installation's owner accepts it (GitHub asks them)",
                     info=True)
    if installation is not None and missing_permissions(installation.get("permissions") or {}, wanted):
        account = (installation.get("account") or {}).get("login", "")
        return Check(None, f"workflows: the app asks for {describe(wanted)}, but the installation on {account} has not "
                           f"accepted it, so {refused}", f"accept the app's new permissions on "
                           f"{installation.get('html_url') or facts.pages.install}", info=True)
    return Check(True, "workflows: the app holds Workflows (read and write): pager merges release pull requests that "
                       "change .github/workflows/")


@dataclass(frozen=True)
class DeliveryCount:
    total: int
    failed: int
    refused: int  # answered 401: the webhook secrets differ
    kept_failing: int  # events whose last attempt failed after every attempt the sweep makes
    complete: bool


def count_deliveries(items: list[dict[str, Any]], complete: bool, max_attempts: int) -> DeliveryCount:
    """Attempts by outcome (a 2xx passed); an event kept failing when its newest of `max_attempts` attempts or
    more failed as the sweep counts it, or got no answer (the sweep asks for no more: it is in ⚙️ pager)."""
    by_event: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        by_event[str(item.get("guid"))].append(item)

    def status(item: dict[str, Any]) -> int:
        return int(item.get("status_code") or 0)

    def newest(attempts: list[dict[str, Any]]) -> dict[str, Any]:
        return max(attempts, key=lambda attempt: int(attempt.get("id") or 0))

    failed = sum(1 for item in items if not 200 <= status(item) <= 299)
    refused = sum(1 for item in items if status(item) == 401)
    kept_failing = sum(1 for attempts in by_event.values()
                       if len(attempts) >= max_attempts and outcome_of(status(newest(attempts))) in (FAILED, NO_ANSWER))
    return DeliveryCount(len(items), failed, refused, kept_failing, complete)


def check_deliveries(facts: Facts) -> Check:
    found = facts.get("deliveries")
    if found is None:
        why = facts.errors.get("deliveries") or _no_app(facts)
        return _skip("deliveries", why) if "deliveries" not in facts.errors else Check(False, f"deliveries: {why}")
    raw = str(facts.values.get("SWEEP_MAX_ATTEMPTS") or "")
    attempts = int(raw) if raw.isascii() and raw.isdigit() and int(raw) > 0 else 3  # a bad value: the settings line says so
    count = count_deliveries(found[0], found[1], attempts)
    span = "in the last day" if count.complete else f"in the newest {count.total} (more than {DELIVERY_PAGES} pages a day)"
    line = (f"deliveries {span}: {count.total}, {count.failed} failed, {count.refused} refused with 401, "
            f"{count.kept_failing} kept failing")
    if count.refused:
        return Check(False, line, f"GitHub signs with another webhook secret than GITHUB_WEBHOOK_SECRET: make the app's "
                                  f"Webhook secret ({facts.pages.settings}) and the one in {facts.target.where_secrets()} "
                                  f"the same, then Redeliver the refused ones on {facts.pages.advanced}")
    if count.kept_failing:
        return Check(False, line, f"see why on {facts.pages.advanced} and in the webhook function's log; ⚙️ pager's "
                                  "message in the chat lists them")
    if count.total == 0:
        return Check(True, "deliveries in the last day: none (a quiet fleet, or the app is installed nowhere yet)")
    return Check(True, line)


def check_bot(facts: Facts) -> Check:
    bot = facts.get("bot")
    if bot is None and "bot" not in facts.errors:
        return _skip("Telegram bot", _unread(facts, "TELEGRAM_BOT_TOKEN") or _malformed(facts, *TELEGRAM_CALL)
                     or "needs TELEGRAM_BOT_TOKEN")
    if bot is None:
        return _unreachable(facts, "bot", "telegram") or Check(False, f"Telegram refuses the bot token: {facts.errors['bot']}",
                     f"get the token from @BotFather (/token) and put it into {facts.target.where_secrets()}, or run "
                     f"`{facts.target.setup_command()}`")
    return Check(True, f"Telegram accepts the bot token: @{bot.get('username')}")


def check_telegram_webhook(facts: Facts) -> Check:
    info = facts.get("webhook_info")
    if info is None:
        return _skip("Telegram webhook", facts.errors.get("webhook_info") or _no_bot(facts))
    expected = facts.target.telegram_webhook_url
    url = str(info.get("url") or "")
    fix = (f"run `{facts.target.setup_command()}`: it sets the webhook with TELEGRAM_WEBHOOK_SECRET, for button presses "
           "and commands")
    wrong = _telegram_webhook_wrong(info, url, expected)
    if wrong:
        return Check(False, f"Telegram webhook: {wrong}", fix)
    waiting = int(info.get("pending_update_count") or 0)
    return (_telegram_webhook_failed(facts, info, waiting, fix)
            or Check(True, f"Telegram webhook: {url}, button presses and commands allowed, no error in the last day, "
                           f"{waiting} waiting"))


def _telegram_webhook_wrong(info: dict[str, Any], url: str, expected: str) -> str:
    """What keeps button presses or commands from reaching pager: no webhook, one elsewhere than the stack's
    /telegram (or, with no stack, any /telegram), or one that does not allow them; "" when none does."""
    if not url:
        return "none is set, so button presses and commands never reach the pager"
    if (expected and url != expected) or (not expected and not url.endswith("/telegram")):
        return f"it points at {url}, not at {expected or 'pager’s /telegram'}"
    allowed = info.get("allowed_updates")  # absent: Telegram's default, which has both
    missing = [name for name in ALLOWED_UPDATES if allowed is not None and name not in allowed]
    if missing:
        what = " and ".join(UPDATE_WORDS[name] for name in missing)
        return f"{', '.join(missing)} is not among its allowed updates, so {what} never reach the pager"
    return ""


def _telegram_webhook_failed(facts: Facts, info: dict[str, Any], waiting: int, fix: str) -> Check | None:
    """The webhook's last delivery, when it failed in the last day (a wrong secret token, or why the log
    says); None when none did."""
    error_at = float(info.get("last_error_date") or 0)
    if not (error_at and facts.now - error_at < DAY):
        return None
    message = str(info.get("last_error_message") or "")
    line = f"Telegram webhook: its last delivery failed {ago(facts.now - error_at)} ago: {message}; {plural(waiting, 'update waits', 'updates wait')}"
    if "401" in message:
        return Check(False, line + " (the secret token Telegram sends is not TELEGRAM_WEBHOOK_SECRET)", fix)
    return Check(False, line, "see why in the webhook function's log (`make logs FUNCTION=WebhookFunction`)")


UPDATE_WORDS = {"callback_query": "button presses", "message": "the chat's commands"}


def check_telegram_commands(facts: Facts) -> Check:
    """The chat's menu is pager's (in the chat's own scope; a channel takes none), and no other chat shows pager's:
    the default scope, every chat's without a menu of its own, holds none of pager's commands (an earlier setup
    set them there, and every private chat with the bot listed them, each answered "not allowed"). Another
    list there is information: not pager's to remove."""
    chat = facts.get("menu_chat")
    if facts.get("bot") is None or chat is None:
        return _skip("Telegram commands", _no_bot(facts) if facts.get("bot") is None else
                     _malformed(facts, "TELEGRAM_CHAT_ID") or "needs TELEGRAM_CHAT_ID")
    fix = (f"run `{facts.target.setup_command()}`: it sets the commands in the chat (setMyCommands in its scope) and "
           "removes pager's from every other chat (deleteMyCommands)")
    for name in ("commands", "default_commands"):
        if name in facts.errors:
            return (_unreachable(facts, name, "telegram")
                    or Check(False, f"Telegram commands: the menu could not be read: {facts.errors[name]}",
                             f"once the chat line holds, {fix}"))
    wanted = menu(BOT_COMMANDS)
    if facts.get("channel"):
        here = f"none in the channel {chat}, which takes none"
    else:
        listed = menu_pairs(facts.get("commands") or [])
        if listed != list(BOT_COMMANDS):
            differs = "with other descriptions" if menu(listed) == wanted else f"not {wanted}"
            return Check(False, f"Telegram commands: the menu in the chat {chat} lists {menu(listed) or 'nothing'}, {differs}", fix)
        here = f"the menu in the chat {chat} lists {wanted}"
    return _other_chats(facts, here, fix)


def _other_chats(facts: Facts, here: str, fix: str) -> Check:
    """The commands' check once the chat's own menu is right (`here` says it): what every other chat with the
    bot lists (the default scope), which should be none of pager's."""
    default = facts.get("default_commands") or []
    elsewhere = menu(menu_pairs(default))
    if pagers_menu(default):
        return Check(False, f"Telegram commands: {here}, but every other chat with the bot lists {elsewhere} too (the "
                            "default scope), where each is answered “not allowed”", fix)
    if default:
        return Check(None, f"Telegram commands: {here}; every other chat with the bot lists {elsewhere} (the default "
                           "scope), which are not pager's", "deleteMyCommands (no scope) removes them, if the bot is "
                           "pager's alone", info=True)
    return Check(True, f"Telegram commands: {here}; no other chat lists them")


def ago(seconds: float) -> str:
    if seconds < 60:
        return "less than a minute"
    if seconds < 3600:
        return f"{int(seconds // 60)} min"
    return f"{int(seconds // 3600)} h"


def check_chat(facts: Facts) -> Check:
    member = facts.get("member")
    chat = facts.values.get("TELEGRAM_CHAT_ID", "")
    bot = "@" + str((facts.get("bot") or {}).get("username", "the bot"))
    fix = f"add {bot} to the chat {chat} (for a channel: as an administrator that may post messages)"
    moved = facts.get("moved")  # Telegram's answer, or pager's own record of it
    if moved:
        return _chat_moved(facts, chat, moved)
    if member is None and "member" not in facts.errors:
        return _skip("chat", _unread(facts, "TELEGRAM_BOT_TOKEN") or _malformed(facts, *TELEGRAM_CALL, "TELEGRAM_CHAT_ID")
                     or "needs the bot and TELEGRAM_CHAT_ID")
    if member is None:
        return (_unreachable(facts, "member", "telegram")
                or Check(False, f"chat: the bot cannot see the chat {chat}: {facts.errors['member']}", fix))
    if "chat" in facts.errors:  # a member that is no administrator, and the group's permissions not read
        return (_unreachable(facts, "chat", "telegram")
                or Check(False, f"chat: whether the bot may post in the chat {chat} is unknown: {facts.errors['chat']}", fix))
    why = _may_not_post(facts)
    if why == MEMBERS_MAY_NOT_SEND:
        fix = f"allow members to send messages in the group's permissions, or make {bot} an administrator"
    if why:
        return Check(False, f"chat: the bot may not post in the chat {chat} ({why})", fix)
    return Check(True, f"chat: the bot may post in the chat {chat} ({member.get('status')})")


def _chat_moved(facts: Facts, chat: str, moved: Any) -> Check:
    """The chat's line when Telegram made the group a supergroup (`moved`): pager follows it, and says whether
    the bot may post there; TELEGRAM_CHAT_ID should name it."""
    member = facts.get("member")
    why = _may_not_post(facts) if member else None
    where = "" if member is None else f", but the bot may not post there ({why})" if why else ", and the bot may post there"
    return Check(False, f"chat: Telegram made the group {chat} the supergroup {moved}; pager follows it{where}",
                 f"set TELEGRAM_CHAT_ID (the TelegramChatId parameter) to {moved} and deploy again")


MEMBERS_MAY_NOT_SEND = "its members may not send messages"


def _may_not_post(facts: Facts) -> str:
    """Why the bot may not post in the chat, from its ChatMember and the chat's default permissions ("" if it may)."""
    member, info = facts.get("member") or {}, facts.get("chat") or {}
    if bot_may_post(member, info):
        return ""
    own = member.get("status") == "member" or member.get("can_send_messages") is True  # a restriction of its own first
    if member.get("status") in BOUND and own and (info.get("permissions") or {}).get("can_send_messages") is False:
        return MEMBERS_MAY_NOT_SEND
    return f"it is {member.get('status')}"


def check_quiet_hours(facts: Facts) -> Check:
    """Quiet hours as the functions read them: set, or none as chosen (`none`); information when none are set at
    all (empty: a guided deploy's Enter, a setup of before), with how to set them."""
    if any(problem.startswith(("QUIET_HOURS", "TIMEZONE")) for problem in facts.settings_problems):
        return _skip("quiet hours", "the settings line says what is wrong with them")
    hours, zone = facts.values.get("QUIET_HOURS", ""), facts.values.get("TIMEZONE") or "UTC"
    if hours == QUIET_NONE:
        return Check(True, "quiet hours: none, as chosen: what needs you buzzes day and night")
    if hours:
        return Check(True, f"quiet hours: {hours} ({zone}): nothing buzzes inside them, one summary when they end")
    target = facts.target
    names = (("QuietHours", "TimeZone", " (then `make deploy`)") if target.stack is not None
             else ("QUIET_HOURS", "TIMEZONE", ""))
    return Check(None, "quiet hours: none are set, so what needs you buzzes at night too",
                 f"run `{target.setup_command()}`: it asks for them, offering 22:00-07:00 on this machine's clock; or "
                 f"set {names[0]} (such as 22:00-07:00, or none) and {names[1]} (such as Europe/Berlin) in "
                 f"{target.where_settings()}{names[2]}", info=True)


def check_table(facts: Facts) -> Check:
    stack = facts.target.stack
    if stack is None:
        return _skip("table", facts.target.note or "no stack")
    name = stack.outputs["TableName"]
    if "table" in facts.errors:
        return Check(False, f"table: {name} cannot be read ({facts.errors['table']})",
                     "check the stack's resources and your AWS credentials")
    table, ttl = facts.get("table") or {}, facts.get("ttl") or {}
    if table.get("TableStatus") != "ACTIVE":
        return Check(False, f"table: {name} is {table.get('TableStatus')}", "wait for it, or look at the stack's events")
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING") or ttl.get("AttributeName") != TABLE_TTL:
        return Check(False, f"table: {name} has no TTL on `{TABLE_TTL}` (old records are never removed)",
                     f"aws dynamodb update-time-to-live --table-name {name} "
                     f"--time-to-live-specification Enabled=true,AttributeName={TABLE_TTL}")
    return Check(True, f"table: {name} is active, with its TTL on `{TABLE_TTL}`")


# -- the report ----------------------------------------------------------------------------------------------


def report(results: list[Check], line: Callable[[str], None]) -> int:
    """Print the checks; the exit status (0 only when none failed)."""
    for check in results:
        line(f"{_kind(check)} {check.line}")
        if check.fix and _kind(check) in ("✗", "ℹ"):
            line(f"    {'how' if check.info else 'fix'}: {check.fix}")
    count = {kind: sum(1 for check in results if _kind(check) == kind) for kind in ("✓", "✗", "–")}
    held, failed, skipped = count["✓"], count["✗"], count["–"]
    line("")
    line(f"{plural(held, 'check holds', 'checks hold')}, {failed} {'fails' if failed == 1 else 'fail'}"
         + (f", {skipped} skipped" if skipped else "") + ".")
    return 1 if failed else 0


def _kind(check: Check) -> str:
    """A check's mark: holds, fails, skipped, or information (which neither holds nor fails)."""
    if check.info:
        return "ℹ"
    return "✓" if check.ok else "✗" if check.ok is False else "–"
