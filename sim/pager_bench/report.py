"""docs/benchmarks.md, section by section: the trace, what users feel on both traces, the sweeps side by
side, recovery per fault, the long outages and the burst, the custom metrics, the stack's weekly AWS cost,
the targets (pager), what the maintainer's phone lives through, the lean hot path, the handler's cost, the
cold start, how to read it, and a busy fleet's size. Each section is a module of its own (`trace_report`,
`users_report`, `sweeps_report`, `faults_report`, `outages_report`, `metrics_report`, `bill_report`,
`targets_report`, `phone_report`, `lean_report`, `handler_report`, `cold_report`, `reading_report`,
`scale_report`), with a `section(add, ...)` that writes its lines; what they share (a table's rows, a
figure's format) is in `markdown`. `report` puts them in order."""

from __future__ import annotations

import argparse
from typing import Any

from . import (
    bill_report,
    cold_report,
    faults_report,
    fleet,
    handler_report,
    lean_report,
    metrics_report,
    outages_report,
    phone_report,
    reading_report,
    scale_report,
    sweeps_report,
    targets_report,
    trace_report,
    users_report,
)
from .markdown import TRACES, Add, Results
from .targets_report import targets

__all__ = ["TRACES", "report", "targets"]


def _phone(add: Add, traces: dict[str, fleet.Trace], results: dict[str, Results]) -> None:
    """What the maintainer's phone lives through, on the subscribed events if they were replayed (else the full
    trace); nothing when pager's replay did not watch the phone."""
    on = next((name for name in ("subscribed", "full") if "phone" in results.get(name, {}).get("pager", {})), None)
    if on is not None:
        mine = results[on]["pager"]
        phone_report.section(add, traces[on], TRACES[on], mine["phone"], mine.get("phone_quiet"), mine.get("phone_gaps"))


def report(traces: dict[str, fleet.Trace], results: dict[str, Results], cost: dict[str, Any] | None,
           imports: dict[str, Any] | None, modules: dict[str, Any] | None = None, *, args: argparse.Namespace,
           handled: list[str], elapsed: float, processes: int = 1, outages: dict[str, Results] | None = None,
           burst: dict[str, Any] | None = None, scale: dict[str, Any] | None = None) -> str:
    """docs/benchmarks.md from the replays (by trace, "full" and maybe "subscribed", then design), the
    handler's cost, the cold starts and the modules of an ignored delivery (each of the last three may be
    None: its section and targets are left out), the long outages (by scenario, then design) and the
    burst (`pager_bench.outages`; either may be None: left out), and what a busy fleet's size does
    (`pager_bench.scale_report`; None: left out)."""
    full = results["full"]
    budget = full["pager"]["call_budget"]
    bills = bill_report.bills_of(results, imports)
    lines: list[str] = []
    add = lines.append
    trace_report.header(add, args, elapsed, processes)
    trace_report.section(add, traces, handled)
    users_report.section(add, traces, results, bills)
    sweeps_report.section(add, full, budget)
    faults_report.section(add, traces["full"], full)
    outages_report.section(add, outages or {}, burst, full)
    metrics_report.section(add, full["pager"].get("metrics"))
    bill_report.section(add, results, bills, imports)
    targets_report.section(add, full, cost, imports, modules, budget, bills, outages, burst)
    _phone(add, traces, results)
    lean_report.section(add, cost, modules)
    handler_report.section(add, cost)
    cold_report.section(add, imports, modules)
    reading_report.section(add, traces["full"], results)
    if scale:
        add("")
        scale_report.section(add, scale)
    return "\n".join(lines) + "\n"
