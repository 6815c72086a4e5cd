"""Settings: the operator contract of SPEC §3, read from the environment and the secret.

A secret set directly in the environment wins over the Secrets Manager secret named by
`PAGER_SECRET_ID` (local runs and tests). The secret is a JSON object whose keys are the secret
names below; Powertools Parameters reads and caches it. A missing required setting raises
`ConfigError` naming it, never showing a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .errors import ConfigError

SECRET_NAMES = (
    "GITHUB_PRIVATE_KEY",
    "GITHUB_WEBHOOK_SECRET",
    "TELEGRAM_BOT_TOKEN",
    "TELEGRAM_WEBHOOK_SECRET",
)

MERGE_METHODS = ("merge", "squash", "rebase")

SecretReader = Callable[[str], Mapping[str, Any]]


def read_secret_with_powertools(secret_id: str) -> Mapping[str, Any]:
    """The secret's JSON object, cached by Powertools for five minutes across warm invocations."""
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(secret_id, transform="json", max_age=300)
    if not isinstance(value, Mapping):
        raise ConfigError(f"secret {secret_id} is not a JSON object")
    return value


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
    sweep_call_budget: int = 50
    sweep_max_redeliveries: int = 10
    sweep_max_attempts: int = 3
    sweep_window_minutes: int = 180
    sweep_failure_pages: int = 3
    sweep_all_pages: int = 20

    @property
    def advanced_page(self) -> str:
        """The app's Advanced page, where GitHub shows its recent deliveries."""
        if self.github_app_owner:
            return f"https://github.com/organizations/{self.github_app_owner}/settings/apps/{self.github_app_slug}/advanced"
        return f"https://github.com/settings/apps/{self.github_app_slug}/advanced"

    @classmethod
    def from_env(cls, env: Mapping[str, str], read_secret: SecretReader = read_secret_with_powertools) -> "Settings":
        secrets: dict[str, str] = {}
        missing = [name for name in SECRET_NAMES if not env.get(name)]
        if missing and env.get("PAGER_SECRET_ID"):
            stored = read_secret(env["PAGER_SECRET_ID"])
            secrets = {name: str(stored[name]) for name in missing if stored.get(name)}

        def required(name: str) -> str:
            value = env.get(name) or secrets.get(name)
            if not value:
                where = " (nor in the secret PAGER_SECRET_ID)" if name in SECRET_NAMES else ""
                raise ConfigError(f"missing required setting {name}{where}")
            return value

        def number(name: str, default: int, minimum: int = 0) -> int:
            raw = env.get(name, "").strip()
            if not raw:
                return default
            try:
                value = int(raw)
            except ValueError:
                raise ConfigError(f"setting {name} must be a whole number") from None
            if value < minimum:
                raise ConfigError(f"setting {name} must be at least {minimum}")
            return value

        def users(raw: str) -> frozenset[int]:
            try:
                return frozenset(int(part) for part in raw.split(",") if part.strip())
            except ValueError:
                raise ConfigError("setting TELEGRAM_ALLOWED_USERS must be comma-separated user ids") from None

        method = env.get("RELEASE_MERGE_METHOD", "").strip() or "squash"
        if method not in MERGE_METHODS:
            raise ConfigError(f"setting RELEASE_MERGE_METHOD must be one of {', '.join(MERGE_METHODS)}")
        control = required("CONTROL_REPOSITORY")
        if control.count("/") != 1:
            raise ConfigError("setting CONTROL_REPOSITORY must be owner/name")
        prefixes = env.get("RELEASE_BRANCH_PREFIXES")
        thread = env.get("TELEGRAM_THREAD_ID", "").strip()
        return cls(
            table=required("PAGER_TABLE"),
            github_app_id=required("GITHUB_APP_ID"),
            github_app_slug=required("GITHUB_APP_SLUG"),
            github_app_owner=env.get("GITHUB_APP_OWNER", "").strip(),
            github_private_key=required("GITHUB_PRIVATE_KEY"),
            github_webhook_secret=required("GITHUB_WEBHOOK_SECRET"),
            telegram_bot_token=required("TELEGRAM_BOT_TOKEN"),
            telegram_webhook_secret=required("TELEGRAM_WEBHOOK_SECRET"),
            telegram_chat_id=required("TELEGRAM_CHAT_ID"),
            telegram_thread_id=number("TELEGRAM_THREAD_ID", 0) or None if thread else None,
            telegram_allowed_users=users(env.get("TELEGRAM_ALLOWED_USERS", "")),
            control_repository=control,
            github_api_url=(env.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            telegram_api_url=(env.get("TELEGRAM_API_URL") or "https://api.telegram.org").rstrip("/"),
            release_branch_prefixes=tuple(
                p.strip() for p in (prefixes if prefixes is not None else "release-please--,changeset-release/").split(",") if p.strip()
            ),
            release_merge_method=method,
            sweep_call_budget=number("SWEEP_CALL_BUDGET", 50, 1),
            sweep_max_redeliveries=number("SWEEP_MAX_REDELIVERIES", 10),
            sweep_max_attempts=number("SWEEP_MAX_ATTEMPTS", 3, 1),
            sweep_window_minutes=number("SWEEP_WINDOW_MINUTES", 180, 1),
            sweep_failure_pages=number("SWEEP_FAILURE_PAGES", 3, 1),
            sweep_all_pages=number("SWEEP_ALL_PAGES", 20, 1),
        )._checked()

    def _checked(self) -> "Settings":
        """A budget that cannot fit a page of each list, the redeliveries and the alarm's change would
        leave every run without room to ask for anything: refused, as a setting that cannot be right."""
        least = self.sweep_failure_pages + 1 + self.sweep_max_redeliveries + 1
        if self.sweep_call_budget < least:
            raise ConfigError(f"setting SWEEP_CALL_BUDGET must be at least {least} (SWEEP_FAILURE_PAGES, a page of "
                              "every outcome, SWEEP_MAX_REDELIVERIES and the alarm's change)")
        return self
