"""What the GitHub App must be, derived from pager's own code: one source of truth for its events and permissions.

- Events: the events of the signals table (`pager.signals.subscribed_events`).
- Permissions: the least each subscribed event and each REST call needs, combined. GitHub's docs:
  "Webhook events and payloads" names, for each event, the repository permission a GitHub App needs
  (at least read) to subscribe to it; "Permissions required for GitHub Apps" names the permission of
  each REST endpoint. `CALL_PERMISSIONS` lists every call pager makes with an installation token
  (tests read `pager/github.py` and fail on a call missing here); the calls made with the app's JWT
  (its deliveries, installations and tokens) need no repository permission.
- `PERMISSIONS` is the README's table ("Register the GitHub App"), row by row, with the reason for
  each: a test renders it and compares it with the README, and checks it is exactly what the events
  and calls need.

The manifest follows GitHub's "Registering a GitHub App from a manifest": name, url (the homepage),
hook_attributes {url, active}, redirect_url, description, public, default_events, default_permissions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

ACCESS = {"read": 1, "write": 2, "admin": 3}
ACCESS_TITLES = {"read": "Read-only", "write": "Read and write", "admin": "Admin"}


@dataclass(frozen=True)
class Permission:
    name: str  # as the API says it: a key of the manifest's default_permissions and of GET /app's permissions
    title: str  # as GitHub's form and the README say it
    access: str  # "read" or "write"
    why: str


PERMISSIONS: tuple[Permission, ...] = (
    Permission("actions", "Actions", "read", "workflow runs on the default branch (alarm)"),
    Permission("checks", "Checks", "read", "check suites (alarm; a release head's checks)"),
    Permission("security_events", "Code scanning alerts", "read", "code scanning alerts (alarm); reading an alert reopened"),
    Permission("contents", "Contents", "write",
               "`repository_dispatch` to the control repository (`pager-draft`, `pager-fix`); merging a release "
               "(GitHub lists the merge endpoint under Contents: write); release events"),
    Permission("discussions", "Discussions", "read", "discussions and their comments"),
    Permission("issues", "Issues", "read", "issues and their comments"),
    Permission("metadata", "Metadata", "read", "required by GitHub for every app"),
    Permission("pull_requests", "Pull requests", "read", "pull request events and reviews; reading release pull requests"),
)

# The permission a GitHub App needs to subscribe to each event ("Webhook events and payloads").
EVENT_PERMISSIONS: dict[str, str] = {
    "check_suite": "checks",
    "code_scanning_alert": "security_events",
    "discussion": "discussions",
    "discussion_comment": "discussions",
    "issue_comment": "issues",
    "issues": "issues",
    "pull_request": "pull_requests",
    "pull_request_review": "pull_requests",
    "pull_request_review_comment": "pull_requests",
    "release": "contents",
    "workflow_run": "actions",
}

# Each REST call pager makes with an installation token -> the least permission it needs
# ("Permissions required for GitHub Apps"; the merge is listed under Contents: write).
CALL_PERMISSIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("POST", "/repos/{owner}/{repo}/dispatches"): ("contents", "write"),
    ("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge"): ("contents", "write"),
    ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}"): ("pull_requests", "read"),
    ("GET", "/repos/{owner}/{repo}/code-scanning/alerts/{alert_number}"): ("security_events", "read"),
    ("GET", "/installation/repositories"): ("metadata", "read"),
}

ALWAYS = {"metadata": "read"}  # GitHub gives every app Metadata: read


def stronger(a: str | None, b: str | None) -> str | None:
    """The higher of two access levels (None for no access)."""
    return max((a, b), key=lambda level: ACCESS.get(level or "", 0))


def needed_permissions(events: list[str] | None = None) -> dict[str, str]:
    """The least permission set for the subscribed events and the calls pager makes."""
    from pager.signals import subscribed_events

    needed = dict(ALWAYS)
    for event in events if events is not None else subscribed_events():
        name = EVENT_PERMISSIONS[event]  # a KeyError: a new event of the signals table needs its permission here
        needed[name] = stronger(needed.get(name), "read") or "read"
    for name, access in CALL_PERMISSIONS.values():
        needed[name] = stronger(needed.get(name), access) or access
    return dict(sorted(needed.items()))


def missing_permissions(held: dict[str, Any], needed: dict[str, str]) -> dict[str, str]:
    """What `held` lacks of `needed` (name -> the access needed)."""
    return {name: access for name, access in needed.items() if ACCESS.get(str(held.get(name)), 0) < ACCESS[access]}


def beyond(held: dict[str, Any], needed: dict[str, str]) -> dict[str, str]:
    """What `held` gives beyond `needed` (name -> the access held)."""
    return {name: str(access) for name, access in sorted(held.items())
            if ACCESS.get(str(access), 0) > ACCESS.get(needed.get(name, ""), 0)}


def title(name: str) -> str:
    """A permission as GitHub's form names it."""
    for permission in PERMISSIONS:
        if permission.name == name:
            return permission.title
    return name.replace("_", " ").capitalize()


def describe(permissions: dict[str, str]) -> str:
    return ", ".join(f"{title(name)} ({ACCESS_TITLES.get(access, access).lower()})" for name, access in permissions.items())


def permissions_table() -> list[str]:
    """The README's table of permissions, as markdown lines."""
    lines = ["| permission | access | why |", "|---|---|---|"]
    lines += [f"| {p.title} | {ACCESS_TITLES[p.access]} | {p.why} |" for p in PERMISSIONS]
    return lines


def web_root(api_url: str) -> str:
    """github.com for api.github.com; a GitHub Enterprise Server's host for its `/api/v3`."""
    parts = urlsplit(api_url.rstrip("/"))
    host = parts.netloc.removeprefix("api.")
    return f"{parts.scheme}://{host}"


def manifest(*, name: str, homepage: str, webhook_url: str, redirect_url: str) -> dict[str, Any]:
    """The GitHub App manifest: its events and permissions from the code, its webhook active at `webhook_url`."""
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
        "default_permissions": needed_permissions(events),
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


def new_app_url(web: str, org: str, state: str) -> str:
    """Where the manifest form posts to: the user's new app page, or the organization's."""
    where = f"organizations/{org}/settings" if org else "settings"
    return f"{web}/{where}/apps/new?state={state}"
