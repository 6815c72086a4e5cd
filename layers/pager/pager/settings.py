"""Settings: the operator contract, read from the environment and the secrets' store.

A secret set directly in the environment wins over the store named by `PAGER_SECRET_ID` (local runs
and tests): a Parameter Store SecureString (the stack's, `/pager/<stack>/secrets`) or a Secrets Manager
secret, a JSON object whose keys are the secret names below; Powertools Parameters reads and caches it. Every missing, malformed or out-of-range
setting is named in one `ConfigError` (its `problems`), never showing a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from . import redact
from .attention import QuietHours
from .errors import ConfigError, SecretsUnavailable

SECRET_NAMES = (
    "GITHUB_PRIVATE_KEY",
    "GITHUB_WEBHOOK_SECRET",
    "TELEGRAM_BOT_TOKEN",
    "TELEGRAM_WEBHOOK_SECRET",
)

MERGE_METHODS = ("merge", "squash", "rebase")
# A failing run that passes again within this long never buzzes (docs/attention.md says how it was chosen).
ALARM_GRACE_MINUTES = 15
BUZZ_GAP_MINUTES = 120  # chosen from the bench's busy week: docs/benchmarks.md, the phone's rest
BUZZ_GAP_MAX_MINUTES = 24 * 60
# QUIET_HOURS chosen to be none (`pager setup` keeps the choice so; empty is none too, but not chosen yet)
QUIET_NONE = "none"
# The sweep's limits (docs/sweep.md, "Limits"): sized for Lambda and GitHub, not the Workers plan the decision
# was written for. A run's calls stay inside its 150 s deadline (a page of 100 deliveries takes well under
# half a second); an hour's, four runs and sixty minutes of redeliveries, inside the 5,000 an hour GitHub
# grants an installation at least; a minute's redeliveries far inside GitHub's secondary limits (900 points
# a minute per endpoint, 5 a POST; 80 content-creating requests a minute).
SWEEP_CALL_BUDGET = 400  # calls of one run, GitHub and Telegram together
SWEEP_MAX_REDELIVERIES = 40  # redeliveries a minute: a run asks for its first minute's, each check for its own
SWEEP_ALL_PAGES = 250  # pages of the every-outcome list one run reads (a pass goes on in the next run)
SWEEP_FAILURE_PAGES = 30  # pages of the failure list one run reads, until it was read back to GitHub's three days

SecretReader = Callable[[str], Mapping[str, Any]]


def in_parameter_store(secret_id: str) -> bool:
    """Whether PAGER_SECRET_ID names a Parameter Store parameter (a name starting with /, as the stack's
    does) rather than a Secrets Manager secret (its ARN or name)."""
    return secret_id.startswith("/")


def read_secret_with_powertools(secret_id: str) -> Mapping[str, Any]:
    """The secrets' JSON object, cached by Powertools for five minutes across warm invocations: from the
    Parameter Store SecureString named `secret_id` (a name starting with /, as the stack sets it), or
    from a Secrets Manager secret (its ARN or name)."""
    from aws_lambda_powertools.utilities import parameters

    try:
        with redact.withheld():  # botocore at DEBUG would log the answer whole, before its values are registered
            if in_parameter_store(secret_id):
                value = parameters.get_parameter(secret_id, decrypt=True, transform="json", max_age=300)
            else:
                value = parameters.get_secret(secret_id, transform="json", max_age=300)
    except parameters.exceptions.TransformParameterError:
        raise ConfigError(f"the secret {secret_id} is not a JSON object") from None
    except parameters.exceptions.GetParameterError as exc:
        if "NotFound" in str(exc):  # ParameterNotFound, ResourceNotFoundException: never written
            raise ConfigError(f"the secret {secret_id} does not exist yet: run `make setup`") from None
        if "AccessDenied" in str(exc):  # a setting a retry cannot fix: the function may not read it
            raise ConfigError(f"the secret {secret_id} may not be read: {_error_code(exc)}") from None
        # Throttled (Parameter Store's standard throughput is shared by the account) or failing: a later
        # attempt can read it.
        raise SecretsUnavailable(f"the secret {secret_id} could not be read now: {_error_code(exc)}") from None
    if not isinstance(value, Mapping):
        raise ConfigError(f"the secret {secret_id} is not a JSON object")
    return value


def _error_code(exc: Exception) -> str:
    """The AWS error's code from Powertools' wrapped message (the rest may quote the request)."""
    found = re.search(r"\(([A-Za-z]+(?:Exception)?)\)", str(exc))
    return found.group(1) if found else type(exc).__name__


@dataclass(frozen=True)
class Settings:
    table: str
    github_app_id: str
    github_app_slug: str
    github_private_key: str = field(repr=False)
    github_webhook_secret: str = field(repr=False)
    telegram_bot_token: str = field(repr=False)
    telegram_webhook_secret: str = field(repr=False)
    telegram_chat_id: str
    control_repository: str
    github_app_owner: str = ""
    telegram_thread_id: int | None = None
    telegram_allowed_users: frozenset[int] = frozenset()
    github_api_url: str = "https://api.github.com"
    telegram_api_url: str = "https://api.telegram.org"
    release_branch_prefixes: tuple[str, ...] = ("release-please--", "changeset-release/")
    release_merge_method: str = "squash"
    sweep_call_budget: int = SWEEP_CALL_BUDGET
    sweep_max_redeliveries: int = SWEEP_MAX_REDELIVERIES
    sweep_max_attempts: int = 3
    sweep_window_minutes: int = 180
    sweep_failure_pages: int = SWEEP_FAILURE_PAGES
    sweep_all_pages: int = SWEEP_ALL_PAGES
    alarm_grace_minutes: int = ALARM_GRACE_MINUTES
    buzz_gap_minutes: int = BUZZ_GAP_MINUTES
    quiet_hours: str = ""  # HH:MM-HH:MM in `timezone`, "" for none (pager.attention.QuietHours)
    timezone: str = "UTC"

    @property
    def zone(self) -> tzinfo:
        """TIMEZONE: where the maintainer's clock is (quiet hours, and the times the chat shows)."""
        return ZoneInfo(self.timezone)

    @property
    def quiet(self) -> QuietHours | None:
        return QuietHours.parse(self.quiet_hours, self.zone)

    @property
    def alarm_grace(self) -> float:
        return self.alarm_grace_minutes * 60.0

    @property
    def buzz_gap(self) -> float:
        """BUZZ_GAP_MINUTES: how long the phone rests after a call (pager.attention.rest_of), in seconds."""
        return self.buzz_gap_minutes * 60.0

    @property
    def advanced_page(self) -> str:
        """The app's Advanced page, where GitHub shows its recent deliveries."""
        return self._app_page("advanced")

    @property
    def permissions_page(self) -> str:
        """The app's Permissions & events page, where its owner chooses its permissions (Workflows among them)."""
        return self._app_page("permissions")

    def _app_page(self, page: str) -> str:
        if self.github_app_owner:
            return f"https://github.com/organizations/{self.github_app_owner}/settings/apps/{self.github_app_slug}/{page}"
        return f"https://github.com/settings/apps/{self.github_app_slug}/{page}"

    @classmethod
    def from_env(cls, env: Mapping[str, str], read_secret: SecretReader = read_secret_with_powertools) -> Settings:
        """The settings, or one `ConfigError` naming every problem at once (`problems`: missing, malformed,
        out of range), never a value."""
        secrets, unread = _stored_secrets(env, read_secret)
        read = _Reader({**{k: v for k, v in env.items() if isinstance(v, str)}, **secrets})
        # From now on no log line shows them, whatever logger writes it (pager.redact), valid or not.
        redact.register(*(read.env.get(name) for name in SECRET_NAMES))
        if unread:
            read.problems.append(unread)
        budget = read.number("SWEEP_CALL_BUDGET", SWEEP_CALL_BUDGET, 1)
        # a longer rest, or grace, would leave what it keeps, or an alarm, uncalled for days
        gap = read.number("BUZZ_GAP_MINUTES", BUZZ_GAP_MINUTES, 0, BUZZ_GAP_MAX_MINUTES, " (a day)")
        redeliveries = read.number("SWEEP_MAX_REDELIVERIES", SWEEP_MAX_REDELIVERIES, 0)
        values = dict(
            table=read.required("PAGER_TABLE"),
            github_app_id=read.required("GITHUB_APP_ID", APP_ID, "an app id (a number)"),
            github_app_slug=read.required("GITHUB_APP_SLUG", APP_SLUG, "an app's slug (lowercase letters, digits, hyphens)"),
            github_app_owner=read.optional("GITHUB_APP_OWNER", LOGIN, "an organization's login"),
            github_private_key=read.required("GITHUB_PRIVATE_KEY", PEM, "a private key in PEM form (-----BEGIN …)"),
            github_webhook_secret=read.required("GITHUB_WEBHOOK_SECRET"),
            telegram_bot_token=read.required("TELEGRAM_BOT_TOKEN", BOT_TOKEN, "a bot token (digits:letters)"),
            telegram_webhook_secret=read.required("TELEGRAM_WEBHOOK_SECRET", SECRET_TOKEN,
                                                  "A-Z a-z 0-9 _ - only, 1 to 256 of them"),
            telegram_chat_id=read.required("TELEGRAM_CHAT_ID", CHAT_ID, "a chat id (a number, -100… for a supergroup or channel) or @channelname"),
            telegram_thread_id=read.number("TELEGRAM_THREAD_ID", 0, 0) or None,  # 0: no topic
            telegram_allowed_users=read.user_ids("TELEGRAM_ALLOWED_USERS"),
            control_repository=read.required("CONTROL_REPOSITORY", REPOSITORY, "owner/name of a GitHub repository"),
            github_api_url=read.url("GITHUB_API_URL", "https://api.github.com"),
            telegram_api_url=read.url("TELEGRAM_API_URL", "https://api.telegram.org"),
            release_branch_prefixes=_prefixes(env.get("RELEASE_BRANCH_PREFIXES")),
            release_merge_method=read.choice("RELEASE_MERGE_METHOD", MERGE_METHODS, "squash"),
            sweep_call_budget=budget,
            sweep_max_redeliveries=redeliveries,
            sweep_max_attempts=read.number("SWEEP_MAX_ATTEMPTS", 3, 1),
            sweep_window_minutes=read.number("SWEEP_WINDOW_MINUTES", 180, 1),
            sweep_failure_pages=read.number("SWEEP_FAILURE_PAGES", SWEEP_FAILURE_PAGES, 1),
            sweep_all_pages=read.number("SWEEP_ALL_PAGES", SWEEP_ALL_PAGES, 1),
            alarm_grace_minutes=read.number("ALARM_GRACE_MINUTES", ALARM_GRACE_MINUTES, 0, BUZZ_GAP_MAX_MINUTES, " (a day)"),
            buzz_gap_minutes=gap,
            timezone=(zone := read.zone("TIMEZONE")),
            quiet_hours=read.quiet_hours("QUIET_HOURS", zone),
        )
        if not read.all_problems():
            least = 1 + redeliveries + 1 + 5 + 4
            if budget < least:  # no run would have room to ask for anything, or to see pager's own health
                read.problems.append(f"SWEEP_CALL_BUDGET must be at least {least} (a page of the deliveries, "
                                     "SWEEP_MAX_REDELIVERIES, the alarm's change, five entries' names, and four "
                                     "calls for pager's own health: whether refusers answer, a page of a ↻ job)")
        problems = read.all_problems()
        if problems:
            raise ConfigError("settings: " + "; ".join(problems), problems=problems)
        return cls(**values)  # type: ignore[arg-type]


def _stored_secrets(env: Mapping[str, str], read_secret: SecretReader) -> tuple[dict[str, str], str]:
    """The secrets the environment does not set, from the store PAGER_SECRET_ID names (none when it names
    none or the environment sets them all), and why that store could not be read ("" when it could)."""
    missing = [name for name in SECRET_NAMES if not env.get(name)]
    if not (missing and env.get("PAGER_SECRET_ID")):
        return {}, ""
    try:
        stored = read_secret(env["PAGER_SECRET_ID"])
    except ConfigError as exc:
        return {}, str(exc)
    return {name: str(stored[name]) for name in missing if stored.get(name)}, ""


def _prefixes(value: str | None) -> tuple[str, ...]:
    """RELEASE_BRANCH_PREFIXES, comma-separated: release-please's and Changesets' when it is not set, none
    when it is set empty."""
    listed = value if value is not None else "release-please--,changeset-release/"
    return tuple(p.strip() for p in listed.split(",") if p.strip())


# The forms a setting must have, from their owners' documentation, kept as wide as what exists: GitHub's
# logins (letters, digits and hyphens, 39 at most; accounts older than today's sign-up rules may start or
# end with a hyphen or hold two in a row, and Enterprise Managed Users' carry an underscore) and
# repository names (ASCII letters, digits, ".", "-" and "_", 100 at most, not "." nor ".."); an app's slug
# is its name made lowercase with hyphens; the Bot API's setWebhook `secret_token` ("1-256 characters.
# Only characters A-Z, a-z, 0-9, _ and - are allowed"), its chat ids (an integer, or @channelusername)
# and bot tokens (`123456:ABC-DEF…`, BotFather). A private key is what `cryptography` loads: its PEM
# header anywhere (openssl's "Bag Attributes" may come first, an editor's byte order mark too).
# template.yaml's AllowedPattern of each parameter says the same, so that a deploy refuses what the
# functions would.
LOGIN = re.compile(r"[A-Za-z0-9_-]{1,39}")
USER_IDS = re.compile(r"( *[0-9]+ *(, *[0-9]+ *)*)?")  # Telegram user ids, comma-separated
REPOSITORY = re.compile(LOGIN.pattern + r"/(?!\.\.?$)[A-Za-z0-9._-]{1,100}")
APP_ID = re.compile(r"[0-9]+|Iv[0-9A-Za-z.]+")  # the app's id, or its client id (GitHub takes either as a JWT's issuer)
APP_SLUG = re.compile(r"[a-z0-9][a-z0-9-]*")
DIGITS = re.compile(r"[0-9]{1,18}")  # a whole number as the template's patterns take it (and no wider than a table takes)
PEM = re.compile(r".*-----BEGIN [A-Z ]*PRIVATE KEY-----.*", re.DOTALL)
BOT_TOKEN = re.compile(r"[0-9]+:[A-Za-z0-9_-]+")
SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
CHAT_ID = re.compile(r"-?[0-9]+|@[A-Za-z][A-Za-z0-9_]{3,31}")
LOOPBACK = ("127.0.0.1", "localhost", "::1")  # plain http only to this machine (the local demo's fakes)


class _Reader:
    """Reads the settings from `env`, noting each problem instead of stopping at the first."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env
        self.missing: list[str] = []  # required settings not set
        self.problems: list[str] = []  # what is set but cannot be right

    def all_problems(self) -> list[str]:
        """What is missing first, in one line, then each setting that cannot be right."""
        secrets = [name for name in self.missing if name in SECRET_NAMES]
        store = self.env.get("PAGER_SECRET_ID")
        where = f" ({', '.join(secrets)}: nor in the secret {store})" if secrets and store else ""
        return ([f"missing {', '.join(self.missing)}{where}"] if self.missing else []) + self.problems

    def _raw(self, name: str) -> str:
        return (self.env.get(name) or "").strip()

    def required(self, name: str, form: re.Pattern[str] | None = None, what: str = "") -> str:
        value = self.env.get(name) or ""
        if name != "GITHUB_PRIVATE_KEY":
            value = value.strip()  # a token pasted with its line's end
        if not value.strip():
            self.missing.append(name)
        elif form is not None and not form.fullmatch(value):
            self.problems.append(f"{name} is not {what}")
        return value

    def optional(self, name: str, form: re.Pattern[str], what: str) -> str:
        value = self._raw(name)
        if value and not form.fullmatch(value):
            self.problems.append(f"{name} is not {what}")
        return value

    def number(self, name: str, default: int, minimum: int, maximum: int | None = None, why: str = "") -> int:
        """A whole number written with the digits 0-9 only (the template's pattern: never '+5', '5_0' or another
        script's digits, which Python's int() would take), within its range."""
        raw = self._raw(name)
        if not raw:
            return default
        if not DIGITS.fullmatch(raw):
            self.problems.append(f"{name} must be a whole number")
            return default
        value = int(raw)
        if value < minimum:
            self.problems.append(f"{name} must be at least {minimum}")
            return default
        if maximum is not None and value > maximum:
            self.problems.append(f"{name} must be at most {maximum}{why}")
            return default
        return value

    def user_ids(self, name: str) -> frozenset[int]:
        raw = self.env.get(name) or ""
        parts = [part.strip(" ") for part in raw.split(",")] if raw else []
        if not USER_IDS.fullmatch(raw):  # as the template's pattern: no empty item ("1,2,"), spaces only around
            self.problems.append(f"{name} must be comma-separated user ids (numbers)")
            return frozenset()
        return frozenset(int(part) for part in parts)

    def url(self, name: str, default: str) -> str:
        value = (self._raw(name) or default).rstrip("/")
        try:
            parts = urlsplit(value)
            host = parts.hostname or ""
        except ValueError:  # a malformed port or IPv6 address
            host = ""
        if not host or not (parts.scheme == "https" or (parts.scheme == "http" and host in LOOPBACK)):
            self.problems.append(f"{name} must be an https URL (plain http only to this machine)")
        return value

    def zone(self, name: str) -> str:
        """An IANA time zone name (tz database: "Europe/Berlin", "UTC")."""
        value = self._raw(name) or "UTC"
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            self.problems.append(f"{name} is not a time zone of the IANA database (such as Europe/Berlin)")
            return "UTC"
        return value

    def quiet_hours(self, name: str, zone: str) -> str:
        value = self._raw(name)
        if value == QUIET_NONE:  # none, as chosen
            return ""
        try:
            QuietHours.parse(value, ZoneInfo(zone))
        except ValueError as exc:
            self.problems.append(f"{name}: {exc} (such as 22:00-07:00), or none")
            return ""
        return value

    def choice(self, name: str, choices: tuple[str, ...], default: str) -> str:
        value = self._raw(name) or default
        if value not in choices:
            self.problems.append(f"{name} must be one of {', '.join(choices)}")
            return default
        return value
