"""docs/benchmarks.md's section "How to read it": what the designs are and what the report's words mean
(`DEFINITIONS`), then what this run adds: pager's longest Telegram outage, its reach gaps, the records each
sweep writes of its own, and how long each replay took. `report.report` calls `section` once, last before
the section on a busy fleet's size."""

from __future__ import annotations

from typing import Any

from . import fleet
from .markdown import TRACES, Add, Results, heading
from .simulate import DESIGNS

# A bullet each, as it reads.
DEFINITIONS = (
    ("- **pager, fast recovery** is the code as deployed: the 15-minute runs, and the check every minute "
     "(a handler's 500 notes what waits in the sweep's `waiting` item; the check probes the failed service and runs "
     "the sweep as soon as it answers; while a probe fails, no run asks GitHub for anything; else the check asks for "
     "the redeliveries the last run queued for its minute). **pager, 15-minute runs only** is the same code without "
     "the every-minute schedule: its runs hold and clear the same way, they just come a quarter hour apart, and "
     "only a run's own first minute of redeliveries is asked for."),
    ("- (a) is the decision as first accepted: one list, the 300 newest deliveries, so on a busy day its view "
     "is shorter than the 15 minutes between runs and failures fall off it; and a failed event of a kind that can "
     "be overtaken is dropped when a newer event of the same kind and repository passed, whatever it is about. (b) "
     "has no cap and no attempt count: it asks again for everything without an OK since its last run, in one "
     "burst, whatever the calls."),
    ("- **From a fault's end to the passing redelivery**: for each fault, each event that failed in it (its first "
     "failed attempt inside, failing the way the fault fails) and passed later: the seconds from the fault's end "
     "to the attempt that passed (0 if it passed before the end). An outage fails a handler's step, which "
     "answers 500 and notes it, so the recovery check follows it; a period without answers fails nothing in the "
     "pager (it handled the delivery and acted; GitHub stopped waiting), so nothing is noted and only the "
     "15-minute runs ask again, while the maintainer already has the message."),
    ("- **Alarmed because its attempts were spent in a fault**: alarmed, and all its failed attempts fell inside "
     "the fault's window, or its third (last allowed) attempt did: an attempt spent while the service was still "
     "down, which one attempt after the fault would not have needed."),
    ("- **The subscribed events only**: a deployment as the README sets it up receives only the events of the "
     "signals table; the full trace adds what an app subscribed to everything would receive (answered \"ignored\"), "
     "which weighs on API Gateway, Lambda and the logs."),
    ("- Every event is about a thing: its kind, its repository and what pager keys its record by (a workflow on a "
     "branch; an app's check suite on a branch, or a release's suite by its head; a check run's name on a branch; "
     "an alert; an issue, pull request or discussion; each comment or review on its own; a release's tag). Of two "
     "events about one thing the newer is the one pager's handler takes for newer: a workflow run's number, "
     "else the time."),
    ("- **Superseded**: failed, never delivered, not alarmed, and a newer event about the same thing passed: it "
     "counts as done, the newer one stands. **Dropped as superseded by another thing**: lost silently, and a "
     "newer event of the same kind and repository passed but none about the same thing (another workflow, "
     "branch, pull request or alert): what the first rule drops. It is part of lost silently."),
    ("- A **stale redelivery** passed after a newer event about the same thing had passed. It counts against its "
     "target only when its handling changed state (a signal record written, a Telegram message sent or edited, "
     "a dispatch or a merge), which the replay records for every attempt of every design; an answer of 200 "
     "(\"stale\", \"unchanged\", \"ignored\") that changed nothing is harmless."),
    ("- Pager's sweep asks GitHub again for each failed event pager acts on, at most three attempts, follows it "
     "past its 3-hour window, and names it in ⚙️ pager's message once its attempts are used or GitHub "
     "is about to forget it. An alarmed event waits for the maintainer's ↻ in the alarm (or Redeliver on the app's Advanced page), "
     "and counts against the 99% targets."),
)


def _longest(trace: fleet.Trace, pager: dict[str, Any]) -> list[str]:
    """What became of the events of the longest Telegram outage (none: nothing)."""
    longest = max((k for k, f in enumerate(trace.faults) if f.kind == "telegram"),
                  key=lambda k: trace.faults[k].end - trace.faults[k].start, default=None)
    if longest is None:
        return []
    o = pager["outages"][longest]
    return [f"- The longest outage, {trace.faults[longest].label}: {o['failed']:,} events got a 502. With "
            f"{DESIGNS['pager']}: delivered within 30 minutes of its end {o['in_time']:,}, later {o['late']:,}, "
            f"superseded {o['superseded']:,}, named in the alarm {o['alarmed']:,}, lost silently {o['lost']:,}."]


def _reach_gaps(pager: dict[str, Any]) -> list[str]:
    """What a reach gap is, and how many pager's runs had (none: nothing)."""
    if not pager["reach_gaps"]:
        return []
    return [f"- A reach gap ({pager['reach_gaps']:,} in the week) is a span of deliveries GitHub forgot before any pass "
            "of the sweep read them (the sweep did not run for three days): what failed then did not come back, and "
            "the alarm says so (docs/sweep.md, \"Reading all GitHub keeps\")."]


def _sweep_keys(results: Results) -> list[str]:
    """The records each design's sweep wrote of its own, per run (those that wrote any)."""
    return [f"- {DESIGNS[d]} wrote its own records " + ", ".join(
                f"`{key}` {per_run:.2f}" for key, per_run in sorted(results[d]["sweep_keys"].items())) + " times per run."
            for d in DESIGNS if d in results and results[d]["sweep_keys"]]


def _times(results: dict[str, Results]) -> str:
    return "- Simulation times: " + "; ".join(
        f"{TRACES[name]}: " + ", ".join(f"{DESIGNS[d]} {r['seconds']:.0f} s" for d, r in rs.items())
        for name, rs in results.items()) + "."


def section(add: Add, trace: fleet.Trace, results: dict[str, Results]) -> None:
    """The full trace and the replays of every trace; ends without a blank line."""
    full = results["full"]
    heading(add, "How to read it")
    for line in (*DEFINITIONS, *_longest(trace, full["pager"]), *_reach_gaps(full["pager"]), *_sweep_keys(full),
                 _times(results)):
        add(line)
