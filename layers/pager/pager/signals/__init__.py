"""The signals: every webhook event pager acts on, and what acts on it, in one table (docs/signals.md).

    contribution   outside contributions: one message, one pager-draft dispatch; closed or answered edits it,
                   reopened shows it open again; an edit by its author is a silent reply in its thread
    alarm          one message per repository with its failing entries; 🛠 Start fix, its run linked once it
                   starts and said when it ends; `update_alarm` for the sweep
    release        release pull requests: one message, 🔀 Merge once ready, the merge and its tag recorded once

Each handler reads its payload, gathers what it must read from GitHub first (if anything), and hands
a pure decision to `records.settle`, which claims, acts and records each effect: so a delivery may
come twice and late. An (event, action) missing from `SIGNALS` is answered 200 "ignored".

`SUPERSEDED` and `ALWAYS_AGAIN` sort the subscribed events for the sweep: in the first, a newer event
about the same thing overtakes an older one (its handler compares order keys, so a stale redelivery
changes nothing); in the second (comments), each event is a thing of its own and always comes again.
Every subscribed event is in exactly one of them; tests/test_routing.py fails until a new one is placed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ..routing import Delivery
from ..services import Services
from . import alarm, contribution, release

Handler = Callable[[Delivery, Services], str]

SIGNALS: Mapping[tuple[str, str], tuple[Handler, ...]] = {
    # contributions from outside, and what closes them
    ("issues", "opened"): (contribution.opened,),
    ("issues", "edited"): (contribution.edited,),
    ("issues", "closed"): (contribution.closed,),
    ("issues", "reopened"): (contribution.reopened,),
    ("discussion", "created"): (contribution.opened,),
    ("discussion", "edited"): (contribution.edited,),
    ("discussion", "answered"): (contribution.closed,),
    ("discussion", "unanswered"): (contribution.reopened,),
    ("issue_comment", "created"): (contribution.opened,),
    ("discussion_comment", "created"): (contribution.opened,),
    ("pull_request_review_comment", "created"): (contribution.opened,),
    ("pull_request_review", "submitted"): (contribution.opened, release.reviewed),
    # pull requests: a contribution, or a release pull request
    ("pull_request", "opened"): (contribution.opened, release.pull_request),
    ("pull_request", "reopened"): (contribution.reopened, release.pull_request),
    ("pull_request", "synchronize"): (release.pull_request,),
    ("pull_request", "edited"): (contribution.edited, release.pull_request),
    ("pull_request", "closed"): (contribution.closed, release.closed),
    ("pull_request", "converted_to_draft"): (release.drafted,),  # a draft is never offered 🔀 Merge
    ("pull_request", "ready_for_review"): (release.drafted,),
    # the alarm of the default branch, and a release's checks
    ("workflow_run", "requested"): (alarm.fix_started,),  # the control repository's pager-fix run: its link
    ("workflow_run", "completed"): (alarm.workflow_run,),
    ("check_suite", "completed"): (alarm.check_suite, release.check_suite),
    ("code_scanning_alert", "created"): (alarm.code_scanning,),
    ("code_scanning_alert", "reopened"): (alarm.code_scanning,),
    ("code_scanning_alert", "reopened_by_user"): (alarm.code_scanning,),
    ("code_scanning_alert", "appeared_in_branch"): (alarm.code_scanning,),
    ("code_scanning_alert", "fixed"): (alarm.code_scanning,),
    ("code_scanning_alert", "closed_by_user"): (alarm.code_scanning,),
    # (code_scanning_alert.updated_assignment, a change of assignees, shows nothing new)
    # a release published after its pull request was merged
    ("release", "published"): (release.published,),
}

# A newer event about the same thing overtakes an older one: the workflow, the check suite's app,
# the alert, the issue, the pull request, the discussion, the release.
SUPERSEDED = frozenset(
    {"workflow_run", "check_suite", "check_run", "code_scanning_alert", "issues", "pull_request", "discussion", "release"}
)

# Each event is a thing of its own: it overtakes nothing and always comes again.
ALWAYS_AGAIN = frozenset({"issue_comment", "discussion_comment", "pull_request_review_comment", "pull_request_review"})


def handlers(event: str, action: str | None) -> tuple[Handler, ...]:
    """What acts on an event and action; () for one pager ignores."""
    return SIGNALS.get((event, action or ""), ())


def acts_on(event: str, action: str | None) -> bool:
    """Whether a signal acts on this event and action (the sweep never asks again for one it ignores)."""
    return bool(handlers(event, action))


def pages(event: str, action: str | None) -> bool:
    """Whether a handler of this event and action sends or edits a message of its own (a contribution's):
    the sweep paces these for Telegram's limit of a chat."""
    return any(h.__module__ == contribution.__name__ for h in handlers(event, action))


def subscribed_events() -> list[str]:
    """The events the GitHub App must subscribe to."""
    return sorted({event for event, _ in SIGNALS})
