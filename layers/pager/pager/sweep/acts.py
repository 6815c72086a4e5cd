"""What the sweep does outside itself: engine effects (a redelivery: `pager.engine.effects.Redeliver`), and two
acts of its own that are more than one effect, each a settle of the alarm's records:

    ChangeAlarm      open, update and close entries of ⚙️ pager (the table), then render it
    RedeliverEntry   ↻ all's pick: deliver again the attempt a `delivery:` entry of ⚙️ pager shows, claimed on
                     that entry like a ↻ press (so a press and a run never both ask for it)

`act` carries any of them out and says what became of it (`pager.engine.perform.Done`), never raising: the
units fold the results into the state they keep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..engine.effects import Redeliver
from ..engine.perform import Done, attempt
from ..errors import PagerError
from ..services import Services
from ..signals import alarm


@dataclass(frozen=True)
class ChangeAlarm:
    opened: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    closed: tuple[str, ...] = ()
    name = "alarm change"

    def fields(self) -> dict[str, Any]:
        return {"opened": len(self.opened), "closed": len(self.closed)}


@dataclass(frozen=True)
class RedeliverEntry:
    key: str
    delivery_id: int
    name = "↻ all"

    def fields(self) -> dict[str, Any]:
        return {"entry": self.key, "delivery_id": self.delivery_id}


Act = Redeliver | RedeliverEntry | ChangeAlarm


def act(services: Services, what: Act, run_id: str) -> Done:
    """Carry out a redelivery or one of the sweep's own acts; what became of it."""
    return attempt(services, what, run_id, carry_out=None if isinstance(what, Redeliver) else _carry_out)


class _NotTaken(PagerError):
    """↻ all's pick was not asked for (its entry's claim, or GitHub): the next run picks it again."""


def _carry_out(services: Services, what: Any) -> None:
    if isinstance(what, RedeliverEntry):
        if not alarm.deliver_again_picked(services, alarm.CONTROL, [(what.key, what.delivery_id)]):
            raise _NotTaken(f"{what.key}: not asked for")
    else:
        alarm.update_alarm(services, alarm.control_alarm(services), opened=what.opened, closed=what.closed)
