"""docs/benchmarks.md's section "The stack's AWS cost per week": the weekly bill (`pager_bench.bill`) of
pager with fast recovery, a line per service and item on each trace, its sums by the week and the month,
what is billed besides, Lambda per function, and what the model assumes. `bills_of` makes the bills the
report's other sections read too; `report.report` calls `section` once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import bill, prices
from .markdown import TRACES, Add, Bills, Results, count, heading, money, paragraph, table
from .simulate import PAGER_DESIGNS

INTRO = ("What the stack would be billed for the week, at the list prices of `sim/pager_bench/prices.py` (US East, "
         "x86, the free tier left out), from the requests counted in the replay of pager with fast recovery: Lambda "
         "invocations of both functions and their billed duration (modelled: the CPU time the handler took here, "
         "scaled to the share of a vCPU each function's memory gets ({memory}), plus a round trip "
         "per call to GitHub, Telegram, the table and the secrets' parameter, rounded up to the millisecond; cold starts "
         "from a model of Lambda's execution environments, each priced with the cold start measured below), API Gateway "
         "requests, DynamoDB request units by item size, reads of the secrets (a new environment, then every five "
         "minutes), the bytes of every log line and EMF blob, the custom metrics' hours, and what template.yaml bills "
         "by the month as a deployment with its parameters' defaults has it (the alarms' metrics; no dashboard unless "
         "asked for). Each line: its list price; where a free tier applies, what it would cover.")

# The table's last rows: the label, the sum of the lines, a week's multiple, in bold, the last column.
SUMS: list[tuple[str, Callable[[list[bill.Line]], float], float, bool, str]] = [
    ("**total, list prices**", bill.total, 1.0, True, ""),
    ("total less what the always-free allowances would cover", bill.total_after_always_free, 1.0, False,
     "if nothing else in the account uses them"),
    ("**a month, list prices** (a week × 730 / 168)", bill.total, prices.WEEKS_PER_MONTH, True, ""),
    ("a month less what the always-free allowances would cover", bill.total_after_always_free, prices.WEEKS_PER_MONTH,
     False, ""),
]


def bills_of(results: dict[str, Results], imports: dict[str, Any] | None) -> Bills:
    """The weekly bill of each replay of pager's own code (its sweep, its schedules)."""
    template = bill.template_resources()
    return {name: {d: bill.weekly(r["aws"], imports=imports, template=template) for d, r in rs.items() if d in PAGER_DESIGNS}
            for name, rs in results.items()}


def _usage(line: bill.Line) -> str:
    if line.usage >= 100:
        return f"{line.usage:,.0f} {line.unit}"
    return f"{line.usage:,.3g} {line.unit}"


def _free_note(line: bill.Line) -> str:
    if line.free is None:
        return "–"
    allowance, unit, forever = prices.FREE_TIER[line.free]
    if line.free == "secrets":
        return "a free trial: a new secret's first 30 days"
    who = "always free" if forever else "an account opened before 15 July 2025, its first 12 months"
    verdict = "would cover it" if line.covered else "would cover part of it"
    return f"{who}: {allowance:,} {unit} a month {verdict}"


def _lines(add: Add, bills: Bills, names: list[str]) -> None:
    """A row per line of the full trace's bill, a column of dollars per trace; then the sums."""
    rows = [[line.service, line.item, _usage(line), *(money(bills[n]["pager"][k].dollars) for n in names), _free_note(line)]
            for k, line in enumerate(bills["full"]["pager"])]
    for label, total, weeks, bold, last in SUMS:
        cells = [money(total(bills[n]["pager"]) * weeks) for n in names]
        rows.append([label, "", "", *(f"**{cell}**" if bold else cell for cell in cells), last])
    columns = ["service", "what", "a week of the full trace", *(f"$ per week, {TRACES[n]}" for n in names), "free tier"]
    table(add, columns, "llr" + "r" * len(names) + "l", rows)


def _besides(add: Add, bills: Bills, names: list[str]) -> None:
    """What a deployment would pay besides (a dashboard, Secrets Manager), and the bill without fast recovery."""
    paragraph(add, f"With the dashboard (the parameter WithDashboard=true): {money(prices.DASHBOARD_MONTH)} a month more, "
              f"unless the account has fewer than {prices.FREE_TIER['dashboards'][0]} dashboards (always free). The "
              "secrets: a Parameter Store SecureString (no charge; each read a KMS request) rather than a Secrets Manager "
              f"secret, which would add {money(prices.SECRET_MONTH)} a month and {money(prices.SECRETS_API_CALL * 1e4)} "
              "per 10,000 reads.")
    if "pager-15" in bills["full"]:
        paragraph(add, "Without fast recovery (the 15-minute runs only, no every-minute schedule), at list prices: " + "; ".join(
            f"{TRACES[n]} {money(bill.total(bills[n]['pager-15']))} per week (the recovery check adds "
            f"{money(bill.total(bills[n]['pager']) - bill.total(bills[n]['pager-15']))})"
            for n in names if "pager-15" in bills[n]) + ".")


def _function(function: str, f: dict[str, Any], weeks: float, imports: dict[str, Any] | None) -> str:
    """One function's Lambda figures, per week and per invocation."""
    n = max(1, f["invocations"])
    cold = bill.cold_start_seconds(imports, function)
    return (f"{function}: {f['invocations'] / weeks:,.0f} invocations a week, billed {f['billed_ms'] / n:.1f} ms on "
            f"average (CPU {1000 * f['cpu_seconds'] / n:.2f} ms, waiting on calls {1000 * f['wait_seconds'] / n:.2f} ms), "
            f"{count(round(f['cold_starts'] / weeks), 'cold start')} a week"
            + (f" ({cold * 1000:.0f} ms each)" if cold is not None else " (not priced: no cold start measured)")
            + f", {f['secret_reads'] / weeks:,.0f} reads of the secrets a week")


def _lambda_detail(add: Add, result: dict[str, Any], imports: dict[str, Any] | None) -> None:
    weeks = result["aws"]["span_seconds"] / (7 * 86_400)
    parts = [_function(function, result["aws"]["lambda"][function], weeks, imports) for function in bill.FUNCTIONS]
    paragraph(add, "Lambda, per function (pager, fast recovery, the full trace): " + "; ".join(parts) + ".")


def _assumed(add: Add) -> None:
    paragraph(add, "Assumed, not measured: round trips of " + ", ".join(
        f"{name} {seconds * 1000:.0f} ms" for name, seconds in bill.ROUND_TRIP.items())
        + f"; an idle execution environment reclaimed after {bill.ENVIRONMENT_IDLE_SECONDS / 60:.0f} minutes (AWS does "
        "not say); a redelivery burst arrives at one instant in the replay, so the cold starts it causes are an upper "
        "bound. Logs: the application's lines only (the functions' system log level is WARN, so Lambda's own START "
        "and REPORT lines are not sent).")
    paragraph(add, "Prices: " + "; ".join(f"{service} ({page}): {text}" for service, page, text in prices.SOURCES) + ".")


def section(add: Add, results: dict[str, Results], bills: Bills, imports: dict[str, Any] | None) -> None:
    """Pager's bill on each trace (`bills_of`); nothing without its bill on the full trace."""
    if "pager" not in bills.get("full", {}):
        return
    names = [name for name in ("full", "subscribed") if "pager" in bills.get(name, {})]
    memory = ", ".join(f"{f} {mb} MB" for f, mb in bill.template_resources()["memory_mb"].items())
    heading(add, "The stack's AWS cost per week")
    paragraph(add, INTRO.format(memory=memory))
    _lines(add, bills, names)
    _besides(add, bills, names)
    _lambda_detail(add, results["full"]["pager"], imports)
    _assumed(add)
