"""docs/benchmarks.md's section "After long outages, and in a burst": the long Telegram outages by design
(`pager_bench.outages`), the first answers of 5xx in the busiest quarter hour of the full trace, and the
burst. `report.report` calls `section` once; it writes nothing without the long outages and the burst."""

from __future__ import annotations

from typing import Any

from .markdown import Add, Results, designs_table, heading, paragraph
from .simulate import DESIGNS, DRAIN

INTRO = ("Telegram answers 502 to every call for hours while someone from outside comments every so often, each "
         "comment a page (`pager_bench.outages`; the same replay as above, for the outage and "
         f"{DRAIN / 3600:.0f} hours after it). Per design: of the pages, those that reached the chat as the page "
         "itself / as an entry to press in ⚙️ pager's message / said as forgotten (counted in the "
         "alarm's \"N events GitHub no longer keeps\") / **lost silently**; then the minutes from Telegram's "
         "return to the last page's passing delivery. Below, the most attempts GitHub made of one page and the "
         "redeliveries the runs asked for.")


def _pages(r: dict[str, Any]) -> str:
    return (f"{r['as_page']} / {r['to_press']} / {r['forgotten']} / **{r['lost']}**"
            + (f"; {r['back_minutes']:.0f} min" if r["back_minutes"] is not None else "; –"))


def _long(add: Add, outages: dict[str, Results]) -> None:
    """Two rows per scenario: the pages' fates, then the attempts and redeliveries."""
    names = [d for d in DESIGNS if d in next(iter(outages.values()))]
    paragraph(add, INTRO)
    rows: list[list[str]] = []
    for label, rs in outages.items():
        pages = next(iter(rs.values()))["pages"]
        rows.append([f"{label} ({pages} pages)", *(_pages(rs[d]) for d in names)])
        rows.append(["… attempts of one page, max; redeliveries",
                     *(f"{rs[d]['attempts_max']:,}; {rs[d]['redeliveries']:,}" for d in names)])
    designs_table(add, names, rows)


def _first_answers(add: Add, full: Results) -> None:
    first = {d: r["first_answers"] for d, r in full.items() if "first_answers" in r}
    if not first:
        return
    busiest = next(iter(first.values()))
    paragraph(add, f"First answers of 5xx in the busiest quarter hour of the full trace ({busiest['busiest']:,} events "
              "delivered the first time in it; the replay delivers them one at a time): " + "; ".join(
                  f"{DESIGNS[d]} {f['busiest_5xx']:,} (in any quarter hour at most {f['max_5xx']:,}; in the week "
                  f"{f['all_5xx']:,})" for d, f in first.items()) + ".")


def _burst(add: Add, burst: dict[str, Any]) -> None:
    paragraph(add, f"A burst: {burst['deliveries']} workflow runs of one repository fail at the same moment, each "
              "delivery handled at once in a thread of its own, Telegram taking "
              f"{burst['telegram_seconds'] * 1000:.0f} ms a call: {burst['first_500']} answered 500 the first time; "
              f"the chat got {burst['messages_sent']} message(s), the alarm showing {burst['entries_shown']} entries.")


def section(add: Add, outages: dict[str, Results], burst: dict[str, Any] | None, full: Results) -> None:
    """The long outages (by scenario, then design) and the burst; either may be empty or None."""
    if not (outages or burst):
        return
    heading(add, "After long outages, and in a burst")
    if outages:
        _long(add, outages)
    _first_answers(add, full)
    if burst:
        _burst(add, burst)
