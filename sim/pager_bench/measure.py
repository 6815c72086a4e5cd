"""The figures of one replay, from GitHub's list of attempts, the table and the sweep's runs.

Definitions (per event, that is per guid, from GitHub's list of attempts):
- failed: an attempt got a 5xx or no answer (GitHub records status_code 0, "timed out");
- recovered: failed, and a later attempt passed; time to recovery runs from the first failed attempt
  to the passing one;
- alarmed: failed, never passed, and a `delivery:<guid>` entry of the control repository's alarm
  (looked at after every run: an entry the sweep closes three days later, when GitHub no longer lists
  the event, was shown all that time);
- superseded: failed, never passed, of a kind in SUPERSEDED, and a newer event of the same kind and
  repository, one the pager acts on, passed;
- ignored: failed, never passed, and the pager has no handler for its event and action (it answers
  such an event 200 "ignored", so a redelivery could change nothing and nothing is lost);
- lost silently: failed, never passed, neither alarmed, superseded nor ignored;
- stale redelivery applied: a redelivery of a SUPERSEDED kind that passed after a newer event of the
  same kind and repository had passed.
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter, defaultdict
from typing import Any, Mapping

from pager.signals import SUPERSEDED, acts_on

from . import fleet

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
            runs: list[dict[str, Any]], alarmed_guids: set[str], *, sweep_keys: Mapping[str, int] | None = None,
            budget: int = 50) -> dict[str, Any]:
    """The report's figures for one replay, from GitHub's attempts (`FakeGitHub.log`), the table (a
    `FaultyStore`: its writes and conflicts by key kind) and the runs; `sweep_keys` counts the writes
    of the sweeps' own records by key."""
    by_guid = trace.by_guid()

    def failed(code: int) -> bool:  # a 5xx, or no answer (status_code 0, or anything outside 100..599)
        return not 100 <= code <= 499

    first_pass: dict[str, float] = {}
    for guid, attempts in log.items():
        for at, code, _ in attempts:
            if 200 <= code <= 399:
                first_pass[guid] = at
                break
    # per kind and repository: events in trace order with their first pass, and the suffix minimum
    newer_pass: dict[tuple[str, int], tuple[list[int], list[float]]] = {}
    groups: dict[tuple[str, int], list[tuple[int, float]]] = defaultdict(list)
    for e in trace.events:
        # only an event a handler applied stands for newer state (an "ignored" one overtakes nothing)
        passed_at = first_pass.get(e.guid, float("inf")) if acts_on(e.event, e.action) else float("inf")
        groups[(e.event, e.repo)].append((e.seq, passed_at))
    for key, rows in groups.items():
        seqs = [s for s, _ in rows]
        suffix = [float("inf")] * (len(rows) + 1)
        for k in range(len(rows) - 1, -1, -1):
            suffix[k] = min(rows[k][1], suffix[k + 1])
        newer_pass[key] = (seqs, suffix)

    def newer_passed_before(e: fleet.Event, t: float) -> bool:
        seqs, suffix = newer_pass[(e.event, e.repo)]
        k = bisect.bisect_right(seqs, e.seq)
        return suffix[k] < t

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
    lost_5xx: list[str] = []
    for guid, attempts in log.items():
        e = by_guid[guid]
        for at, code, redelivery in attempts:
            if redelivery and 200 <= code <= 399 and e.event in SUPERSEDED and newer_passed_before(e, at):
                counts["stale_applied"] += 1
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
        elif e.event in SUPERSEDED and newer_passed_before(e, float("inf")):
            counts["superseded"] += 1
            superseded.add(guid)
        elif not acts_on(e.event, e.action):
            counts["ignored"] += 1
            ignored.add(guid)
        else:
            counts["lost"] += 1
            counts["lost_5xx" if five else "lost_no_answer"] += 1
            lost.append(guid)
            if five:
                lost_5xx.append(guid)
    for fault in trace.faults:
        # what the fault caused: a 5xx in an outage, no answer in a period without answers
        caused_5xx = fault.kind != "timeout"
        during = [g for g, (t, five) in failed_events.items() if fault.start <= t < fault.end and five == caused_5xx]
        in_time = [g for g in during if first_pass.get(g, float("inf")) <= fault.end + RECOVERY_LIMIT]
        stood = [g for g in during if g in superseded]
        outage_rows.append({"fault": fault.label, "kind": fault.kind, "failed": len(during), "in_time": len(in_time),
                            "superseded": len(stood), "ignored": sum(1 for g in during if g in ignored),
                            "alarmed": sum(1 for g in during if g in alarmed)})
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
        "lost_5xx_examples": [
            {"guid": g, "event": by_guid[g].event, "action": by_guid[g].action,
             "attempts": [(round(at - trace.start), code, redelivery) for at, code, redelivery in log[g]]}
            for g in sorted(lost_5xx, key=lambda g: by_guid[g].seq)[:5]
        ],
        "lost_kinds": dict(Counter(by_guid[g].event for g in lost)),
    }
