"""The figures of one replay, from GitHub's list of attempts, the table and the sweep's runs.

Every event is about a thing (`fleet.thing`: its kind, its repository and what pager keys its record
by: a workflow and branch, an app's check suite, an alert, an issue, a comment, ...); of two events
about one thing the newer is the one pager's handler takes for newer (`fleet.order`: a workflow run's
number, else the time). Only an event pager acts on stands for newer state (an "ignored" one overtakes
nothing).

Definitions (per event, that is per guid, from GitHub's list of attempts):
- failed: an attempt got a 5xx or no answer (GitHub records status_code 0, "timed out");
- recovered: failed, and a later attempt passed; time to recovery runs from the first failed attempt
  to the passing one;
- alarmed: failed, never passed, and a `delivery:<guid>` entry of the control repository's alarm
  (looked at after every run: an entry the sweep closes three days later, when GitHub no longer lists
  the event, was shown all that time);
- superseded: failed, never passed, not alarmed, and a newer event about the same thing, one pager
  acts on, passed: counted as done (the newer one stands);
- ignored: failed, never passed, not alarmed nor superseded, and the pager has no handler for its
  event and action (it answers such an event 200 "ignored", so a redelivery could change nothing and
  nothing is lost);
- lost silently: failed, never passed, neither alarmed, superseded nor ignored;
- dropped as superseded by another thing: lost silently, of a kind the coarse rule applied to
  (`signals.SUPERSEDED`), and a newer event (in the trace's order) of the same kind and repository, one
  pager acts on, passed, though none about the same thing did: the loss of the decision's first rule,
  which took any newer passed event of the kind and repository (another workflow, pull request,
  alert, ...) for a newer state of the failed one. Part of "lost silently";
- stale redelivery: a redelivery that passed, of an event pager acts on, about a thing for which a
  newer event had passed before it; harmless when its handling changed nothing;
- stale redelivery that changed state: a stale redelivery whose handling wrote a signal record, sent
  or edited a Telegram message, or made a dispatch or merge (`changed`: per guid, one flag per attempt
  of the log, as the replay records them; the attempts of a guid without flags all count as changed);
- delivered again after it passed: a redelivery of an event one of whose attempts had passed before
  (the sweep did not see that pass), and how many of them changed state.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter, defaultdict
from typing import Any, Mapping

from pager.signals import SUPERSEDED, acts_on

from . import fleet

INF = float("inf")
RECOVERY_LIMIT = 1800.0  # the target: delivered within 30 minutes of an outage's end
SWEEP_KINDS = ("sweep", "script")  # the sweeps' own records: pager's state, the script's last run


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def measure(trace: fleet.Trace, log: Mapping[str, list[tuple[float, int, bool]]], store: Any,
            runs: list[dict[str, Any]], alarmed_guids: set[str], *, changed: Mapping[str, list[bool]] | None = None,
            sweep_keys: Mapping[str, int] | None = None, budget: int = 50) -> dict[str, Any]:
    """The report's figures for one replay, from GitHub's attempts (`FakeGitHub.log`), the table (a
    `FaultyStore`: its writes and conflicts by key kind) and the runs; `changed` says per guid, for each
    attempt of the log, whether handling it changed state; `sweep_keys` counts the writes of the
    sweeps' own records by key."""
    by_guid = trace.by_guid()

    def failed(code: int) -> bool:  # a 5xx, or no answer (status_code 0, or anything outside 100..599)
        return not 100 <= code <= 499

    first_pass: dict[str, float] = {}
    for guid, attempts in log.items():
        for at, code, _ in attempts:
            if 200 <= code <= 399:
                first_pass[guid] = at
                break
    # Per thing, in pager's order, and per kind and repository, in the trace's order: the events with
    # the time they first passed (never, for one pager ignores), and the suffix minimum of those times.
    things: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], float]]] = defaultdict(list)
    kinds: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], float]]] = defaultdict(list)
    for e in trace.events:
        passed_at = first_pass.get(e.guid, INF) if acts_on(e.event, e.action) else INF
        things[fleet.thing(e)].append((fleet.order(e), passed_at))
        kinds[(e.event, e.repo)].append(((e.seq,), passed_at))
    newer_in_thing, newer_in_kind = _suffixes(things), _suffixes(kinds)

    def newer_passed(e: fleet.Event, before: float = INF) -> bool:
        """A newer event about the same thing passed before `before`."""
        keys, suffix = newer_in_thing[fleet.thing(e)]
        return suffix[bisect.bisect_right(keys, fleet.order(e))] < before

    def newer_of_kind_passed(e: fleet.Event) -> bool:
        """A newer event of the same kind and repository passed (the coarse rule's test)."""
        keys, suffix = newer_in_kind[(e.event, e.repo)]
        return suffix[bisect.bisect_right(keys, (e.seq,))] < INF

    counts = Counter()
    ttr: list[float] = []
    ttr_5xx: list[float] = []
    ttr_no_answer: list[float] = []
    lost: list[str] = []
    outage_rows = []
    failed_events: dict[str, tuple[float, bool]] = {}  # guid -> (first failed attempt, got a 5xx)
    superseded: set[str] = set()
    ignored: set[str] = set()
    alarmed: set[str] = set()
    dropped: set[str] = set()
    lost_5xx: list[str] = []
    stale_changed: list[str] = []
    for guid, attempts in log.items():
        e = by_guid[guid]
        flags = (changed or {}).get(guid)
        if flags is None:
            flags = [True] * len(attempts)  # not recorded: whatever it did counts
        elif len(flags) != len(attempts):
            raise ValueError(f"{guid}: {len(flags)} changed-state flags for {len(attempts)} attempts")
        counts["attempts_changed"] += sum(flags)
        acted = acts_on(e.event, e.action)
        for (at, code, redelivery), flag in zip(attempts, flags):
            if redelivery and guid in first_pass and first_pass[guid] < at:
                counts["again_after_pass"] += 1  # asked for again though it had passed (a pass the sweep missed)
                counts["again_after_pass_changed"] += flag
            if redelivery and 200 <= code <= 399 and acted and newer_passed(e, at):
                counts["stale_redeliveries"] += 1
                if flag:
                    counts["stale_changed"] += 1
                    stale_changed.append(guid)
        fails = [(at, code) for at, code, _ in attempts if failed(code)]
        counts["attempts"] += len(attempts)
        counts["redelivered_attempts"] += sum(1 for a in attempts if a[2])
        if not fails:
            continue
        counts["failed"] += 1
        first_fail = fails[0][0]
        five = any(500 <= code <= 599 for _, code in fails)
        failed_events[guid] = (first_fail, five)
        counts["failed_5xx" if five else "failed_no_answer"] += 1
        if guid in first_pass:
            counts["recovered"] += 1
            ttr.append(first_pass[guid] - first_fail)
            (ttr_5xx if five else ttr_no_answer).append(first_pass[guid] - first_fail)
        elif guid in alarmed_guids:
            counts["alarmed"] += 1
            alarmed.add(guid)
        elif newer_passed(e):
            counts["superseded"] += 1
            superseded.add(guid)
        elif not acted:
            counts["ignored"] += 1
            ignored.add(guid)
        else:
            counts["lost"] += 1
            counts["lost_5xx" if five else "lost_no_answer"] += 1
            lost.append(guid)
            if five:
                lost_5xx.append(guid)
            if e.event in SUPERSEDED and newer_of_kind_passed(e):
                counts["dropped_other"] += 1
                dropped.add(guid)
    lost_set = set(lost)
    for fault in trace.faults:
        # what the fault caused: a 5xx in an outage, no answer in a period without answers
        caused_5xx = fault.kind != "timeout"
        during = [g for g, (t, five) in failed_events.items() if fault.start <= t < fault.end and five == caused_5xx]
        in_time = [g for g in during if first_pass.get(g, INF) <= fault.end + RECOVERY_LIMIT]
        stood = [g for g in during if g in superseded]
        outage_rows.append({"fault": fault.label, "kind": fault.kind, "failed": len(during), "in_time": len(in_time),
                            "superseded": len(stood), "ignored": sum(1 for g in during if g in ignored),
                            "alarmed": sum(1 for g in during if g in alarmed),
                            "late": sum(1 for g in during if g in first_pass and g not in in_time),
                            "lost": sum(1 for g in during if g in lost_set)})
    calls = [r["calls"] for r in runs]
    duration_days = (runs[-1]["at"] - trace.start) / fleet.DAY if runs else trace.days
    writes = dict(store.writes)
    sweep_writes = sum(v for k, v in writes.items() if k in SWEEP_KINDS)
    alarm_writes = writes.get("alarm", 0)
    signal_writes = sum(writes.values()) - sweep_writes - alarm_writes
    return {
        "counts": dict(counts),
        "ttr_median": percentile(ttr, 0.5),
        "ttr_p95": percentile(ttr, 0.95),
        "ttr_5xx_median": percentile(ttr_5xx, 0.5),
        "ttr_no_answer_median": percentile(ttr_no_answer, 0.5),
        "runs": len(runs),
        "calls_mean": statistics.fmean(calls) if calls else 0.0,
        "calls_max": max(calls) if calls else 0,
        "over_budget": sum(1 for c in calls if c > budget),
        "redeliveries": sum(r["redeliveries"] for r in runs),
        "reach_gaps": sum(r["gaps"] for r in runs),
        "runs_aborted": sum(1 for r in runs if r["outcome"].startswith("aborted")),
        "days": duration_days,
        "writes": writes,
        "conflicts": dict(store.conflicts),
        "sweep_keys": {key: n / len(runs) for key, n in (sweep_keys or {}).items()} if runs else {},
        "writes_per_day": sum(writes.values()) / duration_days,
        "sweep_writes_per_day": sweep_writes / duration_days,
        "alarm_writes_per_day": alarm_writes / duration_days,
        "signal_writes_per_day": signal_writes / duration_days,
        "runs_per_day": len(runs) / duration_days,
        "outages": outage_rows,
        "lost_5xx_examples": _examples(trace, by_guid, log, lost_5xx),
        "lost_examples": _examples(trace, by_guid, log, lost),
        "dropped_examples": _examples(trace, by_guid, log, dropped),
        "stale_changed_examples": _examples(trace, by_guid, log, stale_changed),
        "lost_kinds": dict(Counter(by_guid[g].event for g in lost)),
        "dropped_kinds": dict(Counter(by_guid[g].event for g in dropped)),
    }


def _suffixes(groups: Mapping[Any, list[tuple[tuple[Any, ...], float]]]) -> dict[Any, tuple[list[tuple[Any, ...]], list[float]]]:
    """Per group: its keys in order, and for each position the earliest pass at it or after it."""
    out = {}
    for name, rows in groups.items():
        rows = sorted(rows)
        suffix = [INF] * (len(rows) + 1)
        for k in range(len(rows) - 1, -1, -1):
            suffix[k] = min(rows[k][1], suffix[k + 1])
        out[name] = ([key for key, _ in rows], suffix)
    return out


def _examples(trace: fleet.Trace, by_guid: Mapping[str, fleet.Event], log: Mapping[str, list[tuple[float, int, bool]]],
              guids: Any, limit: int = 5) -> list[dict[str, Any]]:
    """The first few events (in the trace's order): guid, kind, action, thing and attempts (seconds
    from the trace's start, status code, redelivery)."""
    return [
        {"guid": g, "event": by_guid[g].event, "action": by_guid[g].action, "thing": fleet.thing(by_guid[g]),
         "attempts": [(round(at - trace.start), code, redelivery) for at, code, redelivery in log[g]]}
        for g in sorted(set(guids), key=lambda g: by_guid[g].seq)[:limit]
    ]
