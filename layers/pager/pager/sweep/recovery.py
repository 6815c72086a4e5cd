"""Holds and recovery, the sweep's third unit: ask for nothing while what it would ask for fails again, and
bring back what was held as soon as it would pass.

A hold is the `waiting` item of the sweep's key (pager.waiting): the services that fail, since when.
- Telegram or GitHub: a handler that answered 500 because one of them failed noted it (the webhook's side).
- GitHub's redeliveries ("redelivery"): a run or a check whose redelivery GitHub failed to take (a 5xx, no
  answer, its rate limit) notes it; the rest of GitHub's API may well answer meanwhile.
- pager's own endpoint ("pager"): observed, not inferred (`own_endpoint`): a scheduled run begins with a signed
  `ping` to the URL GitHub delivers to (the app's hook config), and notes the hold when it fails (a 5xx, API
  Gateway's 429, no answer within GitHub's 10 s): a Lambda that fails, an API that throttles, a domain gone.
  A handler that fails on its own while the ping passes is no outage: its events are asked for and named.

While a hold lasts, no run asks for a redelivery: an attempt spent while the service is still down would
fail again, and three of them inside one long outage would name in the alarm an event that a single attempt
after it would have brought back. The every-minute check (pager.sweep.run.check) probes instead (`probe`,
one or two calls, no write): Telegram's getMe; for GitHub the app's installation on the control repository,
a read on the same API as the handlers' calls; for GitHub's redeliveries, one asked for (the probe's
delivery, below: what failed is what is tried); for pager's own endpoint, the ping again, each minute (it
costs GitHub nothing: no event's attempt is ever spent to learn whether pager answers).

As soon as every probe passes, the check runs the sweep: its plan queues what was held, paced, and its
write clears the hold. So an outage costs a constant number of writes whatever its size: the note (or the
run's own hold), the release's commit, and the cleared note; the drain itself is carried out by the
checks, which write nothing.
"""

from __future__ import annotations

from ..engine.effects import Redeliver
from ..engine.perform import REFUSED, Done
from ..errors import PagerError, Transient
from ..services import Services
from ..waiting import ANY, OWN, REDELIVERY, Waiting, noted
from . import deliveries
from .acts import act
from .lists import GITHUB_RETENTION

RETRY_SECONDS = 300  # after a run that could not complete, the check waits this long before the next
HOLDING = ("telegram", "github", REDELIVERY, OWN)  # what holds the redeliveries ("any" only keeps the check sweeping)


def own_endpoint(services: Services, guid: str) -> bool | None:
    """Whether pager's own endpoint answers, observed: a signed `ping` (`guid`: its delivery id, the run's) to
    the URL GitHub delivers to, as GitHub's hook config says. True: it answered (a 2xx, or a refusal of its
    own: it runs); False: a 5xx, API Gateway's throttling (429), a redirect (a 3xx, which GitHub does not follow:
    pager never runs) or no answer within GitHub's 10 s; None: GitHub did not say where it delivers (no ping:
    nothing is known)."""
    try:
        url = str(services.github.hook_config().get("url") or "")
    except PagerError:
        return None
    if not url:
        return None
    status = services.github.ping_hook(url, services.settings.github_webhook_secret, guid)
    return 200 <= status <= 299 or (400 <= status <= 499 and status != 429)


def held_since(waiting: Waiting | None) -> float | None:
    """Since when redeliveries are held (None: they are not)."""
    return waiting.since if waiting is not None and any(s in HOLDING for s in waiting.services) else None


def redeliveries_held_since(waiting: Waiting | None) -> float | None:
    """Since when GitHub's redeliveries are held (None: they are not)."""
    return waiting.since if waiting is not None and REDELIVERY in waiting.services else None


def hold(waiting: Waiting | None, *, released: bool, now: float, own: bool | None = None) -> Waiting | None:
    """What holds after a run: `released`, Telegram and GitHub answer again (this run brings back what was
    held); pager's own endpoint as the run's ping found it (`own`: False holds it, True releases it, None, not
    pinged, leaves it as it was)."""
    if waiting is not None and released:
        waiting = waiting.without("telegram", "github", REDELIVERY, ANY)
    if waiting is not None and own is True:
        waiting = waiting.without(OWN)
    if own is False:
        waiting = noted(waiting, OWN, now) or waiting
    return waiting


def noted_since(read: Waiting | None, now: Waiting | None) -> Waiting | None:
    """Of what waits as stored now, what was noted since `read` was read: the services it adds."""
    if now is None or read is None:
        return now
    added = tuple(s for s in now.services if s not in read.services)
    return Waiting(added, now.since, now.not_before) if added else None


def retry_later(waiting: Waiting | None, now: float) -> Waiting | None:
    """What waits after a run the check started that could not read the list: the check waits a little
    (RETRY_SECONDS) before it runs the sweep again."""
    return None if waiting is None else Waiting(waiting.services, waiting.since, max(waiting.not_before, now + RETRY_SECONDS))


def keep_sweeping(waiting: Waiting | None, *, pending: bool, complete: bool, now: float) -> Waiting | None:
    """What waits with "any" besides, while the check should run the sweep each minute: a ↻ job with more
    to deliver again (`pending`), or a pass of the list that one run could not finish (`complete` False)."""
    if complete and not pending:
        return waiting
    return noted(waiting, ANY, now) or waiting


PROBE_ORDER = {"telegram": 0, "github": 1, OWN: 2, REDELIVERY: 3}  # the probe that costs a redelivery last
FOLLOWED_PROBE = "probe of a held event"  # an Redeliver's `why`: a followed event asked for as the probe, its own ask


def probe(services: Services, waiting: Waiting, state: deliveries.State, run_id: str, *, check: bool = True,
          asked: list[Done] | None = None) -> str | None:
    """The first service still failing (one or two calls each), None when all answer. A refusal is no
    outage: it is left to the alarm (pager's own health), and holds nothing. `check`: the every-minute check
    (a scheduled run passes False: the list it reads says whether pager's own endpoint answers). `asked`
    gets what became of the deliveries asked for as GitHub's redeliveries' probe (the run it releases folds
    them in: `deliveries.with_probes`)."""
    made: list[Done] = []  # the redeliveries asked for as probes in this call: one a minute serves both holds
    failing = _first_failing(services, waiting, state, run_id, check, made)
    if asked is not None:
        asked += [d for d in made if isinstance(d.effect, Redeliver)]
    return failing


def _first_failing(services: Services, waiting: Waiting, state: deliveries.State, run_id: str, check: bool,
                   made: list[Done]) -> str | None:
    for service in sorted(waiting.services, key=lambda s: PROBE_ORDER.get(s, len(PROBE_ORDER))):
        try:
            if service == "telegram":
                services.telegram.get_me()
            elif service == "github":
                services.github.probe(services.settings.control_repository)
            elif service == REDELIVERY and not _takes_redeliveries(services, waiting, state, run_id, check, made):
                return service
            elif service == OWN and not own_endpoint(services, f"ping-{run_id}"):
                return OWN
        except Transient:
            return service
        except PagerError:
            continue
    return None


def _takes_redeliveries(services: Services, waiting: Waiting, state: deliveries.State, run_id: str, check: bool,
                        made: list[Done]) -> bool:
    """Whether GitHub takes a redelivery again, at the probe's minutes (`probe_minute`; a scheduled run's every
    quarter hour): what failed is what is tried, the newest passed delivery asked for once more (never the
    installation read, which says nothing of redeliveries). With none, or one GitHub refuses, a held event is
    the probe (`held_in_turn`): its ask is the event's own (so it is never asked twice: `asked`)."""
    now = services.now()
    if check and not probe_minute(now - waiting.since):
        return False
    passed = passed_probe(state, now)
    done = act(services, passed, run_id) if passed is not None else None
    made += [done] if done is not None else []
    if done is not None and done.fate != REFUSED:
        return not done.github
    followed = held_in_turn(state, now)
    if followed is None:
        return True  # nothing held to deliver again: nothing to lose
    done = act(services, Redeliver(followed.newest, followed.guid, FOLLOWED_PROBE), run_id)
    made.append(done)
    return not done.github


def probe_minute(held_for: float) -> bool:
    """Whether a check asks GitHub to deliver one again to learn whether it takes redeliveries, `held_for`
    seconds into a hold: each minute for the first ten, then every fifth minute until the hour, then every
    fifteenth (a long outage does not fill GitHub's list with probes)."""
    minute = int(held_for // 60)
    return minute < 10 or minute % (5 if minute < 60 else 15) == 0


def held_in_turn(state: deliveries.State, now: float) -> deliveries.Followed | None:
    """A followed event to probe with, another each minute from the oldest on: one that fails on its own
    never keeps a hold from ending."""
    held = sorted(state.followed, key=lambda r: (r.at, r.guid))
    return held[int(now // 60) % len(held)] if held else None


def passed_probe(state: deliveries.State, now: float) -> Redeliver | None:
    """The newest passed delivery the sweep read, asked for once more, while GitHub keeps it."""
    known = state.probe
    if known is not None and known[2] > now - GITHUB_RETENTION + deliveries.RETENTION_MARGIN:
        return Redeliver(known[0], known[1], deliveries.PASSED_PROBE)
    return None
