"""What the sections of docs/benchmarks.md share (`report` and its `*_report` modules): the type of `add`
and of the figures they read, the traces' names, a figure as the report writes it (a wait, a share, a
count, dollars, a median and a 95th percentile), and a markdown table from its rows as data."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import bill
from .simulate import DESIGNS

Add = Callable[[str], None]
Results = dict[str, dict[str, Any]]  # design -> one replay's figures
Bills = dict[str, dict[str, list[bill.Line]]]  # trace -> design -> the weekly bill
Target = tuple[str, str, bool | None]  # the target, what was measured, met (None: nothing to measure)
Figure = Callable[[dict[str, Any]], str]  # one replay's figures -> a table's cell

TRACES = {"full": "the full trace", "subscribed": "the subscribed events only"}

LIKE_FOR_LIKE = ("Like for like: every column replays the same events (the same guids, times and faults, the same "
                 "population), and all but the first run on the same 15-minute schedule; the first adds pager's "
                 "every-minute recovery check, which no other design has (pager's own 15-minute column is the one to "
                 "set beside the others). A figure followed by \"(of N)\" is taken over the N events it applies to, "
                 "which differ by design (those that passed, for a wait).")

# ------------------------------------------------------------------------------------------ figures


def fmt_s(seconds: float | None) -> str:
    """A wait: 45 s, or 2.5 min from two minutes on."""
    if seconds is None:
        return "–"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.1f} min"


def pct(part: int, whole: int) -> str:
    return "–" if not whole else f"{100 * part / whole:.1f}%"


def number(value: float) -> str:
    """A count that may be a median of counts: 4, or 3.5."""
    return f"{value:g}"


def count(value: float, word: str) -> str:
    """A count and its word, in the plural but for one: 1 load, 2 writes."""
    return f"{number(value)} {word}" + ("" if value == 1 else "s")


def spread(s: dict[str, Any]) -> str:
    """Median / 95th percentile (of how many)."""
    if not s["n"]:
        return "– (none passed)"
    return f"{fmt_s(s['median'])} / {fmt_s(s['p95'])} (of {s['n']:,})"


def counted(r: dict[str, Any], key: str) -> str:
    """One of a replay's counts (`measure`'s), 0 when it has none: 1,234."""
    return f"{r['counts'].get(key, 0):,}"


def money(dollars: float) -> str:
    return f"${dollars:.3f}" if dollars < 10 else f"${dollars:,.2f}"


def met(value: bool | None) -> str:
    """A target's last column."""
    return "met" if value else ("–" if value is None else "**not met**")


# ------------------------------------------------------------------------------------------ markdown


def heading(add: Add, title: str) -> None:
    add(f"## {title}")
    add("")


def paragraph(add: Add, text: str) -> None:
    add(text)
    add("")


def row(cells: Iterable[str]) -> str:
    """A table's row, `| a | b |`; an empty cell is `| |`."""
    return "|" + "".join(f" {cell} |" if cell else " |" for cell in cells)


def table(add: Add, columns: Sequence[str], align: str, rows: Iterable[Sequence[str]]) -> None:
    """A table: its head (`align`: a letter per column, "l" left or "r" right), its rows, a blank line."""
    add(row(columns))
    add("|" + "".join("---:|" if a == "r" else "---|" for a in align))
    for cells in rows:
        add(row(cells))
    add("")


def designs_table(add: Add, names: Sequence[str], rows: Iterable[Sequence[str]], corner: str = "") -> None:
    """A table with a column per design (`names`, keys of `DESIGNS`), `corner` above the rows' labels."""
    table(add, [corner, *(DESIGNS[d] for d in names)], "l" + "r" * len(names), rows)
