"""The sweep's lease: one invocation at a time asks GitHub for anything (SPEC §7, amended 2026-12-07).

Three kinds of invocation ask GitHub to deliver an event again: a run of the sweep (its minute's
redeliveries, ↻ all's picks, the ↻ job's, a hold's probe), the every-minute check (the minute a run queued,
a hold's probe) and a ↻ press. Each asks only under the lease, the `lease` item of the sweep's key:

    {by, kind, until, minute}   who holds it (its invocation's id) and what kind of invocation that is (run,
                                check, press), until when (it lapses by itself: a holder that died never
                                blocks the sweep for longer), and the last minute whose redeliveries were
                                asked for

`take` is one conditional write: it lands only when the lease is free (lapsed, or the taker's own) and, for a
minute's asks, only when nobody asked for that minute yet. A run takes the minute it runs in with the lease
when no check asked for it yet (`take_for_run`): it then asks for what an earlier plan queued for that minute
as well, and the check of that minute, coming after it, asks for nothing. So two checks in one minute (a slow one
overlapping the next, EventBridge invoking twice), a check and a run, or a press and either, never ask for
the same event: the second finds the lease taken and asks for nothing. A run holds it from its start to its
end and gives it back (`give_back`); a check holds it for the seconds its asks take and lets it lapse; a
press takes it for its one ask. Writes: one a check minute that asks for something, two a run or a press.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import Conflict, PagerError
from ..services import Services
from ..store import Record
from ..waiting import SWEEP_KEY

ITEM = "lease"
RUN_SECONDS = 170.0  # a run's: longer than its deadline (`run.RUN_SECONDS`), shorter than the next schedule
CHECK_SECONDS = 40.0  # a check's: its asks of a minute, well inside the minute
PRESS_SECONDS = 15.0  # a press's one ask
RUN, CHECK, PRESS = "run", "check", "press"  # the kinds of invocation that hold it (a run waits for a check's asks)


@dataclass(frozen=True)
class Lease:
    by: str = ""
    until: float = 0.0
    minute: float = 0.0
    kind: str = ""

    @classmethod
    def of(cls, data: dict[str, Any]) -> Lease:
        def number(key: str) -> float:
            value = data.get(key)
            return float(value) if isinstance(value, (int, float)) else 0.0

        return cls(str(data.get("by") or ""), number("until"), number("minute"), str(data.get("kind") or ""))

    def held_by_another(self, by: str, now: float) -> bool:
        return self.until > now and self.by != by


def take(services: Services, by: str, now: float, seconds: float, *, minute: float | None = None,
         kind: str = CHECK) -> Record | None:
    """Take the lease for `seconds` (and, `minute` given, the asks of that minute) for an invocation of `kind`; the
    record written, or None when another holds it, or asked for that minute already. One conditional write."""
    taken = _take(services, by, now, seconds, minute, required=minute is not None, kind=kind)
    return taken[0] if taken else None


def take_for_run(services: Services, by: str, now: float, seconds: float, minute: float) -> tuple[Record, bool] | None:
    """A run's lease: taken for `seconds`, with the asks of its `minute` when no check asked for them yet
    (then the run asks for what an earlier plan queued for that minute too, and no check of the minute asks
    for anything). The record and whether the minute is the run's; None when another holds the lease."""
    return _take(services, by, now, seconds, minute, required=False, kind=RUN)


def _take(services: Services, by: str, now: float, seconds: float, minute: float | None, *,
          required: bool, kind: str) -> tuple[Record, bool] | None:
    record = services.store.load(SWEEP_KEY, ITEM)
    lease = Lease.of(record.data)
    mine = minute is not None and lease.minute < minute  # (asked for once, whoever asks again)
    if lease.held_by_another(by, now) or (required and not mine):
        return None
    data = {"by": by, "kind": kind, "until": now + seconds, "minute": minute if mine and minute is not None else lease.minute}
    try:
        return services.store.save(record, data, expires_at=int(now + 3 * 24 * 3600)), mine
    except Conflict:  # another took it between the read and the write
        return None


def give_back(services: Services, record: Record, now: float) -> None:
    """Give the lease back before it lapses (a run or a press done), keeping the minute asked for; nothing
    when another holds it since (the write is conditional on the version taken)."""
    try:
        services.store.save(record, {**record.data, "until": now}, expires_at=int(now + 3 * 24 * 3600))
    except PagerError:  # taken since, or the table failing: it lapses by itself
        pass


def holding(services: Services, now: float) -> str:
    """What kind of invocation holds the lease now (RUN, CHECK, PRESS; "" when nobody does)."""
    lease = Lease.of(services.store.load(SWEEP_KEY, ITEM).data)
    return lease.kind if lease.until > now else ""
