"""docs/benchmarks.md's section "The webhook handler's cost per delivery (warm)": `costs.handler_cost`'s
three measures side by side for an ignored delivery and a contribution, the calls, writes and round
trips, a bare HTTP call, and the handler's answers. `report.report` calls `section` once; it writes
nothing without the measure."""

from __future__ import annotations

from typing import Any

from .markdown import Add, heading, number, paragraph, table

INTRO = ("Three measures side by side in one run, {n:,} deliveries each, in a rotating order, medians after "
         "the first {first}: the floor (HMAC-SHA256 check plus `json.loads` of the same body); "
         "`pager.webhook.handle_github`; and `functions/webhook/app.py:lambda_handler`, through `pager.bootstrap` with "
         "the services handed in as the replay does, so Powertools' resolver, the services' lookup, the answer's "
         "encoding and the metrics flush are in it (the ratio the targets use). The contribution goes through the "
         "fake GitHub and Telegram; its own cost leaves out the time spent inside the fakes (not the `requests` "
         "machinery, which is the handler's). Calls, records written and round trips: `handle_github`'s; a round trip "
         "is a table read or write (each one a DynamoDB request; a read or a write of several records together is "
         "one). Beside them, a fourth measure: one POST through `requests` "
         "and the fakes' transport to an answer made at once, what each HTTP call costs before any of pager's work.")

COLUMNS = ["delivery", "body", "floor", "`handle_github`", "own", "`lambda_handler`", "own", "ratio (own)", "HTTP calls",
           "table records written", "table round trips"]
# The deliveries measured: the key of `costs.handler_cost`'s figures, the row's label.
DELIVERIES = (("ignored", "ignored (check_run, workflow_job)"), ("contribution", "contribution (issues.opened by an outsider)"))


def _row(label: str, c: dict[str, Any]) -> list[str]:
    return [label, f"{c['body_bytes'] / 1000:.1f} kB", f"{c['floor_us']:.0f} µs", f"{c['handler_us']:.0f} µs",
            f"{c['own_us']:.0f} µs", f"{c['app_us']:.0f} µs", f"{c['app_own_us']:.0f} µs",
            f"{c['app_ratio']:.1f}× ({c['app_own_ratio']:.1f}×)", number(c["calls"]), number(c["writes"]), number(c["round_trips"])]


def _answers(c: dict[str, Any]) -> str:
    return ", ".join(f"{k} ×{v}" for k, v in c["outcomes"].items())


def section(add: Add, cost: dict[str, Any] | None) -> None:
    if not cost:
        return
    heading(add, "The webhook handler's cost per delivery (warm)")
    paragraph(add, INTRO.format(n=cost["n"], first=min(50, cost["n"] // 10)))
    table(add, COLUMNS, "l" + "r" * (len(COLUMNS) - 1), (_row(label, cost[name]) for name, label in DELIVERIES))
    paragraph(add, f"A bare call through `requests`: {cost['contribution']['bare_call_us']:.0f} µs (measured beside the "
              f"contribution), {cost['ignored']['bare_call_us']:.0f} µs (beside the ignored event).")
    paragraph(add, "Answers of `handle_github`: " + "; ".join(
        f"{name}: {_answers(cost[name])}" for name in ("ignored", "contribution")) + ".")
