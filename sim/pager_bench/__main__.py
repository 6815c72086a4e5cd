"""`make bench`: replay a busy fleet's week with four sweeps, on the full trace and on the events the
README subscribes to, and pager once more on the latter with quiet hours and with each rest (what the
maintainer's phone lives through), the long outages, the burst and the scale table, all side by side in
`--jobs` processes (`pager_bench.replays`); then, alone, measure the webhook's hot path and both functions'
cold starts; write docs/benchmarks.md.

    python -m pager_bench [--days 7] [--seed 1] [--jobs N] [--designs pager,pager-15,first,script]
                          [--traces full,subscribed] [--handler-n 3000] [--import-repeats 7]
                          [--skip-imports] [--scale 10000,40000,100000,250000] [--skip-scale]
                          [--out docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import fleet
from .costs import ROOT, WAYS, cold_imports, handler_cost
from .held import ENDPOINT_HOURS
from .replays import Plan, replay_all
from .report import TRACES, report
from .scale import SIZES
from .simulate import DESIGNS, private_key, register_signals


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _summary(name: str, design: str, result: dict) -> str:
    c, t = result["counts"], result["to_pass"]
    median = t["all"]["median"]
    p95 = t["all"]["p95"]
    return (f"{name} trace, {design}: failed {c.get('failed', 0)}, recovered {c.get('recovered', 0)}, alarmed "
            f"{c.get('alarmed', 0)} (attempts spent in a fault {c.get('spent_alarmed', 0)}), superseded "
            f"{c.get('superseded', 0)}, lost {c.get('lost', 0)} (dropped by another thing {c.get('dropped_other', 0)}), "
            f"stale redeliveries that changed state {c.get('stale_changed', 0)} of {c.get('stale_redeliveries', 0)}, "
            f"from a fault's end to the pass: median {median if median is None else round(median)} s, p95 "
            f"{p95 if p95 is None else round(p95)} s; calls max {result['calls_max']}, runs {result['runs']}, "
            f"checks {result['checks']} ({result['seconds']:.0f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pager_bench", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--days", type=float, default=7.0, help="days of the fleet's trace (default: a week)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=_cpus(), help="processes the replays run in, side by side "
                        "(default: one per CPU)")
    parser.add_argument("--designs", default=",".join(DESIGNS), help="which sweeps to replay")
    parser.add_argument("--traces", default=",".join(TRACES), help="which traces: full, subscribed (the README's events)")
    parser.add_argument("--handler-n", type=int, default=3000, help="deliveries per case in the handler's cost")
    parser.add_argument("--import-repeats", type=int, default=7)
    parser.add_argument("--skip-imports", action="store_true", help="no cold start measure (needs pip the first time)")
    parser.add_argument("--scale", default=",".join(map(str, SIZES)), help="deliveries a day of the scale table's sizes")
    parser.add_argument("--skip-scale", action="store_true", help="no scale table, nor the outages the sweep must hold through")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    began = time.perf_counter()
    designs = [d for d in args.designs.split(",") if d]
    names = [t for t in args.traces.split(",") if t]
    unknown = [d for d in designs if d not in DESIGNS] + [t for t in names if t not in TRACES]
    if unknown:
        parser.error(f"unknown designs or traces {', '.join(unknown)} (known: {', '.join([*DESIGNS, *TRACES])})")
    trace = fleet.make_trace(seed=args.seed, days=args.days)
    pem = private_key()
    handled = register_signals()
    every = {"full": trace, "subscribed": fleet.only(trace, handled)}
    traces = {name: every[name] for name in names}
    _log(f"trace: {args.days:g} days, " + ", ".join(f"{name} {len(t.events):,} events" for name, t in traces.items())
         + f"; replaying {', '.join(designs)} on each, and the other replays, side by side (--jobs {args.jobs})")
    sizes = None if args.skip_scale else [int(n.replace("_", "")) for n in args.scale.split(",") if n]
    plan = Plan(seed=args.seed, sizes=sizes, cold_trees=not args.skip_imports)
    done = replay_all(traces, designs, plan, pem=pem, jobs=args.jobs, progress=_log)
    results = done.results
    for name, by_design in results.items():
        for design, result in by_design.items():
            _log(_summary(name, design, result))
        if "phone_quiet" in by_design.get("pager", {}):
            plain, quiet = by_design["pager"]["phone"], by_design["pager"]["phone_quiet"]
            _log(f"{name} trace, the phone: {plain['buzzes']} buzzes of {plain['sends']} sends ({plain['night']} at "
                 f"night); with quiet hours {quiet['buzzes']} ({quiet['inside_quiet']} inside them)")
    for label, by_design in done.outages.items():
        for design, pages in by_design.items():
            _log(f"long outage {label}, {design}: {pages}")
    _log(f"a burst of {done.burst['deliveries']} failures on one repository: {done.burst['first_500']} answered 500")
    if done.scale is not None:
        for label, g in done.scale["held"]["github"].items():
            _log(f"GitHub down {label}: {g}")
        _log(f"pager's endpoint down {ENDPOINT_HOURS:g} h: {done.scale['held']['endpoint']}")
    for way, label in WAYS.items() if done.modules else ():
        modules = done.modules
        _log(f"an ignored delivery, {label}: {modules[way]['modules']} modules, of the heavy ones "
             f"{', '.join(modules[way]['loaded']) or 'none'}")
    _log("handler cost ...")
    cost = handler_cost(args.handler_n, pem=pem)
    _log(f"round trips: contribution {cost['contribution']['round_trips']:g}, ignored {cost['ignored']['round_trips']:g}")
    imports = None
    if not args.skip_imports:
        _log("cold starts ...")
        imports = cold_imports(args.import_repeats, log=_log, pem=pem, trees=done.trees)
    if "pager" not in designs or "full" not in traces:
        _log("no report: pager's design was not replayed on the full trace")
        return 0
    text = report(traces, results, cost, imports, done.modules, args=args, handled=handled, outages=done.outages,
                  burst=done.burst, elapsed=time.perf_counter() - began, processes=done.processes, scale=done.scale)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    _log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
