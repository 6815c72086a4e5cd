"""What the GitHub App must be, derived from pager's own code: one source of truth for its events and permissions.

- Events: the events of the signals table (`pager.signals.subscribed_events`).
- Permissions: the least each subscribed event and each REST call needs, combined. GitHub's docs:
  "Webhook events and payloads" names, for each event, the repository permission a GitHub App needs
  (at least read) to subscribe to it; "Permissions required for GitHub Apps" names the permission of
  each REST endpoint. `CALL_PERMISSIONS` lists every call pager makes with an installation token
  (tests read `pager/github.py` and fail on a call missing here); the calls made with the app's JWT
  (its deliveries, installations and tokens) need no repository permission.
- `PERMISSIONS` is the table of docs/deploy.md ("What the app gets"), row by row, with the reason for
  each: a test renders it and compares it with that page, and checks it is exactly what the events
  and calls need.

The manifest follows GitHub's "Registering a GitHub App from a manifest": name, url (the homepage),
hook_attributes {url, active}, redirect_url, description, public, default_events, default_permissions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from pager.permissions import (  # noqa: F401  (the manifest's permissions; doctor and the tests read them here too)
    ACCESS,
    ACCESS_TITLES,
    ALWAYS,
    CALL_PERMISSIONS,
    EVENT_PERMISSIONS,
    OPTIONAL,
    PERMISSIONS,
    WORKFLOWS,
    Permission,
    beyond,
    missing_permissions,
    needed_permissions,
    optional_permissions,
    stronger,
)


def title(name: str) -> str:
    """A permission as GitHub's form names it."""
    for permission in (*PERMISSIONS, *OPTIONAL):
        if permission.name == name:
            return permission.title
    return name.replace("_", " ").capitalize()


def describe(permissions: dict[str, str]) -> str:
    return ", ".join(f"{title(name)} ({ACCESS_TITLES.get(access, access).lower()})" for name, access in permissions.items())


def web_root(api_url: str) -> str:
    """github.com for api.github.com; a GitHub Enterprise Server's host for its `/api/v3`."""
    parts = urlsplit(api_url.rstrip("/"))
    host = parts.netloc.removeprefix("api.")
    return f"{parts.scheme}://{host}"


def manifest(*, name: str, homepage: str, webhook_url: str, redirect_url: str, workflows: bool = False) -> dict[str, Any]:
    """The GitHub App manifest: its events and permissions from the code, its webhook active at `webhook_url`;
    with `workflows`, Workflows: write too (`default_permissions` names it `workflows`, as GET /app does)."""
    from pager.signals import subscribed_events

    events = subscribed_events()
    return {
        "name": name,
        "url": homepage,
        "description": "pager: pages one maintainer in Telegram for a fleet of repositories.",
        "hook_attributes": {"url": webhook_url, "active": True},
        "redirect_url": redirect_url,
        "public": False,
        "default_events": events,
        "default_permissions": dict(sorted({**needed_permissions(events), **optional_permissions(workflows=workflows)}.items())),
    }


@dataclass(frozen=True)
class AppPages:
    """The app's pages on GitHub, for a user's app or an organization's."""

    slug: str
    org: str = ""
    web: str = "https://github.com"

    @property
    def settings(self) -> str:
        where = f"organizations/{self.org}/settings" if self.org else "settings"
        return f"{self.web}/{where}/apps/{self.slug}"

    @property
    def permissions(self) -> str:
        return f"{self.settings}/permissions"

    @property
    def advanced(self) -> str:
        return f"{self.settings}/advanced"

    @property
    def install(self) -> str:
        return f"{self.web}/apps/{self.slug}/installations/new"

    @property
    def installations(self) -> str:
        """The apps installed on the account, each with Configure (and Uninstall under it): GitHub's "Reviewing
        and modifying installed GitHub Apps" (Settings → Applications → Installed GitHub Apps for a user; the
        organization's Settings → Third-party Access → GitHub Apps)."""
        where = f"organizations/{self.org}/settings" if self.org else "settings"
        return f"{self.web}/{where}/installations"


def new_app_url(web: str, org: str, state: str) -> str:
    """Where the manifest form posts to: the user's new app page, or the organization's."""
    where = f"organizations/{org}/settings" if org else "settings"
    return f"{web}/{where}/apps/new?state={state}"
