"""The permissions a GitHub App needs to run pager, derived from pager's own code: one source of truth.

- `EVENT_PERMISSIONS`: the permission a GitHub App needs (at least read) to subscribe to each event of the
  signals table (GitHub's "Webhook events and payloads").
- `CALL_PERMISSIONS`: every call pager makes with an installation token and the least permission it needs
  ("Permissions required for GitHub Apps"; tests read `pager/github.py` and fail on a call missing here).
  The calls made with the app's JWT (its deliveries, installations and tokens) need no repository permission.
- `PERMISSIONS`: the table of docs/deploy.md ("What the app gets"), row by row, with the reason for each.
- `OPTIONAL`: what pager asks for only when the operator chooses it (`pager setup --workflows`): the table's
  last rows. GitHub refuses to merge a pull request that changes a file under `.github/workflows/` to an app
  without the Workflows permission (GitHub's "Choosing permissions for a GitHub App": an app that edits
  files in `.github/workflows` needs it), so a fleet whose release pull requests change workflows needs it
  for 🔀 Merge; every other fleet is better off without it.

The manifest (`pager.admin.manifest`), `pager doctor` and the sweep (whether an installation would take
a refused signal again) all read them here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ACCESS = {"read": 1, "write": 2, "admin": 3}
ACCESS_TITLES = {"read": "Read-only", "write": "Read and write", "admin": "Admin"}


@dataclass(frozen=True)
class Permission:
    name: str  # as the API says it: a key of the manifest's default_permissions and of GET /app's permissions
    title: str  # as GitHub's form and docs/deploy.md say it
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
    Permission("metadata", "Metadata", "read", "required by GitHub for every app; whether an author is a collaborator "
                                               "(organizations)"),
    Permission("pull_requests", "Pull requests", "read", "pull request events and reviews; reading release pull requests"),
)

WORKFLOWS = Permission("workflows", "Workflows", "write",
                       "only when chosen (`pager setup --workflows`): merging a release pull request that changes "
                       "`.github/workflows/` (GitHub refuses that merge to an app without it)")
OPTIONAL: tuple[Permission, ...] = (WORKFLOWS,)  # the API knows the Workflows permission only as `write`


def optional_permissions(*, workflows: bool) -> dict[str, str]:
    """The optional permissions the operator chose (name -> access)."""
    return {WORKFLOWS.name: WORKFLOWS.access} if workflows else {}


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
    ("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs"): ("checks", "read"),
    ("GET", "/repos/{owner}/{repo}/collaborators/{username}"): ("metadata", "read"),
    ("GET", "/repos/{owner}/{repo}"): ("metadata", "read"),
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


