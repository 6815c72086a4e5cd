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

Per fault (a window of `fleet.Fault`: a Telegram or GitHub outage, a period without answers):
- the events that failed in it: their first failed attempt inside the window, failing the way it fails
  (a 5xx in an outage, no answer in a period without answers);
- from its end to the passing redelivery: for each of those that later passed, the seconds from the
  window's end to the attempt that passed (0 when it passed before the end);
- alarmed because its attempts were spent in it: an alarmed event whose failed attempts all fell inside
  the window, or whose last allowed attempt (the `max_attempts`-th) did;
- writes per outage: the webhook's writes of the sweep's `waiting` item (a delivery's note of what waits,
  pager.waiting) from the outage's start to the next outage's, and the table writes of the sweep runs
  the check started then (their deliveries item, the note cleared, the alarm's records).
"""

from __future__ import annotations

import bisect
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pager.signals import SUPERSEDED, acts_on
from pager.sweep.health import HELD_SAID_SECONDS
from pager.sweep.lease import ITEM as LEASE_ITEM
from pager.waiting import SWEEP_KEY

from . import fleet

INF = float("inf")
RECOVERY_LIMIT = 1800.0  # the target: delivered within 30 minutes of an outage's end
SWEEP_KINDS = ("sweep", "sweep-followed", "script")  # the sweeps' own records: pager's state and its followed events, the script's last run
OUTAGE_KINDS = ("telegram", "github")  # faults that fail a handler's step (a 500), not the answer's time
LONG_OUTAGE = 3 * 3600.0  # the target: none alarmed because its attempts were spent in a shorter outage

Log = Mapping[str, list[tuple[float, int, bool]]]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def spread(values: list[float]) -> dict[str, Any]:
    """Median, 95th percentile, max and count of a list of seconds."""
    return {"median": percentile(values, 0.5), "p95": percentile(values, 0.95), "max": max(values, default=None),
            "n": len(values)}


def failed(code: int) -> bool:
    """A 5xx, API Gateway's throttle (429: pager did not run), or no answer (status_code 0, or anything outside
    100..599)."""
    return code == 429 or not 100 <= code <= 499


def passed(code: int) -> bool:
    return 200 <= code <= 399


# ------------------------------------------------------------------------ newer events about a thing


class Newer:
    """Per thing, in pager's order, and per kind and repository, in the trace's order: whether a newer
    event pager acts on passed (before a time)."""

    def __init__(self, trace: fleet.Trace, first_pass: Mapping[str, float]) -> None:
        things: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], float]]] = defaultdict(list)
        kinds: dict[tuple[Any, ...], list[tuple[tuple[Any, ...], float]]] = defaultdict(list)
        for e in trace.events:
            passed_at = first_pass.get(e.guid, INF) if acts_on(e.event, e.action) else INF
            things[fleet.thing(e)].append((fleet.order(e), passed_at))
            kinds[(e.event, e.repo)].append(((e.seq,), passed_at))
        self._things, self._kinds = _suffixes(things), _suffixes(kinds)

    def about_the_thing(self, e: fleet.Event, before: float = INF) -> bool:
        """A newer event about the same thing passed before `before`."""
        keys, suffix = self._things[fleet.thing(e)]
        return suffix[bisect.bisect_right(keys, fleet.order(e))] < before

    def of_the_kind(self, e: fleet.Event) -> bool:
        """A newer event of the same kind and repository passed (the coarse rule's test)."""
        keys, suffix = self._kinds[(e.event, e.repo)]
        return suffix[bisect.bisect_right(keys, (e.seq,))] < INF


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


# ------------------------------------------------------------------------------ each failed event


@dataclass
class Fates:
    """What became of the events of a replay: the counts, and the guids of each fate."""

    counts: Counter[str] = field(default_factory=Counter)
    first_pass: dict[str, float] = field(default_factory=dict)
    failed: dict[str, tuple[float, bool]] = field(default_factory=dict)  # guid -> (first failed attempt, got a 5xx)
    ttr: list[float] = field(default_factory=list)
    ttr_5xx: list[float] = field(default_factory=list)
    ttr_no_answer: list[float] = field(default_factory=list)
    alarmed: set[str] = field(default_factory=set)
    superseded: set[str] = field(default_factory=set)
    ignored: set[str] = field(default_factory=set)
    dropped: set[str] = field(default_factory=set)
    lost: list[str] = field(default_factory=list)
    lost_5xx: list[str] = field(default_factory=list)
    stale_changed: list[str] = field(default_factory=list)


def _first_passes(log: Log) -> dict[str, float]:
    out = {}
    for guid, attempts in log.items():
        at = next((at for at, code, _ in attempts if passed(code)), None)
        if at is not None:
            out[guid] = at
    return out


def _flags(guid: str, attempts: list[tuple[float, int, bool]], changed: Mapping[str, list[bool]] | None) -> list[bool]:
    flags = (changed or {}).get(guid)
    if flags is None:
        return [True] * len(attempts)  # not recorded: whatever it did counts
    if len(flags) != len(attempts):
        raise ValueError(f"{guid}: {len(flags)} changed-state flags for {len(attempts)} attempts")
    return flags


def _attempts(fates: Fates, newer: Newer, e: fleet.Event, attempts: list[tuple[float, int, bool]], flags: list[bool]) -> None:
    """Count one event's attempts: asked for again after a pass, stale redeliveries and what they changed."""
    c, guid = fates.counts, e.guid
    first = fates.first_pass.get(guid, INF)
    acted = acts_on(e.event, e.action)
    c["attempts_changed"] += sum(flags)
    c["attempts"] += len(attempts)
    for (at, code, redelivery), flag in zip(attempts, flags, strict=True):
        c["redelivered_attempts"] += redelivery
        if redelivery and first < at:
            c["again_after_pass"] += 1  # asked for again though it had passed (a pass the sweep missed)
            c["again_after_pass_changed"] += flag
        if redelivery and passed(code) and acted and newer.about_the_thing(e, at):
            c["stale_redeliveries"] += 1
            if flag:
                c["stale_changed"] += 1
                fates.stale_changed.append(guid)


def _fate(fates: Fates, newer: Newer, e: fleet.Event, fails: list[tuple[float, int]], alarmed: set[str]) -> None:
    """Decide what became of one failed event."""
    c, guid = fates.counts, e.guid
    c["failed"] += 1
    first_fail = fails[0][0]
    five = any(500 <= code <= 599 for _, code in fails)
    fates.failed[guid] = (first_fail, five)
    c["failed_5xx" if five else "failed_no_answer"] += 1
    if guid in fates.first_pass:
        c["recovered"] += 1
        seconds = fates.first_pass[guid] - first_fail
        fates.ttr.append(seconds)
        (fates.ttr_5xx if five else fates.ttr_no_answer).append(seconds)
    elif guid in alarmed:
        c["alarmed"] += 1
        fates.alarmed.add(guid)
    elif newer.about_the_thing(e):
        c["superseded"] += 1
        fates.superseded.add(guid)
    elif not acts_on(e.event, e.action):
        c["ignored"] += 1
        fates.ignored.add(guid)
    else:
        c["lost"] += 1
        c["lost_5xx" if five else "lost_no_answer"] += 1
        fates.lost.append(guid)
        if five:
            fates.lost_5xx.append(guid)
        if e.event in SUPERSEDED and newer.of_the_kind(e):
            c["dropped_other"] += 1
            fates.dropped.add(guid)


def fates_of(trace: fleet.Trace, log: Log, alarmed: set[str], changed: Mapping[str, list[bool]] | None = None) -> Fates:
    """Every event of the log, attempt by attempt, and each failed one's fate."""
    by_guid = trace.by_guid()
    fates = Fates(first_pass=_first_passes(log))
    newer = Newer(trace, fates.first_pass)
    for guid, attempts in log.items():
        e = by_guid[guid]
        _attempts(fates, newer, e, attempts, _flags(guid, attempts, changed))
        fails = [(at, code) for at, code, _ in attempts if failed(code)]
        if fails:
            _fate(fates, newer, e, fails, alarmed)
    return fates


# -------------------------------------------------------------------------------------- each fault


def _spent_in(attempts: list[tuple[float, int, bool]], fault: fleet.Fault, max_attempts: int) -> bool:
    """Whether an event's attempts were spent in the fault's window: all its failed attempts fell inside
    it, or its last allowed attempt did."""
    fails = [at for at, code, _ in attempts if failed(code)]
    if fails and all(fault.start <= at < fault.end for at in fails):
        return True
    return len(attempts) >= max_attempts and fault.start <= attempts[max_attempts - 1][0] < fault.end


def _outage_of(starts: list[float], at: float) -> int | None:
    """The index of the outage (by start) a time falls in: from its start to the next one's."""
    k = bisect.bisect_right(starts, at) - 1
    return k if k >= 0 else None


def _attributed(trace: fleet.Trace, runs: list[dict[str, Any]], recovery_writes: Iterable[float]) -> tuple[Counter[int], Counter[int]]:
    """Per outage (by its index in the trace's faults): the deliveries' notes of what waits from its start
    to the next outage's, and the table writes of the runs the recovery check started from its start to the
    next fault's (a period without answers holds pager's own endpoint: the ping gets none; its run is its own)."""
    outages = sorted((k for k, f in enumerate(trace.faults) if f.kind in OUTAGE_KINDS), key=lambda k: trace.faults[k].start)
    starts = [trace.faults[k].start for k in outages]
    faults = sorted(range(len(trace.faults)), key=lambda k: trace.faults[k].start)
    fault_starts = [trace.faults[k].start for k in faults]
    writes: Counter[int] = Counter()
    run_writes: Counter[int] = Counter()
    for at in recovery_writes:
        k = _outage_of(starts, at)
        if k is not None:
            writes[outages[k]] += 1
    for run in runs:
        k = _outage_of(fault_starts, run["at"]) if run.get("kind") == "check" else None
        if k is not None:
            run_writes[faults[k]] += run.get("own_writes", run.get("writes", 0))  # the sweep's own and pager's health
    return writes, run_writes


def _fault_row(fault: fleet.Fault, fates: Fates, lost: set[str]) -> dict[str, Any]:
    caused_5xx = fault.kind != "timeout"
    during = [g for g, (t, five) in fates.failed.items() if fault.start <= t < fault.end and five == caused_5xx]
    first_pass = fates.first_pass
    in_time = {g for g in during if first_pass.get(g, INF) <= fault.end + RECOVERY_LIMIT}
    return {"fault": fault.label, "kind": fault.kind, "seconds": fault.end - fault.start, "failed": len(during),
            "in_time": len(in_time), "superseded": sum(1 for g in during if g in fates.superseded),
            "ignored": sum(1 for g in during if g in fates.ignored),
            "alarmed": sum(1 for g in during if g in fates.alarmed),
            "late": sum(1 for g in during if g in first_pass and g not in in_time),
            "lost": sum(1 for g in during if g in lost),
            "to_pass": [max(0.0, first_pass[g] - fault.end) for g in during if g in first_pass]}


def fault_rows(trace: fleet.Trace, log: Log, fates: Fates, *, runs: list[dict[str, Any]], recovery_writes: Iterable[float],
               max_attempts: int) -> list[dict[str, Any]]:
    """One row per fault of the trace: what failed in it and became of it (see the module docstring)."""
    writes, run_writes = _attributed(trace, runs, recovery_writes)
    unplaced, lost = set(fates.alarmed), set(fates.lost)
    rows = []
    for k, fault in enumerate(trace.faults):
        spent = {g for g in unplaced if _spent_in(log[g], fault, max_attempts)}
        unplaced -= spent
        outage = fault.kind in OUTAGE_KINDS
        rows.append({**_fault_row(fault, fates, lost), "spent_alarmed": len(spent),
                     "recovery_writes": writes[k] if outage else None,
                     "check_run_writes": run_writes[k] if outage or fault.kind == "timeout" else None})
    return rows


def to_pass(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """From each fault's end to its events' passing attempts, for all faults, the outages (Telegram,
    GitHub) and the periods without answers."""
    return {name: spread([s for row in rows if row["kind"] in kinds for s in row["to_pass"]])
            for name, kinds in (("all", ("telegram", "github", "timeout")), ("outage", OUTAGE_KINDS),
                                ("no_answer", ("timeout",)))}


def writes_per_outage(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per outage in which a delivery noted what waits: the notes, the writes of the sweep runs the
    recovery check started, and both together."""
    noted = [row for row in rows if row["recovery_writes"]]
    per = [row["recovery_writes"] for row in noted]
    runs = [row["check_run_writes"] for row in noted]
    both = [a + b for a, b in zip(per, runs, strict=True)]
    # an outage of half an hour or more is said in pager's own message (HELD_SAID_SECONDS): its entry closes
    said = [total for row, total in zip(noted, both, strict=True) if row["seconds"] >= HELD_SAID_SECONDS]
    unsaid = [total for row, total in zip(noted, both, strict=True) if row["seconds"] < HELD_SAID_SECONDS]
    # a period without answers: the ping gets none, pager's own endpoint is held, the check's run releases it
    own = [row["check_run_writes"] for row in rows if row["kind"] == "timeout" and row["check_run_writes"]]
    return {"outages": sum(1 for row in rows if row["kind"] in OUTAGE_KINDS), "noted": len(noted),
            "own_holds": len(own), "own_max": max(own, default=0),
            "said_max": max(said, default=0), "unsaid_max": max(unsaid, default=0),
            "mean": statistics.fmean(per) if per else 0.0, "max": max(per, default=0),
            "check_run_mean": statistics.fmean(runs) if runs else 0.0, "check_run_max": max(runs, default=0),
            "total_mean": statistics.fmean(both) if both else 0.0, "total_max": max(both, default=0)}


# ----------------------------------------------------------------------------------- runs, writes


def _runs(runs: list[dict[str, Any]], checks: list[dict[str, Any]], budget: int) -> dict[str, Any]:
    calls = [r["calls"] for r in runs]
    alone = [c["calls"] for c in checks if not c.get("swept")]  # checks that ran no sweep
    return {
        "runs": len(runs),
        "scheduled_runs": sum(1 for r in runs if r.get("kind", "scheduled") == "scheduled"),
        "check_runs": sum(1 for r in runs if r.get("kind") == "check"),
        "held_runs": sum(1 for r in runs if r.get("held") or r.get("recovery", "").startswith("held")),
        "checks": len(checks),
        "checks_calls_max": max(alone, default=0),
        "calls_mean": statistics.fmean(calls) if calls else 0.0,
        "calls_max": max(calls, default=0),
        "over_budget": sum(1 for c in calls + alone if c > budget),
        "redeliveries": sum(r["redeliveries"] for r in runs),
        "reach_gaps": sum(r["gaps"] for r in runs),
        "runs_aborted": sum(1 for r in runs if r["outcome"].startswith("aborted")),
        "state_bytes": spread([float(r["state_bytes"]) for r in runs if r.get("state_bytes")]),
    }


def _writes(store: Any, days: float, notes: int) -> dict[str, Any]:
    """The table's writes by what they are for; `notes`: the sweep state's writes that were a handler's
    note of what waits (pager.sweep.recovery), not a run's."""
    writes = dict(store.writes)
    recovery = notes
    sweep = sum(v for k, v in writes.items() if k in SWEEP_KINDS) - recovery
    alarm = writes.get("alarm", 0)
    signal = sum(writes.values()) - sweep - alarm - recovery
    return {
        "writes": writes,
        "conflicts": dict(store.conflicts),
        "writes_per_day": sum(writes.values()) / days,
        "sweep_writes_per_day": sweep / days,
        "alarm_writes_per_day": alarm / days,
        "recovery_writes_per_day": recovery / days,
        "signal_writes_per_day": signal / days,
    }


def measure(trace: fleet.Trace, log: Log, store: Any, runs: list[dict[str, Any]], alarmed_guids: set[str], *,
            changed: Mapping[str, list[bool]] | None = None, sweep_keys: Mapping[str, int] | None = None,
            budget: int = 50, checks: list[dict[str, Any]] | None = None, recovery_writes: Iterable[float] = (),
            max_attempts: int = 3) -> dict[str, Any]:
    """The report's figures for one replay, from GitHub's attempts (`FakeGitHub.log`), the table (a
    `FaultyStore`: its writes and conflicts by key kind) and the runs (each sweep run: scheduled, or
    started by the recovery check) and `checks` (each recovery check); `changed` says per guid, for each
    attempt of the log, whether handling it changed state; `sweep_keys` counts the writes of the
    sweeps' own records by key; `recovery_writes` are the times a delivery noted what waits."""
    recovery_writes = list(recovery_writes)
    by_guid = trace.by_guid()
    fates = fates_of(trace, log, alarmed_guids, changed)
    rows = fault_rows(trace, log, fates, runs=runs, recovery_writes=recovery_writes, max_attempts=max_attempts)
    counts = fates.counts
    counts["spent_alarmed"] = sum(row["spent_alarmed"] for row in rows)
    counts["spent_alarmed_short"] = sum(row["spent_alarmed"] for row in rows if row["seconds"] < LONG_OUTAGE)
    duration_days = (runs[-1]["at"] - trace.start) / fleet.DAY if runs else trace.days
    return {
        "counts": dict(counts),
        "ttr_median": percentile(fates.ttr, 0.5),
        "ttr_p95": percentile(fates.ttr, 0.95),
        "ttr_5xx_median": percentile(fates.ttr_5xx, 0.5),
        "ttr_no_answer_median": percentile(fates.ttr_no_answer, 0.5),
        "to_pass": to_pass(rows),
        "recovery": writes_per_outage(rows),
        **_runs(runs, checks or [], budget),
        **_writes(store, duration_days, len(recovery_writes)),
        "days": duration_days,
        "sweep_keys": {key: n / len(runs) for key, n in (sweep_keys or {}).items()} if runs else {},
        "runs_per_day": len(runs) / duration_days,
        # the sweep's lease (pager.sweep.lease): taken and given back by every run, taken by every check that asks
        "lease_writes_per_day": (sweep_keys or {}).get(f"{SWEEP_KEY} [{LEASE_ITEM}]", 0) / duration_days,
        "outages": rows,
        "lost_5xx_examples": _examples(trace, by_guid, log, fates.lost_5xx),
        "lost_examples": _examples(trace, by_guid, log, fates.lost),
        "dropped_examples": _examples(trace, by_guid, log, fates.dropped),
        "stale_changed_examples": _examples(trace, by_guid, log, fates.stale_changed),
        "lost_kinds": dict(Counter(by_guid[g].event for g in fates.lost)),
        "dropped_kinds": dict(Counter(by_guid[g].event for g in fates.dropped)),
    }


def _examples(trace: fleet.Trace, by_guid: Mapping[str, fleet.Event], log: Log, guids: Any, limit: int = 5) -> list[dict[str, Any]]:
    """The first few events (in the trace's order): guid, kind, action, thing and attempts (seconds
    from the trace's start, status code, redelivery)."""
    return [
        {"guid": g, "event": by_guid[g].event, "action": by_guid[g].action, "thing": fleet.thing(by_guid[g]),
         "attempts": [(round(at - trace.start), code, redelivery) for at, code, redelivery in log[g]]}
        for g in sorted(set(guids), key=lambda g: by_guid[g].seq)[:limit]
    ]
