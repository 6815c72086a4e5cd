"""docs/benchmarks.md's section "Custom metrics published": per week, measured in the same replay, what the
code publishes now and what the code before the cut published (the same deliveries and runs, counted by
its rules). `report.report` calls `section` once; it writes nothing when the replay published none."""

from __future__ import annotations

from typing import Any

from pager.observe import METRICS

from . import prices
from .markdown import Add, heading, paragraph, table

INTRO = ("CloudWatch bills a custom metric for each hour it gets data. Counted in the replay above for pager (fast "
         "recovery, the full trace): the (metric, hour) pairs its code published, and those the code before "
         "published for the same deliveries and scheduled runs (a metric per delivery and per answer, six per sweep "
         f"run, zeros included). At ${prices.CUSTOM_METRIC_MONTH:.2f} per metric-month prorated by the hour, free tier "
         "left out.")


def _names(names: list[str]) -> str:
    return ", ".join(f"`{name}`" for name in names)


def section(add: Add, published: dict[str, Any] | None) -> None:
    if not published:
        return
    before, after = published["before"], published["after"]
    heading(add, "Custom metrics published")
    paragraph(add, INTRO)
    table(add, ["", "before", "now"], "lrr", [
        ["metrics", f"{len(before['names'])}", f"{len(after['names'])}"],
        ["metric-hours per week", f"{before['metric_hours_per_week']:,.0f}", f"{after['metric_hours_per_week']:,.0f}"],
        ["$ per week", f"{prices.metric_hours_cost(before['metric_hours_per_week']):.3f}",
         f"{prices.metric_hours_cost(after['metric_hours_per_week']):.3f}"],
    ])
    paragraph(add, "Now: " + _names(after["names"]) + " (of `" + "`, `".join(sorted(METRICS))
              + "`: the others are published only when not zero, and none was in this replay). Before: "
              + _names(before["names"]) + ".")
