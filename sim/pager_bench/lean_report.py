"""docs/benchmarks.md's section "A lean hot path": what a delivery costs the webhook function besides its
own work, now (`costs.handler_cost`, `costs.ignored_delivery_modules`) and as it was before
(`costs.BEFORE`): its table round trips, and the modules an ignored delivery loads, both ways
(`costs.WAYS`: as deployed, and with the secrets in the environment). `report.report` calls `section`
once; it writes nothing without either measure."""

from __future__ import annotations

from typing import Any

from .costs import BEFORE, HEAVY, WAYS
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
    if modules:  # the figure of before was measured with the secrets in the environment
        local, deployed = modules["local"], modules["deployed"]
        rows += [[f"modules loaded to answer an ignored delivery ({modules['event']}) in a fresh interpreter, "
                  f"{WAYS['local']}", f"{was['modules']} (at {was['commit']})", f"{local['modules']}"],
                 [f"… of {', '.join(HEAVY)}", _which(was["heavy"]), _which(local["loaded"], local["botocore"])],
                 [f"the same, {WAYS['deployed']}", "–", f"{deployed['modules']}"],
                 [f"… of {', '.join(HEAVY)}", "–", _which(deployed["loaded"], deployed["botocore"])]]
    return rows


def _round_trips(add: Add, cost: dict[str, Any]) -> None:
    trips = BEFORE["round_trips"]
    loads, writes = trips["contribution"]
    co = cost["contribution"]
    paragraph(add, "Round trips: the table's reads plus writes per delivery (each one a DynamoDB request: a read of "
              "several records together is one, and so is a write of several, a transaction), medians of the handler's "
              f"cost below. A contribution now makes {count(co['round_trips_loads'], 'read')} and "
              f"{count(co['round_trips_writes'], 'write')} ({count(co['writes'], 'record')} written); before "
              f"{trips['commit']} it made {count(loads, 'load')} and {count(writes, 'write')} (measured the same way on "
              "the tree of its parent commit).")


def _added(modules: dict[str, Any], most: int = 6) -> str:
    """How many more modules an ignored delivery loads as deployed, and of which packages the most."""
    extra = modules["deployed"]["added"]
    named = ", ".join(f"{package} {n}" for package, n in list(extra.items())[:most])
    return f"{sum(extra.values())} more modules ({named}{', ...' if len(extra) > most else ''})"


def _modules(add: Add, modules: dict[str, Any]) -> None:
    paragraph(add, f"Modules: a fresh `{modules['python']}` (`-I`), with the repository's `layers/pager` and `sim` first "
              "on its path, imports `functions/webhook/app.py` as Lambda does and invokes its `lambda_handler` once with "
              f"a signed API Gateway event of {modules['event']}, which pager ignores (answered "
              f"{' and '.join(sorted({modules[way]['outcome'] for way in WAYS}))}); then counts `sys.modules`, the "
              f"interpreter's own included. Two ways, the environments otherwise the same: {WAYS['deployed']}, "
              "`PAGER_SECRET_ID` naming the secrets' SecureString as the template sets it, so that the first request of "
              "an environment reads it (here from moto's Parameter Store on loopback) through Powertools and boto3; and "
              f"{WAYS['local']}, the four secrets set there, so that the secrets' store is never asked. As deployed it "
              f"loads {_added(modules)}: the secrets' read. The figure of before is the second way, run on the tree of "
              f"{BEFORE['modules']['commit']} (Python 3.11.7, this repository's virtualenv). Of the heavy packages, with "
              "the secrets in the environment only botocore's top-level package is expected: Powertools imports it for "
              "its user agent (none of its submodules, nor boto3, requests, urllib3, jwt or cryptography, which the "
              "services import when they are first built); as deployed boto3 and botocore with urllib3 come too, to read "
              "the secrets, and never requests, jwt or cryptography.")


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
