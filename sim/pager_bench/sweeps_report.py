"""docs/benchmarks.md's section "The sweeps compared on the same trace": the designs side by side on the
full trace, a row per figure (`ROWS`), then the table's writes by key kind, what was lost silently or
dropped by kind, and the first events pager lost. `report.report` calls `section` once."""

from __future__ import annotations

from typing import Any

from .markdown import LIKE_FOR_LIKE, Add, Figure, Results, counted, designs_table, fmt_s, heading, paragraph, pct, spread
from .simulate import DESIGNS, PAGER_DESIGNS


def _pager_only(figure: Figure) -> Figure:
    """A figure only pager's own code has: "–" for the other designs."""
    return lambda r: figure(r) if r["design"] in PAGER_DESIGNS else "–"


def _recovery_runs(r: dict[str, Any]) -> str:
    rec = r["recovery"]
    return f"{rec['check_run_mean']:.1f} ({rec['check_run_max']}); {rec['total_mean']:.1f} ({rec['total_max']})"


def _state_bytes(r: dict[str, Any]) -> str:
    size = r["state_bytes"]
    return f"{size['median'] / 1000:.1f} kB / {size['max'] / 1000:.1f} kB" if size["n"] else "–"


# A row per figure: its label ({budget}: the call budget), its cell from one replay's figures.
ROWS: list[tuple[str, Figure]] = [
    ("failed events (a 5xx or no answer)",
     lambda r: f"{counted(r, 'failed')} ({counted(r, 'failed_5xx')} 5xx, {counted(r, 'failed_no_answer')} no answer)"),
    ("recovered",
     lambda r: f"{counted(r, 'recovered')} ({pct(r['counts'].get('recovered', 0), r['counts'].get('failed', 0))})"),
    ("alarmed", lambda r: counted(r, "alarmed")),
    ("… because its attempts were spent in a fault", lambda r: counted(r, "spent_alarmed")),
    ("superseded by a newer passed event about the same thing", lambda r: counted(r, "superseded")),
    ("ignored by the pager (no handler: nothing to lose)", lambda r: counted(r, "ignored")),
    ("**lost silently** (5xx / no answer)",
     lambda r: f"**{counted(r, 'lost')}** ({counted(r, 'lost_5xx')} / {counted(r, 'lost_no_answer')})"),
    ("… of them dropped as superseded by another thing", lambda r: counted(r, "dropped_other")),
    ("stale redeliveries that changed state / in all",
     lambda r: f"{counted(r, 'stale_changed')} / {counted(r, 'stale_redeliveries')}"),
    ("from a fault's end to the passing redelivery, median / 95th percentile", lambda r: spread(r["to_pass"]["all"])),
    ("time to recovery (from the first failed attempt), median", lambda r: fmt_s(r["ttr_median"])),
    ("time to recovery, 95th percentile", lambda r: fmt_s(r["ttr_p95"])),
    ("… median after a 5xx / after no answer",
     lambda r: f"{fmt_s(r['ttr_5xx_median'])} / {fmt_s(r['ttr_no_answer_median'])}"),
    ("sweep runs (scheduled / started by the recovery check)",
     lambda r: f"{r['runs']:,} ({r['scheduled_runs']:,} / {r['check_runs']:,})"),
    ("recovery checks (one table read when nothing waits)", lambda r: f"{r['checks']:,}" if r["checks"] else "–"),
    ("runs that asked for nothing while a probe still failed", _pager_only(lambda r: f"{r['held_runs']:,}")),
    ("calls per run, mean", lambda r: f"{r['calls_mean']:.1f}"),
    ("calls per run, max (a recovery check without a run)", lambda r: f"{r['calls_max']:,} ({r['checks_calls_max']:,})"),
    ("runs and checks over the budget of {budget} calls",
     lambda r: f"{r['over_budget']:,} of {r['runs'] + r['checks'] - r['check_runs']:,}"),
    ("redeliveries asked for", lambda r: f"{r['redeliveries']:,}"),
    ("table writes per day", lambda r: f"{r['writes_per_day']:.0f}"),
    ("… of them the sweep's own (state, last run)", lambda r: f"{r['sweep_writes_per_day']:.1f}"),
    ("… a delivery's note of what waits (in the sweep's state item)", lambda r: f"{r['recovery_writes_per_day']:.1f}"),
    ("… alarm records", lambda r: f"{r['alarm_writes_per_day']:.1f}"),
    ("… signal records", lambda r: f"{r['signal_writes_per_day']:.1f}"),
    ("notes of what waits per outage that noted one, mean (max)",
     _pager_only(lambda r: f"{r['recovery']['mean']:.1f} ({r['recovery']['max']})")),
    ("… and table writes of the runs the check started, mean (max); both together",
     lambda r: _recovery_runs(r) if r["checks"] else "–"),
    ("runs aborted (a list not served)", lambda r: f"{r['runs_aborted']:,}"),
    ("the sweep's deliveries item as a run saved it (what each check reads), median / max", _state_bytes),
    ("reach gaps logged (deliveries GitHub forgot unread)", _pager_only(lambda r: f"{r['reach_gaps']:,}")),
]

BY_KIND = (("lost_kinds", "Lost silently"), ("dropped_kinds", "Dropped as superseded by another thing"))


def _by_kind(add: Add, results: Results, names: list[str]) -> None:
    """The table's writes by key kind, then what was lost silently or dropped by kind (when any was)."""
    paragraph(add, "Table writes by key kind: " + "; ".join(
        f"{DESIGNS[d]}: " + ", ".join(f"{k} {v:,}" for k, v in sorted(results[d]["writes"].items()))
        for d in names) + ".")
    for key, what in BY_KIND:
        kind_lines = [f"{DESIGNS[d]}: " + ", ".join(f"{k} {v}" for k, v in sorted(results[d][key].items()))
                      for d in names if results[d].get(key)]
        if kind_lines:
            paragraph(add, f"{what}, by kind: " + "; ".join(kind_lines) + ".")


def _attempts(lost: dict[str, Any]) -> str:
    return f"{lost['event']}.{lost['action']} " + ", ".join(
        f"{at} {code}{' r' if again else ''}" for at, code, again in lost["attempts"])


def _lost_examples(add: Add, pager: dict[str, Any]) -> None:
    lost = pager.get("lost_examples") or []
    if lost:
        paragraph(add, f"Lost silently by {DESIGNS['pager']}, the first {len(lost)} (attempts: seconds from the trace's "
                  "start, status code, r for a redelivery): " + "; ".join(_attempts(x) for x in lost) + ".")


def section(add: Add, results: Results, budget: int) -> None:
    names = [d for d in DESIGNS if d in results]
    heading(add, "The sweeps compared on the same trace (the full trace)")
    paragraph(add, LIKE_FOR_LIKE)
    designs_table(add, names, ([label.format(budget=budget), *(cell(results[d]) for d in names)] for label, cell in ROWS))
    _by_kind(add, results, names)
    _lost_examples(add, results["pager"])
