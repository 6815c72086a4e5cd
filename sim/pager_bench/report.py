"""docs/benchmarks.md: the trace, what users feel on both traces, the sweeps side by side, recovery per
fault, the custom metrics, the stack's weekly AWS cost, the targets (pager), what the maintainer's phone
lives through (`phone_report`), the lean hot path, the handler's cost, the cold start, and how to read it.
Each section is a function of its own."""

from __future__ import annotations

import argparse
import os
import platform
from collections import Counter
from collections.abc import Callable
from typing import Any

from pager.observe import METRICS
from pager.values import iso

from . import bill, fleet, phone_report, prices, scale_report
from .costs import BEFORE, HEAVY, NOT_FOR_IGNORED
from .measure import LONG_OUTAGE, RECOVERY_LIMIT, percentile
from .simulate import CHECK_EVERY, DESIGNS, DRAIN, PAGER_DESIGNS, SWEEP_EVERY

Add = Callable[[str], None]
Results = dict[str, dict[str, Any]]  # design -> one replay's figures
Bills = dict[str, dict[str, list[bill.Line]]]  # trace -> design -> the weekly bill

TRACES = {"full": "the full trace", "subscribed": "the subscribed events only"}
TO_PASS_MEDIAN, TO_PASS_P95 = 120.0, 240.0  # the targets: from an outage's end to the passing redelivery
COST_TARGET_MONTH = 1.50  # $ a month at list prices, a default deployment for the busy fleet
WRITES_PER_OUTAGE = 2  # the writes an outage may add: the note, and the commit of the run the check starts


def _fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def _pct(part: int, whole: int) -> str:
    return "–" if not whole else f"{100 * part / whole:.1f}%"


def _n(value: float) -> str:
    """A count that may be a median of counts: 4, or 3.5."""
    return f"{value:g}"


def _count(value: float, word: str) -> str:
    return f"{_n(value)} {word}" + ("" if value == 1 else "s")


def _spread(s: dict[str, Any]) -> str:
    """Median / 95th percentile (of how many)."""
    if not s["n"]:
        return "– (none passed)"
    return f"{_fmt_s(s['median'])} / {_fmt_s(s['p95'])} (of {s['n']:,})"


def _which(loaded: list[str], botocore: list[str] | None = None) -> str:
    names = [name for name in HEAVY if name in loaded]
    if not names:
        return "none"
    if len(names) == len(HEAVY):
        return "all six"
    text = ", ".join(names)
    if names == ["botocore"] and botocore == ["botocore"]:
        return "botocore only (its top-level package)"
    return text


def _money(dollars: float) -> str:
    return f"${dollars:.3f}" if dollars < 10 else f"${dollars:,.2f}"


def bills_of(results: dict[str, Results], imports: dict[str, Any] | None) -> Bills:
    """The weekly bill of each replay of pager's own code (its sweep, its schedules)."""
    template = bill.template_resources()
    return {name: {d: bill.weekly(r["aws"], imports=imports, template=template) for d, r in rs.items() if d in PAGER_DESIGNS}
            for name, rs in results.items()}


# ------------------------------------------------------------------------------------------ targets


def _delivery_targets(p: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    c = p["counts"]
    rows: list[tuple[str, str, bool | None]] = [
        ("on the busy trace no 5xx failure lost silently",
         f"{c.get('lost_5xx', 0)} of {c.get('failed_5xx', 0)} events that got a 5xx", c.get("lost_5xx", 0) == 0),
        ("no failed event dropped as superseded by another thing (a newer passed event of the same kind and "
         "repository, about another workflow, pull request, alert, ...)",
         f"{c.get('dropped_other', 0)} of {c.get('failed', 0)} failed events", c.get("dropped_other", 0) == 0),
        ("no stale redelivery changed state (a redelivery that passed after a newer event about the same thing "
         "had passed: no table write, Telegram message or edit, dispatch or merge)",
         f"{c.get('stale_changed', 0)} of {c.get('stale_redeliveries', 0)} stale redeliveries", c.get("stale_changed", 0) == 0),
    ]
    for kinds, what in ((("telegram", "github"), "an outage (Telegram 502, GitHub 5xx)"), (("timeout",), "a period without answers")):
        outages = [o for o in p["outages"] if o["kind"] in kinds]
        failed = sum(o["failed"] for o in outages)
        in_time, stood, idle = (sum(o[key] for o in outages) for key in ("in_time", "superseded", "ignored"))
        share = (in_time + stood + idle) / failed if failed else 1.0
        rows.append((f"≥ 99% of events that failed during {what} delivered within {RECOVERY_LIMIT / 60:.0f} min of its end "
                     "(an event superseded by a newer passed one about the same thing counts as done: the newer one "
                     "stands; so does one the pager only ignores)",
                     f"{in_time} delivered + {stood} superseded + {idle} ignored of {failed} ({share:.1%}); "
                     f"{sum(o['alarmed'] for o in outages)} alarmed"
                     + (f"; met only by counting the superseded and the ignored as done: delivered alone "
                        f"{in_time / failed:.1%}" if failed and share >= 0.99 and in_time / failed < 0.99 else ""),
                     share >= 0.99))
    return rows


def _recovery_targets(p: dict[str, Any], budget: int) -> list[tuple[str, str, bool | None]]:
    c, t, rec = p["counts"], p["to_pass"], p["recovery"]
    outage = t["outage"]  # the target is about outages; a period without answers is shown beside it
    met = outage["n"] == 0 or (outage["median"] <= TO_PASS_MEDIAN and outage["p95"] <= TO_PASS_P95)
    expected = p["runs_per_day"] + p["alarm_writes_per_day"] + p["signal_writes_per_day"] + p["recovery_writes_per_day"]
    return [
        (f"from an outage's end (Telegram 502, GitHub 5xx) to each of its events' passing redelivery: median "
         f"≤ {_fmt_s(TO_PASS_MEDIAN)}, 95th percentile ≤ {_fmt_s(TO_PASS_P95)}",
         f"{_spread(outage)}; besides, after a period without answers (the handler acted; GitHub did not wait for "
         f"its answer, and the 15-minute runs bring these back) {_spread(t['no_answer'])}", met),
        (f"no event alarmed because its attempts were spent during an outage shorter than {LONG_OUTAGE / 3600:.0f} hours",
         f"{c.get('spent_alarmed_short', 0)} (in any fault: {c.get('spent_alarmed', 0)})", c.get("spent_alarmed_short", 0) == 0),
        (f"writes: at most {WRITES_PER_OUTAGE} per outage beyond the scheduled runs' own (a delivery's note of what "
         "waits, when the outage starts; the commit of the run the recovery check starts, which clears it)",
         f"at most {rec['total_max']} per outage, {rec['total_mean']:.1f} on average over the {rec['noted']} outages that "
         f"noted something (of {rec['outages']}): the notes {rec['mean']:.1f} (at most {rec['max']}), the runs the "
         f"check started (their state, the alarm's records) {rec['check_run_mean']:.1f} (at most {rec['check_run_max']})",
         rec["total_max"] <= WRITES_PER_OUTAGE),
        (f"calls: at most the call budget ({budget}) in every run and every recovery check",
         f"runs: max {p['calls_max']}, mean {p['calls_mean']:.1f}; checks without a run: max {p['checks_calls_max']}; "
         f"{p['over_budget']} over", p["over_budget"] == 0),
        ("table writes per day within 10% of one per run plus the alarm and signal records and the notes of what waits",
         f"{p['writes_per_day']:.0f} per day against {expected:.0f} ({p['runs_per_day']:.0f} runs + "
         f"{p['alarm_writes_per_day']:.0f} alarm + {p['signal_writes_per_day']:.0f} signal + "
         f"{p['recovery_writes_per_day']:.1f} notes): {p['writes_per_day'] / expected - 1:+.0%}" if expected else "–",
         abs(p["writes_per_day"] - expected) <= 0.1 * expected if expected else None),
    ]


def _cost_targets(bills: dict[str, list[bill.Line]] | None) -> list[tuple[str, str, bool | None]]:
    """The bill of a default deployment (the subscribed events: what the README's app receives; else the full
    trace) against both targets, a month at list prices and what the always-free allowances leave."""
    if not bills:
        return []
    name = "subscribed" if "subscribed" in bills else "full"
    lines = bills[name]
    month = prices.WEEKS_PER_MONTH
    listed, after = bill.total(lines) * month, bill.total_after_always_free(lines) * month
    largest = sorted(lines, key=lambda line: -line.dollars)[:4]
    left = [line for line in lines if line.after_always_free * month >= 0.005]
    also = "; ".join(f"{TRACES[n]}: {_money(bill.total(bills[n]) * month)}" for n in bills if n != name)
    return [
        (f"a default deployment for the busy fleet ({TRACES[name]}) costs at most ${COST_TARGET_MONTH:.2f} a month at "
         "list prices, none of the free tier left",
         f"{_money(listed)} a month (the largest lines: " + ", ".join(
             f"{line.service} {line.item.split(' (')[0]} {_money(line.dollars * month)}" for line in largest)
         + ")" + (f"; {also}" if also else ""), listed <= COST_TARGET_MONTH),
        ("... and $0 within AWS's always-free allowances",
         f"{_money(after)} a month: " + (", ".join(
             f"{line.service} {line.item.split(' (')[0]} {_money(line.after_always_free * month)}"
             + ("" if line.free is None else " (its free tier is a new account's first 12 months only)")
             for line in left) if left else "nothing left"), after < 0.005),
    ]


def _handler_targets(cost: dict[str, Any] | None, imports: dict[str, Any] | None,
                     modules: dict[str, Any] | None) -> list[tuple[str, str, bool | None]]:
    rows: list[tuple[str, str, bool | None]] = []
    if cost:
        ig, co = cost["ignored"], cost["contribution"]
        rows += [
            ("webhook warm, timed at `lambda_handler` (the resolver and the metrics flush included): its cost per "
             "delivery within 3× the floor (an ignored event)",
             f"{ig['app_us']:.0f} µs against {ig['floor_us']:.0f} µs: {ig['app_ratio']:.1f}× "
             f"(`handle_github` alone {ig['ratio']:.1f}×)", ig["app_ratio"] <= 3),
            ("the same for a contribution (its own cost: time in the fake GitHub and Telegram left out)",
             f"{co['app_own_us']:.0f} µs against {co['floor_us']:.0f} µs: {co['app_own_ratio']:.1f}× "
             f"(`handle_github` alone {co['own_ratio']:.1f}×); its {_n(co['calls'])} HTTP calls alone, through `requests` "
             f"and the fakes' transport to an answer made at once, take {co['calls'] * co['bare_call_us']:.0f} µs, "
             f"{co['calls'] * co['bare_call_us'] / co['floor_us']:.1f}× the floor", co["app_own_ratio"] <= 3),
            ("a contribution takes at most 4 round trips to the table",
             f"{_n(co['round_trips'])} ({_count(co['round_trips_loads'], 'load')} + {_count(co['writes'], 'write')}; "
             f"at most {co['round_trips_max']} in any delivery of the run)", co["round_trips_max"] <= 4),
        ]
    if modules:
        heavy = [name for name in NOT_FOR_IGNORED if name in modules["loaded"]]
        rows.append(("an ignored delivery loads none of " + ", ".join(NOT_FOR_IGNORED),
                     (f"loads {', '.join(heavy)}" if heavy else "none of them") + f" ({modules['modules']} modules in all)",
                     not heavy))
    if imports:
        w = imports["webhook_compiled"]
        rows.append(("cold import of the webhook function under 0.5 s with compiled bytecode",
                     f"{w['module'] * 1000:.0f} ms (with its first invocation: {w['first_invocation'] * 1000:.0f} ms)",
                     w["module"] < 0.5))
    return rows


def targets(results: Results, cost: dict[str, Any] | None, imports: dict[str, Any] | None,
            modules: dict[str, Any] | None, budget: int,
            bills: dict[str, list[bill.Line]] | None = None) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) for pager (with fast recovery) on the full trace, its weekly bill
    (`lines`) and its webhook function."""
    p = results["pager"]
    return (_delivery_targets(p) + _recovery_targets(p, budget) + _cost_targets(bills)
            + _handler_targets(cost, imports, modules))


# ------------------------------------------------------------------------------------------ sections


def header(add: Add, args: argparse.Namespace, elapsed: float) -> None:
    add("# Benchmarks")
    add("")
    add(f"Written by `make bench` (`python -m pager_bench --days {args.days:g} --seed {args.seed}`) on "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs; the whole run took {elapsed / 60:.1f} min. "
        "Everything runs in process on a virtual clock, in the fake world of `pager_world`: GitHub and Telegram are "
        "its `FakeGitHub` and `FakeTelegram`, the table is the in-memory store behind its `FaultyStore` (every load and "
        "write counted), and each delivery goes through the real `functions/webhook/app.py:lambda_handler` with a "
        "signed API Gateway event. The code is the package `sim/pager_bench`; definitions are in the docstring of "
        "`sim/pager_bench/measure.py`, the bill's model in `sim/pager_bench/bill.py`, the prices in "
        "`sim/pager_bench/prices.py`.")
    add("")


LIKE_FOR_LIKE = ("Like for like: every column replays the same events (the same guids, times and faults, the same "
                 "population), and all but the first run on the same 15-minute schedule; the first adds pager's "
                 "every-minute recovery check, which no other design has (pager's own 15-minute column is the one to "
                 "set beside the others). A figure followed by \"(of N)\" is taken over the N events it applies to, "
                 "which differ by design (those that passed, for a wait).")


def _designs_head(add: Add, names: list[str], corner: str = "") -> None:
    """A table's head with a column per design."""
    add(f"| {corner + ' ' if corner else ''}| " + " | ".join(DESIGNS[d] for d in names) + " |")
    add("|---|" + "---:|" * len(names))


def trace_section(add: Add, traces: dict[str, fleet.Trace], handled: list[str]) -> None:
    trace = traces["full"]
    quarters = trace.runs_per_quarter
    per_quarter = Counter(int((e.at - trace.start) // fleet.QUARTER) for e in trace.events)
    add("## The trace")
    add("")
    add(f"- {trace.days:g} days from {iso(trace.start)[:10]} (a Monday), {len(trace.repos)} repositories, "
        f"{len(trace.events):,} events (first deliveries), {sum(quarters):,} workflow runs.")
    add(f"- Busiest quarter hour: {max(quarters)} workflow runs, {max(per_quarter.values()):,} deliveries; "
        f"{sum(1 for q in quarters if q >= 100)} quarter hours with 100 runs or more.")
    add("- Events by kind: " + ", ".join(f"{k} {n:,}" for k, n in fleet.iter_kinds(trace)) + ".")
    add(f"- Signals registered when this ran (events with a handler; the rest are answered 200 \"ignored\"): "
        f"{', '.join(handled) or 'none'}.")
    if "subscribed" in traces:
        sub = traces["subscribed"]
        add(f"- The subscribed events only: the same trace (the same seed, guids, times and faults) with only the "
            f"events the README's app subscribes to (`pager.signals.subscribed_events()`, the list above): "
            f"{len(sub.events):,} events, {len(sub.events) / len(trace.events):.0%} of the full trace. A deployment "
            "as the README sets it up never receives the others (here above all `workflow_job` and `check_run`).")
    add("- Faults: " + "; ".join(f.label for f in trace.faults) + f"; besides, {trace.background_timeout_rate:.2%} of "
        "all attempts get no answer. A Telegram outage answers 502 to every Bot API call; a GitHub burst answers 502 "
        "to the REST calls the handlers make (installation tokens, pull requests, dispatches, the recovery probe), not "
        "to the deliveries list; an attempt without an answer is handled by the pager, but GitHub records "
        "status_code 0.")
    add(f"- The sweep runs every {SWEEP_EVERY / 60:.0f} minutes (invoked with its event's id, as EventBridge does), "
        f"and for {DRAIN / 3600:.0f} hours after the last event; with fast recovery the recovery check runs every "
        f"{CHECK_EVERY:.0f} s besides, half a minute out of phase with the faults' ends (which fall on whole "
        "minutes). GitHub carries out the redeliveries asked for right after each run.")
    add("")


def _headline_rows(results: Results, names: list[str], bills: dict[str, list[bill.Line]]) -> list[tuple[str, list[str]]]:
    def cell(fn: Callable[[dict[str, Any]], str]) -> list[str]:
        return [fn(results[d]) if d in results else "–" for d in names]

    return [
        ("from a fault's end to the passing redelivery, median / 95th percentile", cell(lambda r: _spread(r["to_pass"]["all"]))),
        ("… after an outage (Telegram 502, GitHub 5xx)", cell(lambda r: _spread(r["to_pass"]["outage"]))),
        ("… after a period without answers", cell(lambda r: _spread(r["to_pass"]["no_answer"]))),
        (f"alarmed because its attempts were spent in a fault (of them in one shorter than {LONG_OUTAGE / 3600:.0f} h)",
         cell(lambda r: f"{r['counts'].get('spent_alarmed', 0):,} ({r['counts'].get('spent_alarmed_short', 0):,})")),
        ("alarmed in all / **lost silently**",
         cell(lambda r: f"{r['counts'].get('alarmed', 0):,} / **{r['counts'].get('lost', 0):,}**")),
        ("stale redeliveries that changed state / in all",
         cell(lambda r: f"{r['counts'].get('stale_changed', 0):,} / {r['counts'].get('stale_redeliveries', 0):,}")),
        ("calls per run, max; runs (and checks) over the budget",
         cell(lambda r: f"{max(r['calls_max'], r['checks_calls_max']):,}; {r['over_budget']:,}")),
        ("AWS cost per week, list prices", [_money(bill.total(bills[d])) if d in bills else "–" for d in names]),
        ("… less what the always-free allowances would cover",
         [_money(bill.total_after_always_free(bills[d])) if d in bills else "–" for d in names]),
    ]


def headline_section(add: Add, traces: dict[str, fleet.Trace], results: dict[str, Results], bills: Bills) -> None:
    names = [d for d in DESIGNS if d in results["full"]]
    add("## What users feel")
    add("")
    add("Each design on both traces: how long an event that failed in a fault waits, once the fault is over, for "
        "its redelivery to pass; what was named in the alarm only because its attempts were spent while the fault "
        "lasted; what was lost; what a stale redelivery changed; the calls; and, for pager's own code, the stack's "
        "weekly AWS bill (below). " + LIKE_FOR_LIKE)
    add("")
    _designs_head(add, names)
    for name, rs in results.items():
        add(f"| **{TRACES[name]}** ({len(traces[name].events):,} events) |" + " |" * len(names))
        for label, cells in _headline_rows(rs, names, bills.get(name, {})):
            add(f"| {label} | " + " | ".join(cells) + " |")
    add("")


def _comparison_rows(budget: int) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    def cnt(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: f"{r['counts'].get(key, 0):,}"

    return [
        ("failed events (a 5xx or no answer)", lambda r: f"{r['counts'].get('failed', 0):,} ({r['counts'].get('failed_5xx', 0):,} 5xx, {r['counts'].get('failed_no_answer', 0):,} no answer)"),
        ("recovered", lambda r: f"{r['counts'].get('recovered', 0):,} ({_pct(r['counts'].get('recovered', 0), r['counts'].get('failed', 0))})"),
        ("alarmed", cnt("alarmed")),
        ("… because its attempts were spent in a fault", cnt("spent_alarmed")),
        ("superseded by a newer passed event about the same thing", cnt("superseded")),
        ("ignored by the pager (no handler: nothing to lose)", cnt("ignored")),
        ("**lost silently** (5xx / no answer)", lambda r: f"**{r['counts'].get('lost', 0):,}** ({r['counts'].get('lost_5xx', 0):,} / {r['counts'].get('lost_no_answer', 0):,})"),
        ("… of them dropped as superseded by another thing", cnt("dropped_other")),
        ("stale redeliveries that changed state / in all", lambda r: f"{r['counts'].get('stale_changed', 0):,} / {r['counts'].get('stale_redeliveries', 0):,}"),
        ("from a fault's end to the passing redelivery, median / 95th percentile", lambda r: _spread(r["to_pass"]["all"])),
        ("time to recovery (from the first failed attempt), median", lambda r: _fmt_s(r["ttr_median"])),
        ("time to recovery, 95th percentile", lambda r: _fmt_s(r["ttr_p95"])),
        ("… median after a 5xx / after no answer", lambda r: f"{_fmt_s(r['ttr_5xx_median'])} / {_fmt_s(r['ttr_no_answer_median'])}"),
        ("sweep runs (scheduled / started by the recovery check)", lambda r: f"{r['runs']:,} ({r['scheduled_runs']:,} / {r['check_runs']:,})"),
        ("recovery checks (one table read when nothing waits)", lambda r: f"{r['checks']:,}" if r["checks"] else "–"),
        ("runs that asked for nothing while a probe still failed", lambda r: f"{r['held_runs']:,}" if r["design"] in PAGER_DESIGNS else "–"),
        ("calls per run, mean", lambda r: f"{r['calls_mean']:.1f}"),
        ("calls per run, max (a recovery check without a run)", lambda r: f"{r['calls_max']:,} ({r['checks_calls_max']:,})"),
        (f"runs and checks over the budget of {budget} calls", lambda r: f"{r['over_budget']:,} of {r['runs'] + r['checks'] - r['check_runs']:,}"),
        ("redeliveries asked for", lambda r: f"{r['redeliveries']:,}"),
        ("table writes per day", lambda r: f"{r['writes_per_day']:.0f}"),
        ("… of them the sweep's own (state, last run)", lambda r: f"{r['sweep_writes_per_day']:.1f}"),
        ("… a delivery's note of what waits (in the sweep's state item)", lambda r: f"{r['recovery_writes_per_day']:.1f}"),
        ("… alarm records", lambda r: f"{r['alarm_writes_per_day']:.1f}"),
        ("… signal records", lambda r: f"{r['signal_writes_per_day']:.1f}"),
        ("notes of what waits per outage that noted one, mean (max)",
         lambda r: f"{r['recovery']['mean']:.1f} ({r['recovery']['max']})" if r["design"] in PAGER_DESIGNS else "–"),
        ("… and table writes of the runs the check started, mean (max); both together", lambda r: (f"{r['recovery']['check_run_mean']:.1f} ({r['recovery']['check_run_max']}); "
                    f"{r['recovery']['total_mean']:.1f} ({r['recovery']['total_max']})") if r["checks"] else "–"),
        ("runs aborted (a list not served)", lambda r: f"{r['runs_aborted']:,}"),
        ("the sweep's state item as a run saved it (what each recovery check reads), median / max",
         lambda r: f"{r['state_bytes']['median'] / 1000:.1f} kB / {r['state_bytes']['max'] / 1000:.1f} kB"
         if r["state_bytes"]["n"] else "–"),
        ("reach gaps logged", lambda r: f"{r['reach_gaps']:,}" if r["design"] in PAGER_DESIGNS else "–"),
    ]


def comparison_section(add: Add, results: Results, budget: int) -> None:
    names = [d for d in DESIGNS if d in results]
    add("## The sweeps compared on the same trace (the full trace)")
    add("")
    add(LIKE_FOR_LIKE)
    add("")
    _designs_head(add, names)
    for label, cell in _comparison_rows(budget):
        add(f"| {label} | " + " | ".join(cell(results[d]) for d in names) + " |")
    add("")
    add("Table writes by key kind: " + "; ".join(
        f"{DESIGNS[d]}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(results[d]["writes"].items()))
        for d in names) + ".")
    add("")
    for key, what in (("lost_kinds", "Lost silently"), ("dropped_kinds", "Dropped as superseded by another thing")):
        kind_lines = [f"{DESIGNS[d]}: " + ", ".join(f"{k} {v}" for k, v in sorted(results[d][key].items()))
                      for d in names if results[d].get(key)]
        if kind_lines:
            add(f"{what}, by kind: " + "; ".join(kind_lines) + ".")
            add("")
    lost = results["pager"].get("lost_examples") or []
    if lost:
        add(f"Lost silently by {DESIGNS['pager']}, the first {len(lost)} (attempts: seconds from the trace's start, "
            "status code, r for a redelivery): " + "; ".join(
                f"{x['event']}.{x['action']} " + ", ".join(f"{at} {code}{' r' if again else ''}" for at, code, again in x["attempts"])
                for x in lost) + ".")
        add("")


def faults_section(add: Add, trace: fleet.Trace, results: Results) -> None:
    names = [d for d in DESIGNS if d in results]
    add("## Recovery after each fault (the full trace)")
    add("")
    add(f"Events whose first failed attempt fell inside the fault and failed the way it fails (a 5xx in an outage, "
        f"no answer in a period without answers): delivered within {RECOVERY_LIMIT / 60:.0f} minutes of its end / "
        "superseded by a newer passed event about the same thing / ignored by the pager / alarmed, of all that failed "
        "in it; then, when there are any, those delivered later and those lost silently; after the dot, the median "
        "time from the fault's end to the passing redelivery; and the events alarmed because their attempts were "
        "spent in the fault.")
    add("")
    _designs_head(add, names, "fault")
    for k, fault in enumerate(trace.faults):
        cells = []
        for d in names:
            o = results[d]["outages"][k]
            rest = [f"{o[key]:,} {word}" for key, word in (("late", "later"), ("lost", "lost"), ("spent_alarmed", "spent in it"))
                    if o.get(key)]
            waited = f" · {_fmt_s(percentile(o['to_pass'], 0.5))}" if o["to_pass"] else ""
            cells.append(f"{o['in_time']:,} / {o['superseded']:,} / {o['ignored']:,} / {o['alarmed']:,} of {o['failed']:,}"
                         + (f"; {', '.join(rest)}" if rest else "") + waited)
        add(f"| {fault.label} | " + " | ".join(cells) + " |")
    add("")


def _pages(r: dict[str, Any]) -> str:
    return (f"{r['as_page']} / {r['to_press']} / {r['forgotten']} / **{r['lost']}**"
            + (f"; {r['back_minutes']:.0f} min" if r["back_minutes"] is not None else "; –"))


def outages_section(add: Add, outages: dict[str, Results], burst: dict[str, Any] | None, full: Results) -> None:
    add("## After long outages, and in a burst")
    add("")
    if outages:
        names = [d for d in DESIGNS if d in next(iter(outages.values()))]
        add("Telegram answers 502 to every call for hours while someone from outside comments every so often, each "
            "comment a page (`pager_bench.outages`; the same replay as above, for the outage and "
            f"{DRAIN / 3600:.0f} hours after it). Per design: of the pages, those that reached the chat as the page "
            "itself / as an entry to press in the control repository's alarm / said as forgotten (counted in the "
            "alarm's \"N events GitHub no longer keeps\") / **lost silently**; then the minutes from Telegram's "
            "return to the last page's passing delivery. Below, the most attempts GitHub made of one page and the "
            "redeliveries the runs asked for.")
        add("")
        _designs_head(add, names)
        for label, rs in outages.items():
            pages = next(iter(rs.values()))["pages"]
            add(f"| {label} ({pages} pages) | " + " | ".join(_pages(rs[d]) for d in names) + " |")
            add("| … attempts of one page, max; redeliveries | "
                + " | ".join(f"{rs[d]['attempts_max']:,}; {rs[d]['redeliveries']:,}" for d in names) + " |")
        add("")
    first = {d: r["first_answers"] for d, r in full.items() if "first_answers" in r}
    if first:
        busiest = next(iter(first.values()))
        add(f"First answers of 5xx in the busiest quarter hour of the full trace ({busiest['busiest']:,} events delivered "
            "the first time in it; the replay delivers them one at a time): " + "; ".join(
                f"{DESIGNS[d]} {f['busiest_5xx']:,} (in any quarter hour at most {f['max_5xx']:,}; in the week "
                f"{f['all_5xx']:,})" for d, f in first.items()) + ".")
        add("")
    if burst:
        add(f"A burst: {burst['deliveries']} workflow runs of one repository fail at the same moment, each delivery "
            f"handled at once in a thread of its own, Telegram taking {burst['telegram_seconds'] * 1000:.0f} ms a call: "
            f"{burst['first_500']} answered 500 the first time; the chat got {burst['messages_sent']} message(s), "
            f"the alarm showing {burst['entries_shown']} entries.")
        add("")


def _outage_targets(outages: dict[str, Results], burst: dict[str, Any] | None) -> list[tuple[str, str, bool | None]]:
    rows: list[tuple[str, str, bool | None]] = []
    mine = {label: rs["pager"] for label, rs in outages.items() if "pager" in rs}
    if mine:
        pressed = sum(r["to_press"] for r in mine.values())
        rows.append(("after a Telegram outage of any length, what GitHub still keeps comes back as the pages themselves "
                     f"(none as an entry to press), within {RECOVERY_LIMIT / 60:.0f} min of Telegram's return",
                     "; ".join(f"{label}: {r['as_page']} as pages, {r['to_press']} to press, the last "
                               + ("–" if r["back_minutes"] is None else f"{r['back_minutes']:.0f} min") + " after"
                               for label, r in mine.items()),
                     pressed == 0 and all((r["back_minutes"] or 0) <= RECOVERY_LIMIT / 60 for r in mine.values())))
        rows.append(("what GitHub no longer keeps is said in the alarm: none lost silently",
                     "; ".join(f"{label}: {r['forgotten']} said, {r['lost']} lost" for label, r in mine.items()),
                     all(r["lost"] == 0 for r in mine.values())))
    if burst:
        rows.append((f"a burst of {burst['deliveries']} failures on one repository: no first answer of 500 for a stored "
                     "entry", f"{burst['first_500']} of {burst['deliveries']}", burst["first_500"] == 0))
    return rows


def metrics_section(add: Add, published: dict[str, Any] | None) -> None:
    """Custom metrics published per week, measured in the same replay: what the code publishes now, and
    what the code before the cut published (the same deliveries and runs, counted by its rules)."""
    if not published:
        return
    add("## Custom metrics published")
    add("")
    add("CloudWatch bills a custom metric for each hour it gets data. Counted in the replay above for pager (fast "
        "recovery, the full trace): the (metric, hour) pairs its code published, and those the code before "
        "published for the same deliveries and scheduled runs (a metric per delivery and per answer, six per sweep "
        f"run, zeros included). At ${prices.CUSTOM_METRIC_MONTH:.2f} per metric-month prorated by the hour, free tier "
        "left out.")
    add("")
    add("| | before | now |")
    add("|---|---:|---:|")
    before, after = published["before"], published["after"]
    add(f"| metrics | {len(before['names'])} | {len(after['names'])} |")
    add(f"| metric-hours per week | {before['metric_hours_per_week']:,.0f} | {after['metric_hours_per_week']:,.0f} |")
    add(f"| $ per week | {prices.metric_hours_cost(before['metric_hours_per_week']):.3f} | "
        f"{prices.metric_hours_cost(after['metric_hours_per_week']):.3f} |")
    add("")
    add("Now: " + ", ".join(f"`{n}`" for n in after["names"]) + " (of `" + "`, `".join(sorted(METRICS))
        + "`: the others are published only when not zero, and none was in this replay). Before: "
        + ", ".join(f"`{n}`" for n in before["names"]) + ".")
    add("")


def _usage(line: bill.Line) -> str:
    if line.usage >= 100:
        return f"{line.usage:,.0f} {line.unit}"
    return f"{line.usage:,.3g} {line.unit}"


def _free_note(line: bill.Line) -> str:
    if line.free is None:
        return "–"
    allowance, unit, forever = prices.FREE_TIER[line.free]
    if line.free == "secrets":
        return "a free trial: a new secret's first 30 days"
    who = "always free" if forever else "a new account's first 12 months"
    verdict = "would cover it" if line.covered else "would cover part of it"
    return f"{who}: {allowance:,} {unit} a month {verdict}"


def _lambda_detail(add: Add, result: dict[str, Any], imports: dict[str, Any] | None) -> None:
    lam = result["aws"]["lambda"]
    weeks = result["aws"]["span_seconds"] / (7 * 86_400)
    parts = []
    for function in bill.FUNCTIONS:
        f = lam[function]
        n = max(1, f["invocations"])
        cold = bill.cold_start_seconds(imports, function)
        parts.append(f"{function}: {f['invocations'] / weeks:,.0f} invocations a week, billed {f['billed_ms'] / n:.1f} ms on "
                     f"average (CPU {1000 * f['cpu_seconds'] / n:.2f} ms, waiting on calls {1000 * f['wait_seconds'] / n:.2f} ms), "
                     f"{_count(round(f['cold_starts'] / weeks), 'cold start')} a week"
                     + (f" ({cold * 1000:.0f} ms each)" if cold is not None else " (not priced: no cold start measured)")
                     + f", {f['secret_reads'] / weeks:,.0f} reads of the secrets a week")
    add("Lambda, per function (pager, fast recovery, the full trace): " + "; ".join(parts) + ".")
    add("")


def cost_section(add: Add, results: dict[str, Results], bills: Bills, imports: dict[str, Any] | None) -> None:
    if "pager" not in bills.get("full", {}):
        return
    names = [name for name in ("full", "subscribed") if "pager" in bills.get(name, {})]
    main = bills["full"]["pager"]
    add("## The stack's AWS cost per week")
    add("")
    add("What the stack would be billed for the week, at the list prices of `sim/pager_bench/prices.py` (US East, "
        "x86, the free tier left out), from the requests counted in the replay of pager with fast recovery: Lambda "
        "invocations of both functions and their billed duration (modelled: the CPU time the handler took here, "
        "scaled to the share of a vCPU each function's memory gets (" + ", ".join(
            f"{f} {mb} MB" for f, mb in bill.template_resources()["memory_mb"].items()) + "), plus a round trip "
        "per call to GitHub, Telegram, the table and the secrets' parameter, rounded up to the millisecond; cold starts from "
        "a model of Lambda's execution environments, each priced with the cold start measured below), API Gateway "
        "requests, DynamoDB request units by item size, reads of the secrets (a new environment, then every five "
        "minutes), the bytes of every log line and EMF blob, the custom metrics' hours, and what template.yaml bills "
        "by the month as a deployment with its parameters' defaults has it (the alarms' metrics; no dashboard unless "
        "asked for). Each line: its list price; where a free tier applies, what it would cover.")
    add("")
    add("| service | what | a week of the full trace | " + " | ".join(f"$ per week, {TRACES[n]}" for n in names) + " | free tier |")
    add("|---|---|---:|" + "---:|" * len(names) + "---|")
    for k, line in enumerate(main):
        add(f"| {line.service} | {line.item} | {_usage(line)} | "
            + " | ".join(_money(bills[n]["pager"][k].dollars) for n in names) + f" | {_free_note(line)} |")
    add("| **total, list prices** | | | " + " | ".join(f"**{_money(bill.total(bills[n]['pager']))}**" for n in names) + " | |")
    add("| total less what the always-free allowances would cover | | | "
        + " | ".join(_money(bill.total_after_always_free(bills[n]["pager"])) for n in names) + " | if nothing else in the account uses them |")
    month = prices.WEEKS_PER_MONTH
    add("| **a month, list prices** (a week × 730 / 168) | | | " + " | ".join(
        f"**{_money(bill.total(bills[n]['pager']) * month)}**" for n in names) + " | |")
    add("| a month less what the always-free allowances would cover | | | " + " | ".join(
        _money(bill.total_after_always_free(bills[n]["pager"]) * month) for n in names) + " | |")
    add("")
    add(f"With the dashboard (the parameter WithDashboard=true): {_money(prices.DASHBOARD_MONTH)} a month more, unless the "
        f"account has fewer than {prices.FREE_TIER['dashboards'][0]} dashboards (always free). The secrets: a "
        "Parameter Store SecureString (no charge; each read a KMS request) rather than a Secrets Manager secret, which "
        f"would add {_money(prices.SECRET_MONTH)} a month and {_money(prices.SECRETS_API_CALL * 1e4)} per 10,000 reads.")
    add("")
    if "pager-15" in bills["full"]:
        add("Without fast recovery (the 15-minute runs only, no every-minute schedule), at list prices: " + "; ".join(
            f"{TRACES[n]} {_money(bill.total(bills[n]['pager-15']))} per week (the recovery check adds "
            f"{_money(bill.total(bills[n]['pager']) - bill.total(bills[n]['pager-15']))})"
            for n in names if "pager-15" in bills[n]) + ".")
        add("")
    _lambda_detail(add, results["full"]["pager"], imports)
    add("Assumed, not measured: round trips of " + ", ".join(f"{name} {seconds * 1000:.0f} ms" for name, seconds in bill.ROUND_TRIP.items())
        + f"; an idle execution environment reclaimed after {bill.ENVIRONMENT_IDLE_SECONDS / 60:.0f} minutes (AWS does not "
        "say); a redelivery burst arrives at one instant in the replay, so the cold starts it causes are an upper "
        "bound. Logs: the application's lines only (the functions' system log level is WARN, so Lambda's own START "
        "and REPORT lines are not sent).")
    add("")
    add("Prices: " + "; ".join(f"{service} ({page}): {text}" for service, page, text in prices.SOURCES) + ".")
    add("")


def targets_section(add: Add, results: Results, cost: dict[str, Any] | None, imports: dict[str, Any] | None,
                    modules: dict[str, Any] | None, budget: int, bills: dict[str, list[bill.Line]] | None,
                    outages: dict[str, Results] | None = None, burst: dict[str, Any] | None = None) -> None:
    add("## Targets (pager, fast recovery, the full trace; the long outages and the burst)")
    add("")
    add("| target | measured | |")
    add("|---|---|---|")
    rows = targets(results, cost, imports, modules, budget, bills) + _outage_targets(outages or {}, burst)
    for target, measured, met in rows:
        add(f"| {target} | {measured} | {'met' if met else ('–' if met is None else '**not met**')} |")
    add("")


def lean(add: Add, cost: dict[str, Any] | None, modules: dict[str, Any] | None) -> None:
    """The section "A lean hot path": the round trips and modules of a delivery, before and now."""
    add("## A lean hot path")
    add("")
    add("What a delivery costs the webhook function besides its own work, measured now and as it was before.")
    add("")
    add("| | before | now |")
    add("|---|---:|---:|")
    trips = BEFORE["round_trips"]
    if cost:
        for name, label in (("contribution", "table round trips of a contribution (issues.opened by an outsider: "
                                              "a message, then a draft dispatch)"),
                            ("ignored", "table round trips of an ignored delivery")):
            add(f"| {label} | {sum(trips[name])} (before {trips['commit']}) | {_n(cost[name]['round_trips'])} |")
    if modules:
        was = BEFORE["modules"]
        add(f"| modules loaded to answer an ignored delivery ({modules['event']}) in a fresh interpreter | "
            f"{was['modules']} (at {was['commit']}) | {modules['modules']} |")
        add(f"| … of {', '.join(HEAVY)} | {_which(was['heavy'])} | {_which(modules['loaded'], modules['botocore'])} |")
    add("")
    if cost:
        loads, writes = trips["contribution"]
        co = cost["contribution"]
        add("Round trips: the table's loads plus writes per delivery (each one a DynamoDB request), medians of the "
            f"handler's cost below. A contribution now makes {_count(co['round_trips_loads'], 'load')} and "
            f"{_count(co['writes'], 'write')}; before {trips['commit']} it made {_count(loads, 'load')} and "
            f"{_count(writes, 'write')} (measured the same way on the tree of its parent commit).")
        add("")
    if modules:
        add(f"Modules: a fresh `{modules['python']}` (`-I`), with the repository's `layers/pager` and `sim` first on its "
            "path and the settings in its environment (no secret id: the secrets' store is never asked), imports "
            "`functions/webhook/app.py` as Lambda does and invokes its `lambda_handler` once with a signed API Gateway "
            f"event of {modules['event']}, which pager ignores (answered {modules['outcome']}); then counts "
            "`sys.modules`, the interpreter's own included. The figure of before is the same measure run on the tree "
            f"of {BEFORE['modules']['commit']} (Python 3.11.7, this repository's virtualenv). Of the heavy packages only botocore's top-level "
            "package is expected now: Powertools imports it for its user agent (none of its submodules, nor boto3, "
            "requests, urllib3, jwt or cryptography, which the services import when they are first built).")
        add("")


def handler_section(add: Add, cost: dict[str, Any]) -> None:
    add("## The webhook handler's cost per delivery (warm)")
    add("")
    add(f"Three measures side by side in one run, {cost['n']:,} deliveries each, in a rotating order, medians after "
        f"the first {min(50, cost['n'] // 10)}: the floor (HMAC-SHA256 check plus `json.loads` of the same body); "
        "`pager.webhook.handle_github`; and `functions/webhook/app.py:lambda_handler`, through `pager.bootstrap` with "
        "the services handed in as the replay does, so Powertools' resolver, the services' lookup, the answer's "
        "encoding and the metrics flush are in it (the ratio the targets use). The contribution goes through the "
        "fake GitHub and Telegram; its own cost leaves out the time spent inside the fakes (not the `requests` "
        "machinery, which is the handler's). Calls, writes and round trips: `handle_github`'s; a round trip is a "
        "table load or write (each one a DynamoDB request). Beside them, a fourth measure: one POST through `requests` "
        "and the fakes' transport to an answer made at once, what each HTTP call costs before any of pager's work.")
    add("")
    add("| delivery | body | floor | `handle_github` | own | `lambda_handler` | own | ratio (own) | HTTP calls | table writes | table round trips |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, label in (("ignored", "ignored (check_run, workflow_job)"), ("contribution", "contribution (issues.opened by an outsider)")):
        c = cost[name]
        add(f"| {label} | {c['body_bytes'] / 1000:.1f} kB | {c['floor_us']:.0f} µs | {c['handler_us']:.0f} µs | "
            f"{c['own_us']:.0f} µs | {c['app_us']:.0f} µs | {c['app_own_us']:.0f} µs | {c['app_ratio']:.1f}× "
            f"({c['app_own_ratio']:.1f}×) | {_n(c['calls'])} | {_n(c['writes'])} | {_n(c['round_trips'])} |")
    add("")
    add(f"A bare call through `requests`: {cost['contribution']['bare_call_us']:.0f} µs (measured beside the contribution), "
        f"{cost['ignored']['bare_call_us']:.0f} µs (beside the ignored event).")
    add("")
    add("Answers of `handle_github`: " + "; ".join(f"{name}: " + ", ".join(f"{k} ×{v}" for k, v in cost[name]["outcomes"].items())
                                                for name in ("ignored", "contribution")) + ".")
    add("")


def cold_section(add: Add, imports: dict[str, Any]) -> None:
    first = imports.get("first_event", {})
    add("## Cold start of each function")
    add("")
    add(f"A fresh `{imports['python']}` (`-I -S`) imports `app` from the function's folder with the layer and boto3 "
        f"(the runtime's) on its path, then invokes its `lambda_handler` twice; median of {imports['repeats']} runs. "
        f"The first invocation is the first request of a new environment, everything in: building the clients (boto3's "
        "for Parameter Store and DynamoDB, the `requests` session), reading the secrets' SecureString through "
        "Powertools, parsing the app's private key for the JWT, the lazy imports, and the event's own work: the "
        f"webhook {first.get('webhook', 'its first event')}, the sweep {first.get('sweep', 'its first event')}. Its "
        "services are the real ones, on loopback: the table and the secret in moto's server, GitHub and Telegram as "
        "pager_world's fakes served over HTTP. The second invocation is a warm one of the same kind; \"once\" is "
        "what the first did that the second did not (each one's time less the time the fakes took to answer). The "
        f"layer: {imports['source']}, with the current `pager` copied in and everything compiled (unchecked-hash), as "
        "`layers/pager/Makefile` does; without bytecode: the same trees copied without `__pycache__`, run with `-B`.")
    add("")
    add("| function | import | first invocation | import + first invocation | a warm invocation | once (clients, secret, key, imports) | without bytecode: import | without: import + first invocation |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("webhook", "sweep"):
        c, b = imports[f"{name}_compiled"], imports[f"{name}_bare"]
        add(f"| {name} | {c['module'] * 1000:.0f} ms | {c['first'] * 1000:.0f} ms | {c['first_invocation'] * 1000:.0f} ms | "
            f"{c['warm'] * 1000:.0f} ms | {c['one_time'] * 1000:.0f} ms | {b['module'] * 1000:.0f} ms | "
            f"{b['first_invocation'] * 1000:.0f} ms |")
    add("")
    add("Lambda bills a cold start's INIT phase (the import) and its first invocation: the bill above prices each "
        "cold start at the import plus \"once\" with bytecode; the rest of the first invocation is an ordinary "
        "invocation's work, modelled as every other one.")
    add("")


def reading_section(add: Add, trace: fleet.Trace, results: Results) -> None:
    add("## How to read it")
    add("")
    add("- **pager, fast recovery** is the code as deployed: the 15-minute runs, and the recovery check every minute "
        "(a handler's 500 notes what waits in the sweep's state item; the check probes the failed service and runs "
        "the sweep as soon as it answers; while a probe fails, no run asks GitHub for anything). **pager, 15-minute "
        "runs only** is the same code without the every-minute schedule: its runs hold and clear the same way, they "
        "just come a quarter hour apart.")
    add("- (a) is the decision as first accepted: one list, the 300 newest deliveries, so on a busy day its view "
        "is shorter than the 15 minutes between runs and failures fall off it; and a failed event of a kind that can "
        "be overtaken is dropped when a newer event of the same kind and repository passed, whatever it is about. (b) "
        "has no cap and no attempt count: it asks again for everything without an OK since its last run, in one "
        "burst, whatever the calls.")
    add("- **From a fault's end to the passing redelivery**: for each fault, each event that failed in it (its first "
        "failed attempt inside, failing the way the fault fails) and passed later: the seconds from the fault's end "
        "to the attempt that passed (0 if it passed before the end). An outage fails a handler's step, which "
        "answers 500 and notes it, so the recovery check follows it; a period without answers fails nothing in the "
        "pager (it handled the delivery and acted; GitHub stopped waiting), so nothing is noted and only the "
        "15-minute runs ask again, while the maintainer already has the message.")
    add("- **Alarmed because its attempts were spent in a fault**: alarmed, and all its failed attempts fell inside "
        "the fault's window, or its third (last allowed) attempt did: an attempt spent while the service was still "
        "down, which one attempt after the fault would not have needed.")
    add("- **The subscribed events only**: a deployment as the README sets it up receives only the events of the "
        "signals table; the full trace adds what an app subscribed to everything would receive (answered \"ignored\"), "
        "which weighs on API Gateway, Lambda and the logs.")
    add("- Every event is about a thing: its kind, its repository and what pager keys its record by (a workflow on a "
        "branch; an app's check suite on a branch, or a release's suite by its head; a check run's name on a branch; "
        "an alert; an issue, pull request or discussion; each comment or review on its own; a release's tag). Of two "
        "events about one thing the newer is the one pager's handler takes for newer: a workflow run's number, "
        "else the time.")
    add("- **Superseded**: failed, never delivered, not alarmed, and a newer event about the same thing passed: it "
        "counts as done, the newer one stands. **Dropped as superseded by another thing**: lost silently, and a "
        "newer event of the same kind and repository passed but none about the same thing (another workflow, "
        "branch, pull request or alert): what the first rule drops. It is part of lost silently.")
    add("- A **stale redelivery** passed after a newer event about the same thing had passed. It counts against its "
        "target only when its handling changed state (a signal record written, a Telegram message sent or edited, "
        "a dispatch or a merge), which the replay records for every attempt of every design; an answer of 200 "
        "(\"stale\", \"unchanged\", \"ignored\") that changed nothing is harmless.")
    add("- Pager's sweep asks GitHub again for each failed event pager acts on, at most three attempts, follows it "
        "past its 3-hour window, and names it in the control repository's alarm once its attempts are used or GitHub "
        "is about to forget it. An alarmed event waits for the maintainer's ↻ in the alarm (or Redeliver on the app's Advanced page), "
        "and counts against the 99% targets.")
    longest = max((k for k, f in enumerate(trace.faults) if f.kind == "telegram"),
                  key=lambda k: trace.faults[k].end - trace.faults[k].start, default=None)
    if longest is not None:
        o = results["pager"]["outages"][longest]
        add(f"- The longest outage, {trace.faults[longest].label}: {o['failed']:,} events got a 502. With "
            f"{DESIGNS['pager']}: delivered within 30 minutes of its end {o['in_time']:,}, later {o['late']:,}, "
            f"superseded {o['superseded']:,}, named in the alarm {o['alarmed']:,}, lost silently {o['lost']:,}.")
    p = results["pager"]
    if p["reach_gaps"]:
        c = p["counts"]
        add(f"- A reach gap ({p['reach_gaps']:,} in the week) is a run whose every-outcome list its page cap cut short, "
            "in the busiest quarter hours: a delivery without an answer or a passed redelivery inside it is missed, "
            "the decision's accepted hole (a 5xx never is). Such an event is not asked for again (it counts as "
            "superseded when a newer event about the same thing passed, else as lost silently), and one whose "
            f"redelivery passed there may be asked for once more: {c.get('again_after_pass', 0):,} redeliveries of an "
            f"event already delivered, {c.get('again_after_pass_changed', 0):,} of them changed state.")
    for d in (d for d in DESIGNS if d in results):
        if results[d]["sweep_keys"]:
            add(f"- {DESIGNS[d]} wrote its own records " + ", ".join(
                f"`{key}` {per_run:.2f}" for key, per_run in sorted(results[d]["sweep_keys"].items())) + " times per run.")


def report(traces: dict[str, fleet.Trace], results: dict[str, Results], cost: dict[str, Any] | None,
           imports: dict[str, Any] | None, modules: dict[str, Any] | None = None, *, args: argparse.Namespace,
           handled: list[str], elapsed: float, outages: dict[str, Results] | None = None,
           burst: dict[str, Any] | None = None, scale: dict[str, Any] | None = None) -> str:
    """docs/benchmarks.md from the replays (by trace, "full" and maybe "subscribed", then design), the
    handler's cost, the cold starts and the modules of an ignored delivery (each of the last three may be
    None: its section and targets are left out), the long outages (by scenario, then design) and the
    burst (`pager_bench.outages`; either may be None: left out), and what a busy fleet's size does
    (`pager_bench.scale_report`; None: left out)."""
    full = results["full"]
    budget = full["pager"]["call_budget"]
    bills = bills_of(results, imports)
    lines: list[str] = []
    add = lines.append
    header(add, args, elapsed)
    trace_section(add, traces, handled)
    headline_section(add, traces, results, bills)
    comparison_section(add, full, budget)
    faults_section(add, traces["full"], full)
    if outages or burst:
        outages_section(add, outages or {}, burst, full)
    metrics_section(add, full["pager"].get("metrics"))
    cost_section(add, results, bills, imports)
    pager_bills = {name: by_design["pager"] for name, by_design in bills.items() if "pager" in by_design}
    targets_section(add, full, cost, imports, modules, budget, pager_bills, outages, burst)
    phone_on = next((name for name in ("subscribed", "full") if "phone" in results.get(name, {}).get("pager", {})), None)
    if phone_on is not None:
        mine = results[phone_on]["pager"]
        phone_report.section(add, traces[phone_on], TRACES[phone_on], mine["phone"], mine.get("phone_quiet"))
    if cost or modules:
        lean(add, cost, modules)
    if cost:
        handler_section(add, cost)
    if imports:
        cold_section(add, imports)
    reading_section(add, traces["full"], full)
    add("- Simulation times: " + "; ".join(
        f"{TRACES[name]}: " + ", ".join(f"{DESIGNS[d]} {r['seconds']:.0f} s" for d, r in rs.items())
        for name, rs in results.items()) + ".")
    if scale:
        add("")
        scale_report.section(add, scale)
    return "\n".join(lines) + "\n"
