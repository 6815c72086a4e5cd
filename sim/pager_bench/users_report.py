"""docs/benchmarks.md's section "What users feel": each design on each trace, a row per figure a user
feels (the waits after a fault, what was alarmed or lost, stale redeliveries, the calls) and the weekly
bill of pager's own code. `report.report` calls `section` once."""

from __future__ import annotations

from collections.abc import Callable

from . import bill, fleet
from .markdown import (
    LIKE_FOR_LIKE,
    TRACES,
    Add,
    Bills,
    Figure,
    Results,
    counted,
    designs_table,
    heading,
    money,
    paragraph,
    spread,
)
from .measure import LONG_OUTAGE
from .simulate import DESIGNS

# A row per figure: its label, its cell from one replay's figures.
ROWS: list[tuple[str, Figure]] = [
    ("from a fault's end to the passing redelivery, median / 95th percentile", lambda r: spread(r["to_pass"]["all"])),
    ("… after an outage (Telegram 502, GitHub 5xx)", lambda r: spread(r["to_pass"]["outage"])),
    ("… after a period without answers", lambda r: spread(r["to_pass"]["no_answer"])),
    (f"alarmed because its attempts were spent in a fault (of them in one shorter than {LONG_OUTAGE / 3600:.0f} h)",
     lambda r: f"{counted(r, 'spent_alarmed')} ({counted(r, 'spent_alarmed_short')})"),
    ("alarmed in all / **lost silently**", lambda r: f"{counted(r, 'alarmed')} / **{counted(r, 'lost')}**"),
    ("stale redeliveries that changed state / in all",
     lambda r: f"{counted(r, 'stale_changed')} / {counted(r, 'stale_redeliveries')}"),
    ("calls per run, max; runs (and checks) over the budget",
     lambda r: f"{max(r['calls_max'], r['checks_calls_max']):,}; {r['over_budget']:,}"),
]

# Then a row per sum of the weekly bill (pager's own code only).
BILLED: list[tuple[str, Callable[[list[bill.Line]], float]]] = [
    ("AWS cost per week, list prices", bill.total),
    ("… less what the always-free allowances would cover", bill.total_after_always_free),
]

INTRO = ("Each design on both traces: how long an event that failed in a fault waits, once the fault is over, for "
         "its redelivery to pass; what was named in the alarm only because its attempts were spent while the fault "
         "lasted; what was lost; what a stale redelivery changed; the calls; and, for pager's own code, the stack's "
         "weekly AWS bill (below). " + LIKE_FOR_LIKE)


def _rows(results: Results, names: list[str], bills: dict[str, list[bill.Line]]) -> list[list[str]]:
    """One trace's rows: "–" for a design it did not replay (or, in the bill's rows, not pager's)."""
    figures = [[label, *(cell(results[d]) if d in results else "–" for d in names)] for label, cell in ROWS]
    billed = [[label, *(money(total(bills[d])) if d in bills else "–" for d in names)] for label, total in BILLED]
    return figures + billed


def section(add: Add, traces: dict[str, fleet.Trace], results: dict[str, Results], bills: Bills) -> None:
    names = [d for d in DESIGNS if d in results["full"]]
    heading(add, "What users feel")
    paragraph(add, INTRO)
    rows: list[list[str]] = []
    for name, rs in results.items():
        rows.append([f"**{TRACES[name]}** ({len(traces[name].events):,} events)", *[""] * len(names)])
        rows += _rows(rs, names, bills.get(name, {}))
    designs_table(add, names, rows)
