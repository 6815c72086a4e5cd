"""What a sweep run or check does outside itself, as data, and the one place that does it (`perform`).

The units of the sweep (pager.sweep.deliveries, .health, .recovery) plan with no I/O; what they want done
comes back as these effects, which the shell (pager.sweep.run) hands to `perform` one by one, and whose
results (`Done`) the units fold into the state they keep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import GitHubUnavailable, PagerError, Permanent
from ..observe import logger
from ..services import Services
from ..signals import alarm


@dataclass(frozen=True)
class Ask:
    """Ask GitHub to deliver an event once more (`POST /app/hook/deliveries/{id}/attempts`), by one of its
    attempts. `why`: "redelivery" (the decision's), "probe" (whether pager answers, during a hold), or
    "refused" (↻ of deliveries refused with 401 or 424)."""

    delivery_id: int
    guid: str
    why: str = "redelivery"


@dataclass(frozen=True)
class AskEntry:
    """↻ all's pick: deliver again the attempt a `delivery:` entry of ⚙️ pager shows,
    claimed on that entry like a ↻ press (so a press and a run never both ask for it)."""

    key: str
    delivery_id: int


@dataclass(frozen=True)
class ChangeAlarm:
    """Open, update and close entries of ⚙️ pager (the table), then render it."""

    opened: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    closed: tuple[str, ...] = ()


Effect = Ask | AskEntry | ChangeAlarm

TOOK, REFUSED, FAILED, LIMITED = "took", "refused", "failed", "rate limited"


@dataclass(frozen=True)
class Done:
    """What became of one effect: TOOK, REFUSED (a 4xx: asking again changes nothing), FAILED (a 5xx, no
    answer, a busy table: the next run tries again) or LIMITED (GitHub's rate limit: nothing more this
    run; `retry_after` seconds, when GitHub said)."""

    effect: Effect
    fate: str
    reason: str = ""
    retry_after: float | None = None
    status: int = 0  # GitHub's answer, when it refused
    github: bool = False  # GitHub did not take it (a 5xx, no answer, its rate limit): what waits for GitHub


def perform(services: Services, effect: Effect, run_id: str) -> Done:
    """Carry out one effect; its failure is logged and returned, never raised."""
    try:
        _carry_out(services, effect)
    except GitHubUnavailable as exc:
        limited = exc.retry_after is not None or exc.status == 429
        done = Done(effect, LIMITED if limited else FAILED, f"{type(exc).__name__}: {exc}", exc.retry_after, github=True)
    except Permanent as exc:
        status = getattr(exc, "status", 0)
        done = Done(effect, REFUSED, f"{type(exc).__name__}: {exc}", status=status if isinstance(status, int) else 0)
    except PagerError as exc:
        done = Done(effect, FAILED, f"{type(exc).__name__}: {exc}")
    else:
        return Done(effect, TOOK)
    logger.warning(f"{_name(effect)} not done", extra={"run_id": run_id, **_fields(effect), "fate": done.fate,
                                                        "reason": done.reason})
    return done


def _carry_out(services: Services, effect: Effect) -> None:
    if isinstance(effect, Ask):
        services.github.redeliver(effect.delivery_id)
        logger.info(f"{effect.why} asked", extra={"guid": effect.guid, "delivery_id": effect.delivery_id})
    elif isinstance(effect, AskEntry):
        if not alarm.deliver_again_picked(services, alarm.CONTROL, [(effect.key, effect.delivery_id)]):
            raise _NotTaken(f"{effect.key}: not asked for")
    else:
        alarm.update_alarm(services, alarm.control_alarm(services), opened=effect.opened, closed=effect.closed)


class _NotTaken(PagerError):
    """↻ all's pick was not asked for (its entry's claim, or GitHub): the next run picks it again."""


def _name(effect: Effect) -> str:
    if isinstance(effect, Ask):
        return effect.why
    return "↻ all" if isinstance(effect, AskEntry) else "alarm change"


def _fields(effect: Effect) -> dict[str, Any]:
    if isinstance(effect, Ask):
        return {"guid": effect.guid, "delivery_id": effect.delivery_id}
    if isinstance(effect, AskEntry):
        return {"entry": effect.key, "delivery_id": effect.delivery_id}
    return {"opened": len(effect.opened), "closed": len(effect.closed)}
