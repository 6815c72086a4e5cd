"""What the signals share: reading payloads (who is outside, order keys, release pull requests) and
formatting messages (HTML with user text escaped, the repository and a link in each).

All of it is pure: payload and settings in, values out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..html import escape, link
from ..settings import Settings
from ..values import field, text

INSIDE = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
EXCERPT = 300  # characters of a contribution's text shown in its message


def is_bot(user: Any) -> bool:
    """A bot: GitHub says type Bot, or its login ends in [bot]."""
    if not isinstance(user, Mapping):
        return False
    return user.get("type") == "Bot" or text(user.get("login")).lower().endswith("[bot]")


def is_outside(association: Any, *users: Any) -> bool:
    """Someone from outside as the payload says: not OWNER, MEMBER or COLLABORATOR, and none of `users` a bot."""
    return text(association).upper() not in INSIDE and not any(is_bot(user) for user in users)


def needs_confirming(association: Any, payload: Any) -> bool:
    """Whether "outside" must be confirmed with GitHub before a page. GitHub computes `author_association`
    without a viewer: in a repository owned by an organization, a private member (membership is private
    by default) or someone with access through a team arrives as CONTRIBUTOR, NONE or FIRST_TIME_*; and
    an absent association (discussions may omit it) says nothing at all."""
    return not text(association) or field(payload, "repository", "owner", "type") == "Organization"


def repo_url(repository: str, payload: Any = None) -> str:
    url = field(payload, "repository", "html_url")
    return url if isinstance(url, str) and url else f"https://github.com/{repository}"


def repo_link(repository: str, payload: Any = None) -> str:
    return link(repo_url(repository, payload), repository)


def excerpt(value: Any, limit: int = EXCERPT) -> str:
    """The start of a user's text, whitespace folded, escaped for HTML."""
    words = " ".join(text(value).split())
    if len(words) > limit:
        words = words[: limit - 1].rstrip() + "…"
    return escape(words)


def default_branch(payload: Any) -> str:
    return text(field(payload, "repository", "default_branch"))


def is_release_pull(pull: Any, payload: Any, settings: Settings) -> bool:
    """A release pull request: head branch with a release prefix, in the repository itself (a fork's
    branch of the same name is someone's contribution), base the default branch."""
    head = text(field(pull, "head", "ref"))
    base = text(field(pull, "base", "ref"))
    branch = default_branch(payload)
    if not (bool(branch) and base == branch and any(head.startswith(p) for p in settings.release_branch_prefixes if p)):
        return False
    head_side = field(pull, "head")
    if isinstance(head_side, Mapping) and "repo" in head_side:  # null: the fork was deleted
        return text(field(head_side, "repo", "full_name")).lower() == text(field(payload, "repository", "full_name")).lower()
    return True  # a pull request that does not say where its head lives (a partial payload)
