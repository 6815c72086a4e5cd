"""docs/benchmarks.md's section "Targets": each target with its measured value, met or not met, for pager
(fast recovery) on the full trace (its deliveries, its recovery, its writes and calls), its weekly bill,
its webhook function (warm, its modules, its cold start), the long outages and the burst. `targets`
gives the rows; `report.report` calls `section` once."""

from __future__ import annotations

from typing import Any

from . import bill, prices
from .costs import NOT_FOR_IGNORED, WAYS
from .markdown import TRACES, Add, Bills, Results, Target, count, fmt_s, heading, met, money, number, spread, table
from .measure import LONG_OUTAGE, RECOVERY_LIMIT

TO_PASS_MEDIAN, TO_PASS_P95 = 120.0, 240.0  # the targets: from an outage's end to the passing redelivery
COST_TARGET_MONTH = 1.50  # $ a month at list prices, a default deployment for the busy fleet
WRITES_PER_OUTAGE = 5  # an outage's writes: the note, the run the check starts (its lease, commit, lease given back), the note cleared
WRITES_SAID = 2  # and for one said in pager's own message: its entry closed, the state committed again
# The faults of the target "delivered within RECOVERY_LIMIT of its end": their kinds, what they are.
IN_TIME = ((("telegram", "github"), "an outage (Telegram 502, GitHub 5xx)"), (("timeout",), "a period without answers"))

# ------------------------------------------------------------------------------------------ deliveries


def _kept(c: dict[str, int]) -> list[Target]:
    """Nothing lost silently, dropped for another thing, or changed by a stale redelivery."""
    return [
        ("on the busy trace no 5xx failure lost silently",
         f"{c.get('lost_5xx', 0)} of {c.get('failed_5xx', 0)} events that got a 5xx", c.get("lost_5xx", 0) == 0),
        ("no failed event dropped as superseded by another thing (a newer passed event of the same kind and "
         "repository, about another workflow, pull request, alert, ...)",
         f"{c.get('dropped_other', 0)} of {c.get('failed', 0)} failed events", c.get("dropped_other", 0) == 0),
        ("no stale redelivery changed state (a redelivery that passed after a newer event about the same thing "
         "had passed: no table write, Telegram message or edit, dispatch or merge)",
         f"{c.get('stale_changed', 0)} of {c.get('stale_redeliveries', 0)} stale redeliveries", c.get("stale_changed", 0) == 0),
    ]


def _delivered_alone(in_time: int, failed: int, share: float) -> str:
    """When the target is met only by counting the superseded and the ignored as done, the share delivered."""
    if failed and share >= 0.99 and in_time / failed < 0.99:
        return f"; met only by counting the superseded and the ignored as done: delivered alone {in_time / failed:.1%}"
    return ""


def _in_time(p: dict[str, Any], kinds: tuple[str, ...], what: str) -> Target:
    outages = [o for o in p["outages"] if o["kind"] in kinds]
    failed = sum(o["failed"] for o in outages)
    in_time, stood, idle = (sum(o[key] for o in outages) for key in ("in_time", "superseded", "ignored"))
    share = (in_time + stood + idle) / failed if failed else 1.0
    return (f"≥ 99% of events that failed during {what} delivered within {RECOVERY_LIMIT / 60:.0f} min of its end "
            "(an event superseded by a newer passed one about the same thing counts as done: the newer one "
            "stands; so does one the pager only ignores)",
            f"{in_time} delivered + {stood} superseded + {idle} ignored of {failed} ({share:.1%}); "
            f"{sum(o['alarmed'] for o in outages)} alarmed" + _delivered_alone(in_time, failed, share),
            share >= 0.99)


def _delivery_targets(p: dict[str, Any]) -> list[Target]:
    return _kept(p["counts"]) + [_in_time(p, kinds, what) for kinds, what in IN_TIME]


# ------------------------------------------------------------------------------------------ recovery


def _to_pass(t: dict[str, Any]) -> Target:
    outage = t["outage"]  # the target is about outages; a period without answers is shown beside it
    return (f"from an outage's end (Telegram 502, GitHub 5xx) to each of its events' passing redelivery: median "
            f"≤ {fmt_s(TO_PASS_MEDIAN)}, 95th percentile ≤ {fmt_s(TO_PASS_P95)}",
            f"{spread(outage)}; besides, after a period without answers (the handler acted; GitHub did not wait for "
            f"its answer, and the 15-minute runs bring these back) {spread(t['no_answer'])}",
            outage["n"] == 0 or (outage["median"] <= TO_PASS_MEDIAN and outage["p95"] <= TO_PASS_P95))


def _writes_per_outage(rec: dict[str, Any]) -> Target:
    return (f"writes: at most {WRITES_PER_OUTAGE} per outage beyond the scheduled runs' own (a delivery's note of what "
            "waits, when the outage starts; the run the recovery check starts: its lease taken, its commit, its lease given "
            f"back; the note cleared), {WRITES_PER_OUTAGE + WRITES_SAID} for one of half an hour or more (said in ⚙️ pager: "
            "its entry closed, the state committed again)",
            f"at most {rec['total_max']} per outage ({rec.get('unsaid_max', 0)} shorter than half an hour, "
            f"{rec.get('said_max', 0)} longer), {rec['total_mean']:.1f} on average over the {rec['noted']} outages "
            f"that noted something (of {rec['outages']}): the notes {rec['mean']:.1f} (at most {rec['max']}), the runs "
            f"the check started (the sweep's records, pager's own health) {rec['check_run_mean']:.1f} (at most "
            f"{rec['check_run_max']}); the periods without answers whose ping held pager's own endpoint "
            f"({rec.get('own_holds', 0)}): at most {rec.get('own_max', 0)} each",
            rec.get("unsaid_max", 0) <= WRITES_PER_OUTAGE and rec.get("said_max", 0) <= WRITES_PER_OUTAGE + WRITES_SAID
            and rec.get("own_max", 0) <= WRITES_PER_OUTAGE)


def _writes_per_day(p: dict[str, Any]) -> Target:
    target = ("table writes per day within 10% of one per run plus the sweep's lease (taken and given back by each run, "
              "taken by each check that asks) and the alarm and signal records and the notes of what waits")
    lease = p.get("lease_writes_per_day", 0.0)
    expected = p["runs_per_day"] + lease + p["alarm_writes_per_day"] + p["signal_writes_per_day"] + p["recovery_writes_per_day"]
    if not expected:
        return target, "–", None
    return (target,
            f"{p['writes_per_day']:.0f} per day against {expected:.0f} ({p['runs_per_day']:.0f} runs + {lease:.0f} lease + "
            f"{p['alarm_writes_per_day']:.0f} alarm + {p['signal_writes_per_day']:.0f} signal + "
            f"{p['recovery_writes_per_day']:.1f} notes): {p['writes_per_day'] / expected - 1:+.0%}",
            abs(p["writes_per_day"] - expected) <= 0.1 * expected)


def _recovery_targets(p: dict[str, Any], budget: int) -> list[Target]:
    c = p["counts"]
    return [
        _to_pass(p["to_pass"]),
        (f"no event alarmed because its attempts were spent during an outage shorter than {LONG_OUTAGE / 3600:.0f} hours",
         f"{c.get('spent_alarmed_short', 0)} (in any fault: {c.get('spent_alarmed', 0)})", c.get("spent_alarmed_short", 0) == 0),
        _writes_per_outage(p["recovery"]),
        (f"calls: at most the call budget ({budget}) in every run and every recovery check",
         f"runs: max {p['calls_max']}, mean {p['calls_mean']:.1f}; checks without a run: max {p['checks_calls_max']}; "
         f"{p['over_budget']} over", p["over_budget"] == 0),
        _writes_per_day(p),
    ]


# ------------------------------------------------------------------------------------------ the bill


def _line(line: bill.Line, dollars: float) -> str:
    """A line of the bill by its service and the first words of its item: Lambda requests $0.123."""
    return f"{line.service} {line.item.split(' (')[0]} {money(dollars)}"


def _listed(bills: dict[str, list[bill.Line]], name: str) -> Target:
    month = prices.WEEKS_PER_MONTH
    lines = bills[name]
    listed = bill.total(lines) * month
    largest = sorted(lines, key=lambda line: -line.dollars)[:4]
    also = "; ".join(f"{TRACES[n]}: {money(bill.total(bills[n]) * month)}" for n in bills if n != name)
    return (f"a default deployment for the busy fleet ({TRACES[name]}) costs at most ${COST_TARGET_MONTH:.2f} a month at "
            "list prices, none of the free tier left",
            f"{money(listed)} a month (the largest lines: " + ", ".join(_line(line, line.dollars * month) for line in largest)
            + ")" + (f"; {also}" if also else ""), listed <= COST_TARGET_MONTH)


def _always_free(lines: list[bill.Line]) -> Target:
    month = prices.WEEKS_PER_MONTH
    after = bill.total_after_always_free(lines) * month
    left = [line for line in lines if line.after_always_free * month >= 0.005]
    return ("... and $0 within AWS's always-free allowances",
            f"{money(after)} a month: " + (", ".join(
                _line(line, line.after_always_free * month)
                + ("" if line.free is None else " (not always free: only an account opened before 15 July 2025 had it, for its first 12 months)")
                for line in left) if left else "nothing left"), after < 0.005)


def _cost_targets(bills: dict[str, list[bill.Line]] | None) -> list[Target]:
    """The bill of a default deployment (the subscribed events: what the README's app receives; else the full
    trace) against both targets, a month at list prices and what the always-free allowances leave."""
    if not bills:
        return []
    name = "subscribed" if "subscribed" in bills else "full"
    return [_listed(bills, name), _always_free(bills[name])]


# ------------------------------------------------------------------------------------------ the webhook function


def _warm_targets(cost: dict[str, Any] | None) -> list[Target]:
    if not cost:
        return []
    ig, co = cost["ignored"], cost["contribution"]
    return [
        ("webhook warm, timed at `lambda_handler` (the resolver and the metrics flush included): its cost per "
         "delivery within 3× the floor (an ignored event)",
         f"{ig['app_us']:.0f} µs against {ig['floor_us']:.0f} µs: {ig['app_ratio']:.1f}× "
         f"(`handle_github` alone {ig['ratio']:.1f}×)", ig["app_ratio"] <= 3),
        ("the same for a contribution (its own cost: time in the fake GitHub and Telegram left out)",
         f"{co['app_own_us']:.0f} µs against {co['floor_us']:.0f} µs: {co['app_own_ratio']:.1f}× "
         f"(`handle_github` alone {co['own_ratio']:.1f}×); its {number(co['calls'])} HTTP calls alone, through `requests` "
         f"and the fakes' transport to an answer made at once, take {co['calls'] * co['bare_call_us']:.0f} µs, "
         f"{co['calls'] * co['bare_call_us'] / co['floor_us']:.1f}× the floor", co["app_own_ratio"] <= 3),
        ("a contribution takes at most 4 round trips to the table",
         f"{number(co['round_trips'])} ({count(co['round_trips_loads'], 'read')} + {count(co['round_trips_writes'], 'write')}, "
         f"{count(co['writes'], 'record')} written; at most {co['round_trips_max']} in any delivery of the run)",
         co["round_trips_max"] <= 4),
    ]


def _modules_targets(modules: dict[str, Any] | None) -> list[Target]:
    """None of the clients' libraries for an ignored delivery; as deployed boto3 reads the secrets' SecureString
    on a new environment's first request (`costs.WAYS`), which the target allows and says."""
    if not modules:
        return []
    clients = [name for name in NOT_FOR_IGNORED if name != "boto3"]
    heavy = {way: [name for name in NOT_FOR_IGNORED if name in modules[way]["loaded"]] for way in WAYS}

    def measured(way: str) -> str:
        names = ", ".join(name + (" for the secrets" if name == "boto3" and way == "deployed" else "")
                          for name in heavy[way])
        return f"{WAYS[way]}: {names or 'none of them'}, {modules[way]['modules']} modules in all"

    return [("an ignored delivery loads none of " + ", ".join(clients) + ", nor boto3 with the secrets in the "
             "environment (as deployed, boto3 reads the secrets' SecureString)",
             "; ".join(measured(way) for way in WAYS),
             not heavy["local"] and not set(heavy["deployed"]) & set(clients))]


def _cold_targets(imports: dict[str, Any] | None) -> list[Target]:
    if not imports:
        return []
    w = imports["webhook_compiled"]
    return [("cold import of the webhook function under 0.5 s with compiled bytecode",
             f"{w['module'] * 1000:.0f} ms (with its first invocation: {w['first_invocation'] * 1000:.0f} ms)",
             w["module"] < 0.5)]


# ------------------------------------------------------------------------------------------ long outages, a burst


def _back(r: dict[str, Any]) -> str:
    """One scenario's pages back (`outages.long_outages`' figures of pager)."""
    minutes = "–" if r["back_minutes"] is None else f"{r['back_minutes']:.0f} min"
    return f"{r['as_page']} as pages, {r['to_press']} to press, the last {minutes} after"


def _all_back(mine: list[dict[str, Any]]) -> bool:
    """None to press, and the last page back in time, after every scenario."""
    pressed = sum(r["to_press"] for r in mine)
    return pressed == 0 and all((r["back_minutes"] or 0) <= RECOVERY_LIMIT / 60 for r in mine)


def _long_outage_targets(outages: dict[str, Results]) -> list[Target]:
    mine = {label: rs["pager"] for label, rs in outages.items() if "pager" in rs}
    if not mine:
        return []
    return [
        ("after a Telegram outage of any length, what GitHub still keeps comes back as the pages themselves "
         f"(none as an entry to press), within {RECOVERY_LIMIT / 60:.0f} min of Telegram's return",
         "; ".join(f"{label}: {_back(r)}" for label, r in mine.items()), _all_back(list(mine.values()))),
        ("what GitHub no longer keeps is said in the alarm: none lost silently",
         "; ".join(f"{label}: {r['forgotten']} said, {r['lost']} lost" for label, r in mine.items()),
         all(r["lost"] == 0 for r in mine.values())),
    ]


def _burst_targets(burst: dict[str, Any] | None) -> list[Target]:
    if not burst:
        return []
    return [(f"a burst of {burst['deliveries']} failures on one repository: no first answer of 500 for a stored "
             "entry", f"{burst['first_500']} of {burst['deliveries']}", burst["first_500"] == 0)]


# ------------------------------------------------------------------------------------------ the section


def targets(results: Results, cost: dict[str, Any] | None, imports: dict[str, Any] | None,
            modules: dict[str, Any] | None, budget: int,
            bills: dict[str, list[bill.Line]] | None = None) -> list[Target]:
    """(target, measured, met) for pager (with fast recovery) on the full trace, its weekly bill on each
    trace (`bills`, by trace) and its webhook function."""
    p = results["pager"]
    return (_delivery_targets(p) + _recovery_targets(p, budget) + _cost_targets(bills)
            + _warm_targets(cost) + _modules_targets(modules) + _cold_targets(imports))


def section(add: Add, results: Results, cost: dict[str, Any] | None, imports: dict[str, Any] | None,
            modules: dict[str, Any] | None, budget: int, bills: Bills,
            outages: dict[str, Results] | None = None, burst: dict[str, Any] | None = None) -> None:
    """The targets' table; `bills` by trace and design (`bill_report.bills_of`), pager's read."""
    mine = {name: by_design["pager"] for name, by_design in bills.items() if "pager" in by_design}
    rows = (targets(results, cost, imports, modules, budget, mine)
            + _long_outage_targets(outages or {}) + _burst_targets(burst))
    heading(add, "Targets (pager, fast recovery, the full trace; the long outages and the burst)")
    table(add, ["target", "measured", ""], "lll", ([target, measured, met(ok)] for target, measured, ok in rows))
