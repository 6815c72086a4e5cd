"""docs/benchmarks.md: the trace, the sweeps side by side, recovery per fault, the targets (pager), the
lean hot path, the handler's cost, the cold imports, and how to read it."""

from __future__ import annotations

import argparse
import os
import platform
from collections import Counter
from typing import Any, Callable

from pager.values import iso

from . import fleet, prices
from .costs import BEFORE, HEAVY, NOT_FOR_IGNORED
from .simulate import DESIGNS, DRAIN, SWEEP_EVERY


def _fmt_s(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def _pct(part: int, whole: int) -> str:
    return "–" if not whole else f"{100 * part / whole:.1f}%"


def targets(results: dict[str, dict[str, Any]], cost: dict[str, Any] | None, imports: dict[str, Any] | None,
            modules: dict[str, Any] | None, budget: int) -> list[tuple[str, str, bool | None]]:
    """(target, measured, met) for pager's sweep and its webhook function."""
    p = results["pager"]
    c = p["counts"]
    rows: list[tuple[str, str, bool | None]] = []
    rows.append(("on the busy trace no 5xx failure lost silently",
                 f"{c.get('lost_5xx', 0)} of {c.get('failed_5xx', 0)} events that got a 5xx", c.get("lost_5xx", 0) == 0))
    rows.append(("no failed event dropped as superseded by another thing (a newer passed event of the same kind and "
                 "repository, about another workflow, pull request, alert, ...)",
                 f"{c.get('dropped_other', 0)} of {c.get('failed', 0)} failed events", c.get("dropped_other", 0) == 0))
    rows.append(("no stale redelivery changed state (a redelivery that passed after a newer event about the same thing "
                 "had passed: no table write, Telegram message or edit, dispatch or merge)",
                 f"{c.get('stale_changed', 0)} of {c.get('stale_redeliveries', 0)} stale redeliveries",
                 c.get("stale_changed", 0) == 0))
    for kinds, what in ((("telegram", "github"), "an outage (Telegram 502, GitHub 5xx)"),
                        (("timeout",), "a period without answers")):
        outages = [o for o in p["outages"] if o["kind"] in kinds]
        failed = sum(o["failed"] for o in outages)
        in_time = sum(o["in_time"] for o in outages)
        stood = sum(o["superseded"] for o in outages)
        idle = sum(o["ignored"] for o in outages)
        share = (in_time + stood + idle) / failed if failed else 1.0
        rows.append((f"≥ 99% of events that failed during {what} delivered within 30 min of its end "
                     "(an event superseded by a newer passed one about the same thing counts as done: the newer one "
                     "stands; so does one the pager only ignores)",
                     f"{in_time} delivered + {stood} superseded + {idle} ignored of {failed} ({share:.1%}); "
                     f"{sum(o['alarmed'] for o in outages)} alarmed", share >= 0.99))
    rows.append((f"at most the call budget ({budget}) per run",
                 f"max {p['calls_max']}, mean {p['calls_mean']:.1f}; {p['over_budget']} runs over", p["calls_max"] <= budget))
    expected = p["runs_per_day"] + p["alarm_writes_per_day"] + p["signal_writes_per_day"]
    rows.append(("table writes per day within 10% of one per run plus the alarm and signal records",
                 f"{p['writes_per_day']:.0f} per day against {expected:.0f} ({p['runs_per_day']:.0f} runs + "
                 f"{p['alarm_writes_per_day']:.0f} alarm + {p['signal_writes_per_day']:.0f} signal records): "
                 f"{p['writes_per_day'] / expected - 1:+.0%}" if expected else "–",
                 abs(p["writes_per_day"] - expected) <= 0.1 * expected if expected else None))
    if cost:
        ig = cost["ignored"]
        rows.append(("webhook handler warm: its own cost per delivery within 3× the floor (an ignored event)",
                     f"{ig['handler_us']:.0f} µs against {ig['floor_us']:.0f} µs: {ig['ratio']:.1f}×", ig["ratio"] <= 3))
        co = cost["contribution"]
        rows.append(("the same for a contribution (its own cost: time in the fake GitHub and Telegram left out)",
                     f"{co['own_us']:.0f} µs against {co['floor_us']:.0f} µs: {co['own_ratio']:.1f}×", co["own_ratio"] <= 3))
        rows.append(("a contribution takes at most 4 round trips to the table",
                     f"{_n(co['round_trips'])} ({_count(co['round_trips_loads'], 'load')} + {_count(co['writes'], 'write')}; "
                     f"at most {co['round_trips_max']} in any delivery of the run)", co["round_trips_max"] <= 4))
    if modules:
        heavy = [name for name in NOT_FOR_IGNORED if name in modules["loaded"]]
        rows.append(("an ignored delivery loads none of " + ", ".join(NOT_FOR_IGNORED),
                     (f"loads {', '.join(heavy)}" if heavy else "none of them") + f" ({modules['modules']} modules in all)",
                     not heavy))
    if imports:
        w = imports["webhook_compiled"]
        rows.append(("cold import of the webhook function under 0.5 s with compiled bytecode",
                     f"{w['module'] * 1000:.0f} ms (with its first invocation's imports {w['first_invocation'] * 1000:.0f} ms)",
                     w["module"] < 0.5))
    return rows


def _n(value: float) -> str:
    """A count that may be a median of counts: 4, or 3.5."""
    return f"{value:g}"


def _count(value: float, word: str) -> str:
    return f"{_n(value)} {word}" + ("" if value == 1 else "s")


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


def metrics_section(add: Callable[[str], None], published: dict[str, Any] | None) -> None:
    """Custom metrics published per week, measured in the same replay: what the code publishes now, and
    what the code before the cut published (the same deliveries and runs, counted by its rules)."""
    if not published:
        return
    add("## Custom metrics published")
    add("")
    add("CloudWatch bills a custom metric for each hour it gets data. Counted in the replay above for pager: "
        "the (metric, hour) pairs its code published, and those the code before published for the same "
        "deliveries and runs (a metric per delivery and per answer, six per sweep run, zeros included). "
        f"At ${prices.CUSTOM_METRIC_MONTH:.2f} per metric-month prorated by the hour, free tier left out.")
    add("")
    add("| | before | now |")
    add("|---|---:|---:|")
    before, after = published["before"], published["after"]
    add(f"| metrics | {len(before['names'])} | {len(after['names'])} |")
    add(f"| metric-hours per week | {before['metric_hours_per_week']:,.0f} | {after['metric_hours_per_week']:,.0f} |")
    add(f"| $ per week | {prices.metric_hours_cost(before['metric_hours_per_week']):.3f} | "
        f"{prices.metric_hours_cost(after['metric_hours_per_week']):.3f} |")
    add("")
    add("Now: " + ", ".join(f"`{n}`" for n in after["names"]) + ". Before: " + ", ".join(f"`{n}`" for n in before["names"]) + ".")
    add("")


def report(trace: fleet.Trace, results: dict[str, dict[str, Any]], cost: dict[str, Any] | None,
           imports: dict[str, Any] | None, modules: dict[str, Any] | None = None, *, args: argparse.Namespace,
           handled: list[str], elapsed: float) -> str:
    """docs/benchmarks.md from the replays, the handler's cost, the cold imports and the modules of an
    ignored delivery (each of the last three may be None: its section and targets are left out)."""
    budget = results["pager"]["call_budget"]
    lines: list[str] = []
    add = lines.append
    quarters = trace.runs_per_quarter
    per_quarter = Counter(int((e.at - trace.start) // fleet.QUARTER) for e in trace.events)
    add("# Benchmarks")
    add("")
    add(f"Written by `make bench` (`python -m pager_bench --days {args.days:g} --seed {args.seed}`) on "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs; the whole run took {elapsed / 60:.1f} min. "
        "Everything runs in process on a virtual clock, in the fake world of `pager_world`: GitHub and Telegram are "
        "its `FakeGitHub` and `FakeTelegram`, the table is the in-memory store behind its `FaultyStore` (every load and "
        "write counted), and each delivery goes through the real `functions/webhook/app.py:lambda_handler` with a "
        "signed API Gateway event. The code is the package `sim/pager_bench`; definitions are in the docstring of "
        "`sim/pager_bench/measure.py`.")
    add("")
    add("## The trace")
    add("")
    add(f"- {trace.days:g} days from {iso(trace.start)[:10]} (a Monday), {len(trace.repos)} repositories, "
        f"{len(trace.events):,} events (first deliveries), {sum(quarters):,} workflow runs.")
    add(f"- Busiest quarter hour: {max(quarters)} workflow runs, {max(per_quarter.values()):,} deliveries; "
        f"{sum(1 for q in quarters if q >= 100)} quarter hours with 100 runs or more.")
    add("- Events by kind: " + ", ".join(f"{k} {n:,}" for k, n in fleet.iter_kinds(trace)) + ".")
    add(f"- Signals registered when this ran (events with a handler; the rest are answered 200 \"ignored\"): "
        f"{', '.join(handled) or 'none'}.")
    add("- Faults: " + "; ".join(f.label for f in trace.faults) + f"; besides, {trace.background_timeout_rate:.2%} of "
        "all attempts get no answer. A Telegram outage answers 502 to every Bot API call; a GitHub burst answers 502 "
        "to the REST calls the handlers make (installation tokens, pull requests, dispatches), not to the deliveries "
        "list; an attempt without an answer is handled by the pager, but GitHub records status_code 0.")
    add(f"- The sweep runs every {SWEEP_EVERY / 60:.0f} minutes, and for {DRAIN / 3600:.0f} hours after the last event; "
        "GitHub carries out the redeliveries asked for right after each run.")
    add("")
    add("## The sweeps compared on the same trace")
    add("")
    names = [d for d in DESIGNS if d in results]
    add("| | " + " | ".join(DESIGNS[d] for d in names) + " |")
    add("|---|" + "---:|" * len(names))

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> None:
        add(f"| {label} | " + " | ".join(cell(results[d]) for d in names) + " |")

    def cnt(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda r: f"{r['counts'].get(key, 0):,}"

    row("failed events (a 5xx or no answer)", lambda r: f"{r['counts'].get('failed', 0):,} ({r['counts'].get('failed_5xx', 0):,} 5xx, {r['counts'].get('failed_no_answer', 0):,} no answer)")
    row("recovered", lambda r: f"{r['counts'].get('recovered', 0):,} ({_pct(r['counts'].get('recovered', 0), r['counts'].get('failed', 0))})")
    row("alarmed", cnt("alarmed"))
    row("superseded by a newer passed event about the same thing", cnt("superseded"))
    row("ignored by the pager (no handler: nothing to lose)", cnt("ignored"))
    row("**lost silently** (5xx / no answer)", lambda r: f"**{r['counts'].get('lost', 0):,}** ({r['counts'].get('lost_5xx', 0):,} / {r['counts'].get('lost_no_answer', 0):,})")
    row("… of them dropped as superseded by another thing", cnt("dropped_other"))
    row("stale redeliveries that changed state / in all", lambda r: f"{r['counts'].get('stale_changed', 0):,} / {r['counts'].get('stale_redeliveries', 0):,}")
    row("time to recovery, median", lambda r: _fmt_s(r["ttr_median"]))
    row("time to recovery, 95th percentile", lambda r: _fmt_s(r["ttr_p95"]))
    row("… median after a 5xx / after no answer", lambda r: f"{_fmt_s(r['ttr_5xx_median'])} / {_fmt_s(r['ttr_no_answer_median'])}")
    row("calls per run, mean", lambda r: f"{r['calls_mean']:.1f}")
    row("calls per run, max", lambda r: f"{r['calls_max']:,}")
    row(f"runs over the budget of {budget} calls", lambda r: f"{r['over_budget']:,} of {r['runs']:,}")
    row("redeliveries asked for", lambda r: f"{r['redeliveries']:,}")
    row("table writes per day", lambda r: f"{r['writes_per_day']:.0f}")
    row("… of them the sweep's own (state, last run)", lambda r: f"{r['sweep_writes_per_day']:.1f}")
    row("… alarm records", lambda r: f"{r['alarm_writes_per_day']:.1f}")
    row("… signal records", lambda r: f"{r['signal_writes_per_day']:.1f}")
    row("runs aborted (a list not served)", lambda r: f"{r['runs_aborted']:,}")
    row("reach gaps logged", lambda r: f"{r['reach_gaps']:,}" if r["design"] == "pager" else "–")
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
    add("## Recovery after each fault")
    add("")
    add("Events whose first failed attempt fell inside the fault and failed the way it fails (a 5xx in an outage, "
        "no answer in a period without answers): delivered within 30 minutes of its end / superseded by a newer "
        "passed event about the same thing / ignored by the pager / alarmed, of all that failed in it; then, when "
        "there are any, those delivered later and those lost silently.")
    add("")
    add("| fault | " + " | ".join(DESIGNS[d] for d in names) + " |")
    add("|---|" + "---:|" * len(names))
    for k, fault in enumerate(trace.faults):
        cells = []
        for d in names:
            o = results[d]["outages"][k]
            rest = [f"{o[key]:,} {word}" for key, word in (("late", "later"), ("lost", "lost")) if o.get(key)]
            cells.append(f"{o['in_time']:,} / {o['superseded']:,} / {o['ignored']:,} / {o['alarmed']:,} of {o['failed']:,}"
                         + (f"; {', '.join(rest)}" if rest else ""))
        add(f"| {fault.label} | " + " | ".join(cells) + " |")
    add("")
    metrics_section(add, results["pager"].get("metrics"))
    add("## Targets (pager)")
    add("")
    add("| target | measured | |")
    add("|---|---|---|")
    for target, measured, met in targets(results, cost, imports, modules, budget):
        add(f"| {target} | {measured} | {'met' if met else ('–' if met is None else '**not met**')} |")
    add("")
    if cost or modules:
        lean(add, cost, modules)
    if cost:
        add("## The webhook handler's cost per delivery (warm)")
        add("")
        add(f"`pager.webhook.handle_github` against the floor (HMAC-SHA256 check plus `json.loads` of the same body), "
            f"timed side by side in one run, {cost['n']:,} deliveries each, medians after the first "
            f"{min(50, cost['n'] // 10)}. The contribution goes through the fake GitHub and Telegram; its own cost "
            "leaves out the time spent inside the fakes (not the `requests` machinery, which is the handler's). "
            "Round trips: the table's loads plus writes (each one a DynamoDB request).")
        add("")
        add("| delivery | body | floor | handler | ratio | own cost | own ratio | HTTP calls | table writes | table round trips |")
        add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, label in (("ignored", "ignored (check_run, workflow_job)"), ("contribution", "contribution (issues.opened by an outsider)")):
            c = cost[name]
            add(f"| {label} | {c['body_bytes'] / 1000:.1f} kB | {c['floor_us']:.0f} µs | {c['handler_us']:.0f} µs | "
                f"{c['ratio']:.1f}× | {c['own_us']:.0f} µs | {c['own_ratio']:.1f}× | {_n(c['calls'])} | {_n(c['writes'])} | "
                f"{_n(c['round_trips'])} |")
        add("")
        add("Answers: " + "; ".join(f"{name}: " + ", ".join(f"{k} ×{v}" for k, v in cost[name]["outcomes"].items())
                                     for name in ("ignored", "contribution")) + ".")
        add("")
    if imports:
        add("## Cold import of each function")
        add("")
        add(f"A fresh `{imports['python']}` (`-I -S`) imports `app` from the function's folder with the layer and boto3 "
            f"(the runtime's) on its path; median of {imports['repeats']} runs. The layer: {imports['source']}, with the "
            "current `pager` copied in and everything compiled (unchecked-hash), as `layers/pager/Makefile` does; "
            "without bytecode: the same trees copied without `__pycache__`, run with `-B`. \"With its first "
            "invocation\" adds what the first event imports lazily (the webhook: the signals, clients and boto3; "
            "the sweep: the sweep, the alarm, clients and boto3).")
        add("")
        add("| function | with bytecode | with bytecode, with its first invocation | without bytecode | without, with its first invocation |")
        add("|---|---:|---:|---:|---:|")
        for name in ("webhook", "sweep"):
            c, b = imports[f"{name}_compiled"], imports[f"{name}_bare"]
            add(f"| {name} | {c['module'] * 1000:.0f} ms | {c['first_invocation'] * 1000:.0f} ms | "
                f"{b['module'] * 1000:.0f} ms | {b['first_invocation'] * 1000:.0f} ms |")
        add("")
    add("## How to read it")
    add("")
    add("- (a) is the decision as first accepted: one list, the 300 newest deliveries, so on a busy day its view "
        "is shorter than the 15 minutes between runs and failures fall off it; and a failed event of a kind that can "
        "be overtaken is dropped when a newer event of the same kind and repository passed, whatever it is about. (b) has no cap and no attempt "
        "count: it asks again for everything without an OK since its last run, in one burst, whatever the calls.")
    add("- Every event is about a thing: its kind, its repository and what pager keys its record by (a workflow on a "
        "branch; an app's check suite on a branch, or a release's suite by its head; a check run's name on a branch; "
        "an alert; an issue, pull request or discussion; each comment or review on its own; a release's tag). Of two "
        "events about one thing the newer is the one pager's handler takes for newer: a workflow run's number, "
        "else the time.")
    add("- **Superseded**: failed, never delivered, not alarmed, and a newer event about the same thing passed: it "
        "counts as done, the newer one stands. **Dropped as superseded by another thing**: lost silently, and a "
        "newer event of the same kind and repository passed but none about the same thing (another workflow, "
        "branch, pull request or alert): what the first rule drops. It is part of lost silently.")
    add("- A **stale redelivery** passed after a newer event about the same thing had passed. Pager's handlers "
        "compare order keys per thing and answer it without changing anything; it counts against its target only "
        "when its handling changed state (a signal record written, a Telegram message sent or edited, a dispatch or "
        "a merge), which the replay records for every attempt.")
    add("- Pager's sweep asks GitHub again for each failed event pager acts on, at most three attempts 15 minutes "
        "apart, follows it past its 3-hour window, and names it in the control repository's alarm once its attempts "
        "are used or GitHub is about to forget it (its entry is written to the table even while Telegram refuses; the message shows it at the first "
        "run Telegram answers). An alarmed event waits for the maintainer's redelivery from the app's Advanced page, "
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
    for d in names:
        if results[d]["sweep_keys"]:
            add(f"- {DESIGNS[d]} wrote its own records " + ", ".join(
                f"`{key}` {per_run:.2f}" for key, per_run in sorted(results[d]["sweep_keys"].items())) + " times per run.")
    add("- Simulation times: " + ", ".join(f"{DESIGNS[d]} {results[d]['seconds']:.0f} s" for d in names) + ".")
    return "\n".join(lines) + "\n"


def lean(add: Callable[[str], None], cost: dict[str, Any] | None, modules: dict[str, Any] | None) -> None:
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
            "path and the settings in its environment (no secret id: Secrets Manager is never asked), imports "
            "`functions/webhook/app.py` as Lambda does and invokes its `lambda_handler` once with a signed API Gateway "
            f"event of {modules['event']}, which pager ignores (answered {modules['outcome']}); then counts "
            "`sys.modules`, the interpreter's own included. The figure of before is the same measure run on the tree "
            f"of {BEFORE['modules']['commit']} (Python 3.11.7, this repository's virtualenv). Of the heavy packages only botocore's top-level "
            "package is expected now: Powertools imports it for its user agent (none of its submodules, nor boto3, "
            "requests, urllib3, jwt or cryptography, which the services import when they are first built).")
        add("")
