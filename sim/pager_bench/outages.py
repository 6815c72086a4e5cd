"""Long Telegram outages, replayed with each sweep design: what the maintainer finds when Telegram is back.

Each scenario is `fleet.outage_trace`: Telegram answers 502 to every Bot API call for hours while someone
from outside comments on an issue every so often, each comment a page. The replay is `simulate.Replay`'s
(the real handler, the real sweep every 15 minutes, the recovery check every minute with fast recovery,
GitHub's three days of retention) and goes on for `simulate.DRAIN` after Telegram returns. Then, per page:

- as a page: the chat shows the contribution's own message (its comment's link);
- as an entry to press: no such message, but the control repository's alarm has the event's `delivery:`
  entry open (its ↻ delivers it again);
- said as forgotten: neither, and counted in pager's own alarm, "N events failed between … and GitHub no
  longer keeps them" (the number the chat shows; an event is said as forgotten only up to that number);
- lost silently: none of these.

And: the minutes from Telegram's return to the last page's passing delivery, the attempts GitHub made of
the pages (three at most, by the decision), and the redeliveries the runs asked for.

`burst`: many workflow runs of one repository fail at the same moment (a broken dependency), each a
delivery of its own handled at once in a thread of its own, with Telegram taking its time for each call:
how many answer 500 the first time (their entry is stored; only a render nobody will carry out should
answer 500), and what the chat shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pager.signals.alarm import CONTROL
from pager_world.cases import run
from pager_world.world import World

from . import fleet
from .jobs import Job, side_by_side
from .simulate import Replay, open_delivery_entries, quiet

# (label, hours of the outage, hours between two pages)
SCENARIOS = (
    ("6 h, a page every 30 min", 6.0, 0.5),
    ("72 h, a page every hour", 72.0, 1.0),
    ("84 h, a page every 6 h", 84.0, 6.0),
)
SAID = re.compile(r"(\d+) events? failed between .*? and GitHub no longer keeps them")
OWN = ("⚙️ ", "✅ pager")  # how pager's own alarm begins, red or well again


def _pages(replay: Replay, trace: fleet.Trace) -> dict[str, Any]:
    """What one replay's chat and alarm show of the trace's pages (see the module's docstring)."""
    texts = [m.text for m in replay.telegram.chat()]
    control = [t for t in texts if t.startswith(OWN)]
    said = max((int(n) for t in control for n in SAID.findall(t)), default=0)
    open_entries = open_delivery_entries(replay.store, CONTROL, replay.clock())
    as_page = [e for e in trace.events if any(f"issuecomment-{e.fields['comment_id']}" in t for t in texts)]
    to_press = [e for e in trace.events if e not in as_page and e.guid in open_entries]
    rest = len(trace.events) - len(as_page) - len(to_press)
    forgotten = min(said, rest)
    back = trace.faults[0].end
    passed = [at for e in as_page for at, status, _ in replay.github.log.get(e.guid, ()) if 200 <= status < 300]
    attempts = [len(replay.github.log.get(e.guid, ())) for e in trace.events]
    return {"pages": len(trace.events), "as_page": len(as_page), "to_press": len(to_press), "forgotten": forgotten,
            "lost": rest - forgotten, "said_forgotten": said,
            "back_minutes": max((at - back for at in passed), default=0.0) / 60 if passed else None,
            "attempts_max": max(attempts, default=0), "redeliveries": sum(r["redeliveries"] for r in replay.runs)}


def long_outage(label: str, hours: float, every_hours: float, design: str, *, pem: str, seed: int = 1) -> dict[str, Any]:
    """One scenario replayed with one design (a job of `outage_jobs`, in whichever process runs it)."""
    trace = fleet.outage_trace(hours=hours, every_hours=every_hours, seed=seed)
    replay = Replay(trace, design, pem=pem)
    replay.run()
    return _pages(replay, trace)


# About what a replay takes, in CPU seconds per hour of the outage (the script asks again for every
# failed delivery at every run): the jobs' weight.
CPU_PER_HOUR = {"script": 0.17}
CPU_PER_HOUR_ELSE = 0.04


def outage_jobs(designs: list[str], *, pem: str, seed: int = 1,
                scenarios: tuple[tuple[str, float, float], ...] = SCENARIOS) -> list[Job]:
    """Each scenario with each design, a job each (`jobs.side_by_side`)."""
    return [Job(key=("outage", label, design), run=long_outage, args=(label, hours, every, design),
                kwargs={"pem": pem, "seed": seed}, weight=hours * CPU_PER_HOUR.get(design, CPU_PER_HOUR_ELSE),
                label=f"long outage {label}, {design}")
            for label, hours, every in scenarios for design in designs]


def outages_of(done: dict[Any, Any], designs: list[str],
               scenarios: tuple[tuple[str, float, float], ...] = SCENARIOS) -> dict[str, dict[str, dict[str, Any]]]:
    """The results of `outage_jobs` by scenario label, then design."""
    return {label: {design: done[("outage", label, design)] for design in designs} for label, _, _ in scenarios}


def long_outages(designs: list[str], *, pem: str, seed: int = 1, scenarios: tuple[tuple[str, float, float], ...] = SCENARIOS,
                 progress: Callable[[str], None] | None = None) -> dict[str, dict[str, dict[str, Any]]]:
    """Each scenario replayed with each design, one after another: by scenario label, then design."""
    done = side_by_side(outage_jobs(designs, pem=pem, seed=seed, scenarios=scenarios), jobs=1, progress=progress)
    return outages_of(done, designs, scenarios)


BURST = 120  # workflow runs of one repository failing at once
BURST_TELEGRAM_SECONDS = 0.3  # what each Telegram call takes meanwhile


def burst(*, pem: str, n: int = BURST, latency: float = BURST_TELEGRAM_SECONDS) -> dict[str, Any]:
    """`n` failures on one repository delivered at the same moment (see the module's docstring)."""
    world = World(pem)
    world.telegram_latency = latency
    bodies = [run("failure", workflow_id=7000 + i, number=5, name=f"job-{i:03}") for i in range(n)]
    with quiet():
        answers = world.concurrently(*(lambda b=b, i=i: world.deliver("workflow_run", b, guid=f"burst-{i}")[0]
                                       for i, b in enumerate(bodies)))
    shown = max((m.text.count("•") for m in world.chat.chat()), default=0)
    return {"deliveries": n, "telegram_seconds": latency, "first_500": sum(1 for a in answers if a >= 500),
            "messages_sent": len(world.chat.sent), "entries_shown": shown}
