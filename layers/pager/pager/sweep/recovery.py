"""Recovery that follows the outage, not the clock.

When a handler answers 500 because Telegram or GitHub failed, the webhook notes that something is
waiting (pager.waiting: `waiting` in the sweep's state item, written once per outage, then only read).
A check runs every minute (pager.sweep.run.check, on its own schedule): with nothing waiting it is one read of that
item (a few kB; docs/benchmarks.md); with something waiting it probes each service that failed (Telegram's getMe; for GitHub the
app's installation on the control repository, a read on the same API as the handlers' calls) and, as
soon as every probe passes, runs the sweep at once: the same run as the scheduled one, with its budget,
its conditional commit and its rules. The run clears `waiting` in the very write that commits its plan
(`after_plan`), when that plan asks for every event it can (none deferred, resting or awaiting its
attempt); until then the check runs the sweep again each minute. So an outage costs two writes besides
the scheduled runs' own: the note, and the commit of the run the check starts. A redelivery GitHub then
fails to take puts `waiting` back in the run's second write, which it makes anyway.

While a probe fails, a sweep run (the scheduled one too) asks GitHub for nothing: an attempt spent
while the service is still down would fail again, and three of them inside one long outage would put
the event in the alarm although a single attempt after it would have passed. The events stay followed.

Everything the decision promises still holds: at most `sweep_max_attempts` attempts and
`sweep_max_redeliveries` a run, the budget, stale redeliveries changing nothing, and two runs never
asking twice for the same attempt (a run remembers the redeliveries GitHub took, until GitHub lists
their attempts, an hour at most; a duplicate invocation of a scheduled event steps aside by its id);
a redelivery that failed is asked for again no sooner than a schedule's interval later.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..errors import PagerError, Transient
from ..services import Services
from ..waiting import Waiting

RETRY_SECONDS = 300  # after a run that could not complete, the check waits this long before the next
CHECK_EVENT = {"pager": "recovery-check"}  # the input of the every-minute schedule (template.yaml)


def probe(services: Services, waiting: Waiting) -> str | None:
    """The first service still failing (one call each), None when all answer. A refusal is no outage:
    it is left to the alarm (pager's own health), and holds nothing. An outage holds the events for as
    long as it lasts: each one only until GitHub is about to forget it, when the plan names it in the
    alarm (`Reason.FORGOTTEN`), and what GitHub forgets is counted there (pager.sweep.health); so even a
    probe that kept failing where the handlers no longer do loses nothing silently."""
    for service in waiting.services:
        try:
            if service == "telegram":
                services.telegram.get_me()
            elif service == "github":
                services.github.probe(services.settings.control_repository)
        except Transient:
            return service
        except PagerError:
            continue
    return None


STILL_TO_COME = ("deferred", "resting", "awaiting")  # a plan's reasons for an event the run does not ask for yet


def after_plan(waiting: Waiting, counts: Mapping[str, int], *, job_pending: bool, complete: bool,
               now: float) -> tuple[Waiting | None, str]:
    """What waits once the run's plan is committed (None: nothing, cleared in that same write), and the
    outcome for the summary. `complete`: the run read what it must (not cut short by
    the budget), else the check waits a little before it runs the sweep again."""
    if not complete:
        return replace(waiting, not_before=now + RETRY_SECONDS), "waiting: the run did not complete"
    still = sum(int(counts.get(reason, 0)) for reason in STILL_TO_COME) + int(job_pending)  # the ↻ job: a page a run
    if still:
        return waiting, f"waiting: {still} still to come back"
    return None, f"recovered: waited {int(now - waiting.since)} s"
