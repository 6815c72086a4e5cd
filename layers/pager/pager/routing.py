"""Which handler acts on which webhook event, and which events a newer one can overtake.

Handlers register themselves with `@registry.on("event", "action", ...)`; the webhook looks them up
by event and action. The registry is also what the app subscribes to: every registered event but
`ping` must be in exactly one of `SUPERSEDED` (a newer passed delivery of the same event and
repository makes an older failed one stale, so the sweep does not deliver it again) and
`ALWAYS_AGAIN` (comments overtake nothing and always come again). tests/test_routing.py fails
until a new event kind is placed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable

# Event kinds whose failed delivery is stale once a newer delivery of the same event and repository
# passed (the decision, amendment: "the newer one stands").
SUPERSEDED = frozenset(
    {
        "workflow_run",
        "check_suite",
        "check_run",
        "code_scanning_alert",
        "issues",
        "pull_request",
        "discussion",
        "release",
    }
)

# Event kinds that overtake nothing and always come again.
ALWAYS_AGAIN = frozenset(
    {
        "issue_comment",
        "discussion_comment",
        "pull_request_review_comment",
        "pull_request_review",
    }
)


@dataclass(frozen=True)
class Delivery:
    """A verified webhook delivery: the event's guid, kind, action and parsed payload."""

    guid: str
    event: str
    payload: dict[str, Any]
    hook_id: str = ""

    @property
    def action(self) -> str | None:
        action = self.payload.get("action")
        return action if isinstance(action, str) else None

    @property
    def repository(self) -> str:
        repo = self.payload.get("repository") or {}
        return repo.get("full_name", "") if isinstance(repo, dict) else ""

    @property
    def repository_id(self) -> int | None:
        repo = self.payload.get("repository") or {}
        return repo.get("id") if isinstance(repo, dict) else None

    @property
    def installation_id(self) -> int | None:
        installation = self.payload.get("installation") or {}
        return installation.get("id") if isinstance(installation, dict) else None


Handler = Callable[..., str]


class Registry:
    """Handlers by event and action; an action of None matches every action of the event."""

    def __init__(self) -> None:
        self._handlers: dict[tuple[str, str | None], list[Handler]] = defaultdict(list)

    def on(self, event: str, *actions: str) -> Callable[[Handler], Handler]:
        def register(handler: Handler) -> Handler:
            for action in actions or (None,):
                self._handlers[(event, action)].append(handler)
            return handler

        return register

    def lookup(self, event: str, action: str | None) -> list[Handler]:
        found = list(self._handlers.get((event, None), ()))
        if action is not None:
            found += self._handlers.get((event, action), ())
        return found

    def events(self) -> frozenset[str]:
        return frozenset(event for event, _ in self._handlers)

    def actions(self, event: str) -> frozenset[str | None]:
        return frozenset(action for ev, action in self._handlers if ev == event)


registry = Registry()


def subscribed_events(events: Iterable[str] | None = None) -> list[str]:
    """The events the GitHub App must subscribe to: what the handlers act on, less ping."""
    return sorted(set(events if events is not None else registry.events()) - {"ping"})
