"""docs/benchmarks.md's section "Recovery after each fault": a row per fault of the full trace, a cell per
design with the fates of the events that failed in it. `report.report` calls `section` once."""

from __future__ import annotations

from typing import Any

from . import fleet
from .markdown import Add, Results, designs_table, fmt_s, heading, paragraph
from .measure import RECOVERY_LIMIT, percentile
from .simulate import DESIGNS

# What a cell adds after the fates, when not zero: the figure of the fault's row, its word.
REST = (("late", "later"), ("lost", "lost"), ("spent_alarmed", "spent in it"))


def _cell(o: dict[str, Any]) -> str:
    """One fault's figures for one design (`measure`'s fault row)."""
    rest = [f"{o[key]:,} {word}" for key, word in REST if o.get(key)]
    waited = f" · {fmt_s(percentile(o['to_pass'], 0.5))}" if o["to_pass"] else ""
    return (f"{o['in_time']:,} / {o['superseded']:,} / {o['ignored']:,} / {o['alarmed']:,} of {o['failed']:,}"
            + (f"; {', '.join(rest)}" if rest else "") + waited)


def section(add: Add, trace: fleet.Trace, results: Results) -> None:
    names = [d for d in DESIGNS if d in results]
    heading(add, "Recovery after each fault (the full trace)")
    paragraph(add, f"Events whose first failed attempt fell inside the fault and failed the way it fails (a 5xx in an "
              f"outage, no answer in a period without answers): delivered within {RECOVERY_LIMIT / 60:.0f} minutes of "
              "its end / superseded by a newer passed event about the same thing / ignored by the pager / alarmed, of "
              "all that failed in it; then, when there are any, those delivered later and those lost silently; after "
              "the dot, the median time from the fault's end to the passing redelivery; and the events alarmed because "
              "their attempts were spent in the fault.")
    designs_table(add, names, ([fault.label, *(_cell(results[d]["outages"][k]) for d in names)]
                               for k, fault in enumerate(trace.faults)), corner="fault")
