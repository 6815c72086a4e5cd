"""docs/benchmarks.md's section "A lean hot path": what a delivery costs the webhook function besides its
own work, now (`costs.handler_cost`, `costs.ignored_delivery_modules`) and as it was before
(`costs.BEFORE`): its table round trips, and the modules an ignored delivery loads. `report.report` calls
`section` once; it writes nothing without either measure."""

from __future__ import annotations

from typing import Any

from .costs import BEFORE, HEAVY
from .markdown import Add, count, heading, number, paragraph, table

# The deliveries whose round trips are compared: the key of `costs.handler_cost`'s figures, the row's label.
TRIPS = (("contribution", "table round trips of a contribution (issues.opened by an outsider: a message, then a draft "
                          "dispatch)"),
         ("ignored", "table round trips of an ignored delivery"))


def _which(loaded: list[str], botocore: list[str] | None = None) -> str:
    """Which of the heavy packages (`costs.HEAVY`) are loaded."""
    names = [name for name in HEAVY if name in loaded]
    if not names:
        return "none"
    if len(names) == len(HEAVY):
        return "all six"
    text = ", ".join(names)
    if names == ["botocore"] and botocore == ["botocore"]:
        return "botocore only (its top-level package)"
    return text


def _rows(cost: dict[str, Any] | None, modules: dict[str, Any] | None) -> list[list[str]]:
    trips, was = BEFORE["round_trips"], BEFORE["modules"]
    rows = [[label, f"{sum(trips[name])} (before {trips['commit']})", number(cost[name]["round_trips"])]
            for name, label in TRIPS] if cost else []
    if modules:
        rows += [[f"modules loaded to answer an ignored delivery ({modules['event']}) in a fresh interpreter",
                  f"{was['modules']} (at {was['commit']})", f"{modules['modules']}"],
                 [f"… of {', '.join(HEAVY)}", _which(was["heavy"]), _which(modules["loaded"], modules["botocore"])]]
    return rows


def _round_trips(add: Add, cost: dict[str, Any]) -> None:
    trips = BEFORE["round_trips"]
    loads, writes = trips["contribution"]
    co = cost["contribution"]
    paragraph(add, "Round trips: the table's loads plus writes per delivery (each one a DynamoDB request), medians of "
              f"the handler's cost below. A contribution now makes {count(co['round_trips_loads'], 'load')} and "
              f"{count(co['writes'], 'write')}; before {trips['commit']} it made {count(loads, 'load')} and "
              f"{count(writes, 'write')} (measured the same way on the tree of its parent commit).")


def _modules(add: Add, modules: dict[str, Any]) -> None:
    paragraph(add, f"Modules: a fresh `{modules['python']}` (`-I`), with the repository's `layers/pager` and `sim` first "
              "on its path and the settings in its environment (no secret id: the secrets' store is never asked), "
              "imports `functions/webhook/app.py` as Lambda does and invokes its `lambda_handler` once with a signed API "
              f"Gateway event of {modules['event']}, which pager ignores (answered {modules['outcome']}); then counts "
              "`sys.modules`, the interpreter's own included. The figure of before is the same measure run on the tree "
              f"of {BEFORE['modules']['commit']} (Python 3.11.7, this repository's virtualenv). Of the heavy packages "
              "only botocore's top-level package is expected now: Powertools imports it for its user agent (none of its "
              "submodules, nor boto3, requests, urllib3, jwt or cryptography, which the services import when they are "
              "first built).")


def section(add: Add, cost: dict[str, Any] | None, modules: dict[str, Any] | None) -> None:
    """The round trips (from `cost`) and the modules (`modules`); either may be None: its rows are left out."""
    if not (cost or modules):
        return
    heading(add, "A lean hot path")
    paragraph(add, "What a delivery costs the webhook function besides its own work, measured now and as it was before.")
    table(add, ["", "before", "now"], "lrr", _rows(cost, modules))
    if cost:
        _round_trips(add, cost)
    if modules:
        _modules(add, modules)
