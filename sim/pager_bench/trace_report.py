"""docs/benchmarks.md's head (the command, the machine, how long the run took, where the code is) and its
section "The trace": the fleet's days, their busiest quarter hour, the events by kind, the signals
registered, the subscribed events, the faults and the sweep's schedules. `report.report` calls `header`
and `section` once."""

from __future__ import annotations

import argparse
import os
import platform
from collections import Counter

from pager.values import iso

from . import fleet
from .markdown import Add, heading, paragraph
from .simulate import CHECK_EVERY, DRAIN, SWEEP_EVERY


def header(add: Add, args: argparse.Namespace, elapsed: float, processes: int = 1) -> None:
    """The command, the machine, and how long the whole run took with its replays in `processes` processes."""
    add("# Benchmarks")
    add("")
    side = f"side by side in {processes} processes" if processes > 1 else "one after another in one process"
    paragraph(add, f"Written by `make bench` (`python -m pager_bench --days {args.days:g} --seed {args.seed}`) on "
              f"Python {platform.python_version()}, {os.cpu_count()} CPUs; the whole run took {elapsed / 60:.1f} min, "
              f"its replays {side}. "
              "Everything runs in process on a virtual clock, in the fake world of `pager_world`: GitHub and Telegram are "
              "its `FakeGitHub` and `FakeTelegram`, the table is the in-memory store behind its `FaultyStore` (every load "
              "and write counted), and each delivery goes through the real `functions/webhook/app.py:lambda_handler` with "
              "a signed API Gateway event. The code is the package `sim/pager_bench`; definitions are in the docstring of "
              "`sim/pager_bench/measure.py`, the bill's model in `sim/pager_bench/bill.py`, the prices in "
              "`sim/pager_bench/prices.py`.")


def _events(trace: fleet.Trace, handled: list[str]) -> list[str]:
    quarters = trace.runs_per_quarter
    per_quarter = Counter(int((e.at - trace.start) // fleet.QUARTER) for e in trace.events)
    return [
        f"- {trace.days:g} days from {iso(trace.start)[:10]} (a Monday), {len(trace.repos)} repositories, "
        f"{len(trace.events):,} events (first deliveries), {sum(quarters):,} workflow runs.",
        f"- Busiest quarter hour: {max(quarters)} workflow runs, {max(per_quarter.values()):,} deliveries; "
        f"{sum(1 for q in quarters if q >= 100)} quarter hours with 100 runs or more.",
        "- Events by kind: " + ", ".join(f"{k} {n:,}" for k, n in fleet.iter_kinds(trace)) + ".",
        f"- Signals registered when this ran (events with a handler; the rest are answered 200 \"ignored\"): "
        f"{', '.join(handled) or 'none'}.",
    ]


def _subscribed(traces: dict[str, fleet.Trace]) -> list[str]:
    if "subscribed" not in traces:
        return []
    trace, sub = traces["full"], traces["subscribed"]
    return [f"- The subscribed events only: the same trace (the same seed, guids, times and faults) with only the "
            f"events the README's app subscribes to (`pager.signals.subscribed_events()`, the list above): "
            f"{len(sub.events):,} events, {len(sub.events) / len(trace.events):.0%} of the full trace. A deployment "
            "as the README sets it up never receives the others (here above all `workflow_job` and `check_run`)."]


def _faults_and_schedules(trace: fleet.Trace) -> list[str]:
    return [
        "- Faults: " + "; ".join(f.label for f in trace.faults) + f"; besides, {trace.background_timeout_rate:.2%} of "
        "all attempts get no answer. A Telegram outage answers 502 to every Bot API call; a GitHub burst answers 502 "
        "to the REST calls the handlers make (installation tokens, pull requests, dispatches, the recovery probe), not "
        "to the deliveries list; an attempt without an answer is handled by the pager, but GitHub records "
        "status_code 0.",
        f"- The sweep runs every {SWEEP_EVERY / 60:.0f} minutes (invoked with its event's id, as EventBridge does), "
        f"and for {DRAIN / 3600:.0f} hours after the last event; with fast recovery the recovery check runs every "
        f"{CHECK_EVERY:.0f} s besides, half a minute out of phase with the faults' ends (which fall on whole "
        "minutes). GitHub carries out the redeliveries asked for right after each run.",
    ]


def section(add: Add, traces: dict[str, fleet.Trace], handled: list[str]) -> None:
    heading(add, "The trace")
    for line in _events(traces["full"], handled) + _subscribed(traces) + _faults_and_schedules(traces["full"]):
        add(line)
    add("")
