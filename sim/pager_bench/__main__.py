"""`make bench`: replay a busy fleet's week with three sweeps, measure the webhook's hot path and cold
imports, and write docs/benchmarks.md.

    python -m pager_bench [--days 7] [--seed 1] [--jobs 3] [--designs pager,first,script]
                          [--handler-n 3000] [--import-repeats 7] [--skip-imports] [--out docs/benchmarks.md]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import fleet
from .costs import ROOT, cold_imports, handler_cost, ignored_delivery_modules
from .report import report
from .simulate import DESIGNS, private_key, register_signals, simulate_designs


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pager_bench", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--days", type=float, default=7.0, help="days of the fleet's trace (default: a week)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=len(DESIGNS), help="replays in parallel (processes)")
    parser.add_argument("--designs", default=",".join(DESIGNS), help="which sweeps to replay")
    parser.add_argument("--handler-n", type=int, default=3000, help="deliveries per case in the handler's cost")
    parser.add_argument("--import-repeats", type=int, default=7)
    parser.add_argument("--skip-imports", action="store_true", help="no cold import measure (needs pip the first time)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    began = time.perf_counter()
    designs = [d for d in args.designs.split(",") if d]
    unknown = [d for d in designs if d not in DESIGNS]
    if unknown:
        parser.error(f"unknown designs {', '.join(unknown)} (known: {', '.join(DESIGNS)})")
    trace = fleet.make_trace(seed=args.seed, days=args.days)
    pem = private_key()
    handled = register_signals()
    _log(f"trace: {args.days:g} days, {len(trace.events):,} events; replaying {', '.join(designs)} with {args.jobs} jobs")
    results = simulate_designs(trace, designs, pem=pem, jobs=args.jobs, progress=_log)
    for d in designs:
        c = results[d]["counts"]
        _log(f"{d}: failed {c.get('failed', 0)}, recovered {c.get('recovered', 0)}, alarmed {c.get('alarmed', 0)}, "
             f"superseded {c.get('superseded', 0)}, lost {c.get('lost', 0)} (dropped by another thing "
             f"{c.get('dropped_other', 0)}), stale redeliveries that changed state {c.get('stale_changed', 0)} of "
             f"{c.get('stale_redeliveries', 0)}, calls max {results[d]['calls_max']}")
    _log("handler cost ...")
    cost = handler_cost(args.handler_n, pem=pem)
    _log(f"round trips: contribution {cost['contribution']['round_trips']:g}, ignored {cost['ignored']['round_trips']:g}")
    _log("modules of an ignored delivery ...")
    modules = ignored_delivery_modules(pem=pem)
    _log(f"an ignored delivery: {modules['modules']} modules, of the heavy ones {', '.join(modules['loaded']) or 'none'}")
    imports = None
    if not args.skip_imports:
        _log("cold imports ...")
        imports = cold_imports(args.import_repeats, log=_log)
    if "pager" not in results:
        _log("no report: the pager design was not replayed")
        return 0
    text = report(trace, results, cost, imports, modules, args=args, handled=handled, elapsed=time.perf_counter() - began)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    _log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
