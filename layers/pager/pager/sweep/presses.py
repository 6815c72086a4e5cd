"""The buttons of ⚙️ pager that act on GitHub's deliveries (pager.buttons calls them
once per press, an allowed user's only):

    again:<delivery id>   ↻ on a failed delivery's entry: GitHub delivers that event once more, now,
                          once per attempt the entry shows (`alarm.deliver_again`); a later run sees
                          the attempt pass (the entry closes) or fail (it shows the new answer)
    again:all             ↻ all: every failed delivery of the alarm, delivered again by the sweep's next
                          runs within their budget, each once per attempt its entry shows
    refused:again         ↻ on the entry of deliveries refused with 401, once the secret works again:
                          the sweep delivers them again over its next runs (pager.sweep.health.Job)
    refused:pages         ↻ on the entry of signals GitHub or Telegram refused, once they take such
                          calls again: the same, for the deliveries answered 424 (pager.refusals)
"""

from __future__ import annotations

import re

from .. import waiting
from ..services import Services
from ..signals import alarm
from . import health, lease
from .lists import GITHUB_RETENTION

ALL_ITEM = "again-all"  # ↻ all pressed: {asked_at}, until the sweep asked for every entry

DELIVERY_ID = re.compile(r"[0-9]{1,20}")


BUSY = "⏳ pager is asking GitHub for deliveries right now: press again in a minute"


def deliver_again(services: Services, delivery_id: str) -> str:
    """↻ on a failed delivery: one more attempt, only of a delivery the alarm names, asked under the sweep's
    lease (a run or a check asking meanwhile: the press says so, and asks nothing)."""
    if not DELIVERY_ID.fullmatch(delivery_id):
        return "this button is not known"
    now = services.now()
    leased = lease.take(services, f"press-{delivery_id}", now, lease.PRESS_SECONDS, kind=lease.PRESS)
    if leased is None:
        return BUSY
    try:
        return alarm.deliver_again(services, alarm.CONTROL, int(delivery_id))
    finally:
        lease.give_back(services, leased, services.now())


def deliver_refused_again(services: Services, status: int = health.SECRET_REFUSED) -> str:
    """↻ on the deliveries refused with 401 (`status` 401) or on the signals GitHub or Telegram refused (424):
    start the sweep's job, unless one runs or they would still be refused."""
    now = services.now()
    own = health.Health.from_data(services.store.load(waiting.SWEEP_KEY, health.ITEM).data)
    record = services.store.load(waiting.SWEEP_KEY, health.JOB_ITEM)
    answer, job = health.start_job(health.Job.from_data(record.data), now, own, status, services.settings.zone)
    if job is not None:
        services.store.save(record, job.to_data(), expires_at=int(now + GITHUB_RETENTION))
        waiting.note(services, waiting.ANY)  # the check runs the sweep each minute until the job is done
    return answer


def deliver_all_again(services: Services) -> str:
    """↻ all: the sweep's next runs deliver again every failed delivery ⚙️ pager shows
    (the recovery check runs them each minute until done)."""
    left = len(alarm.to_deliver_again(alarm.entries_now(services, alarm.CONTROL)))
    if not left:
        return "no failed delivery left to deliver again"
    record = services.store.load(waiting.SWEEP_KEY, ALL_ITEM)
    if record.data.get("asked_at"):
        return f"↻ already delivering them again: {left} left"
    now = services.now()
    services.store.save(record, {"asked_at": now}, expires_at=int(now + GITHUB_RETENTION))
    waiting.note(services, waiting.ANY)
    return f"↻ the {left} failed deliveries are delivered again over the next minutes"
