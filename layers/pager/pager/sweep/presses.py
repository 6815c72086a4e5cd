"""The buttons of the control repository's alarm that act on GitHub's deliveries (pager.buttons calls them
once per press, an allowed user's only):

    again:<delivery id>   ↻ on a failed delivery's entry: GitHub delivers that event once more, now;
                          a later run sees the attempt pass (the entry closes) or fail (it shows the
                          new answer)
    refused:again         ↻ on the entry of deliveries refused with 401, once the secret works again:
                          the sweep delivers them again over its next runs (pager.sweep.health.Job)
"""

from __future__ import annotations

import re

from ..services import Services
from ..signals.alarm import DELIVERY_PREFIX, entries_now
from . import health, recovery
from .plan import GITHUB_RETENTION, State
from .run import STATE_KEY

DELIVERY_ID = re.compile(r"[0-9]{1,20}")


def deliver_again(services: Services, delivery_id: str) -> str:
    """↻ on a failed delivery: one more attempt, only of a delivery the alarm names."""
    if not DELIVERY_ID.fullmatch(delivery_id):
        return "this button is not known"
    entries = entries_now(services, services.settings.control_repository)
    if not any(key.startswith(DELIVERY_PREFIX) and entry.get("delivery_id") == int(delivery_id) for key, entry in entries.items()):
        return "this delivery is no longer in the alarm"
    services.github.redeliver(int(delivery_id))
    return "↻ GitHub delivers it again; the next sweep shows whether it passed"


def deliver_refused_again(services: Services) -> str:
    """↻ on the deliveries refused with 401: start the sweep's job, unless one runs or the secret is
    still refused."""
    now = services.now()
    state = State.from_data(services.store.load(STATE_KEY).data)
    record = services.store.load(health.JOB_KEY)
    answer, job = health.start_job(health.Job.from_data(record.data), now, health.Health.from_data(state.health))
    if job is not None:
        services.store.save(record, job.to_data(), expires_at=int(now + GITHUB_RETENTION))
        recovery.note(services, "any")  # the check runs the sweep each minute until the job is done
    return answer
