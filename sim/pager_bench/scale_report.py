"""The section "At a busy fleet's size" of docs/benchmarks.md: the scale table (`pager_bench.scale`), the
outages the sweep must hold through (`pager_bench.held`), and their targets."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pager_world.limits import CONTENT_AN_HOUR

from .scale import (
    CALL_SECONDS,
    DAY_OUTAGE,
    FIX_LIMIT,
    FUNCTION_TIMEOUT,
    HOUR,
    ITEM_LIMIT,
    WRITES_CONSTANT,
    WRITES_PER_EVENTS,
    writes_allowed,
)

Add = Callable[[str], None]
Table = dict[str, dict[int, dict[str, Any]]]  # scenario's label -> deliveries a day -> one replay's figures
KINDS = {"outage": "pager's endpoint fails (502 to every attempt, and to the sweep's ping)",
         "rate": "a steady failure rate (500 to a share of attempts; the ping passes)",
         "burst": "the fleet's busiest quarter hour, its shape scaled to the size, through API Gateway's throttle"}
TARGET_SIZE, TARGET_OUTAGE = 100_000, 1800.0  # the target: a 30-minute outage at 100,000 a day
LARGEST_AT = 1_000_000  # the target: every item under DynamoDB's limit at this size


def _minutes(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f} min"


def _row(label: str, r: dict[str, Any]) -> str:
    c = r["counts"]
    within = "" if r["all_within"] else f" (not all within {r['fix_limit'] / HOUR:.0f} h)"
    cells = [label, f"{r['per_day']:,}", f"{c['failed']:,} (of {c['failed'] + c['ignored']:,})", f"{c['passed']:,}",
             f"{c['named']:,}" + (f" + {c['said']:,} said" if c["said"] else ""), f"{c['waiting']:,}", f"**{c['neither']:,}**",
             _minutes(r["last_pass_minutes"]) + within, f"{r['calls_max']} / {r['budget']}",
             f"{r['seconds_max']:.0f} s / {r['deadline']:.0f} s", f"{r['redeliveries_per_minute_max']:,}",
             f"{r['writes']:,}", f"{r['largest_bytes'] / 1024:.1f} KB"]
    return "| " + " | ".join(cells) + " |"


def _kind_table(add: Add, kind: str, table: Table) -> None:
    rows = [(label, r) for label, by_size in table.items() for r in by_size.values() if r["kind"] == kind]
    if not rows:
        return
    add(f"**{KINDS[kind]}**")
    add("")
    add("| scenario | per day | failed, pager acts on (of all) | passed | named | still waiting at the end | neither | to "
        "the last pass | calls per run, max / budget | modelled run time, max / deadline | redeliveries a minute, max | "
        "writes | largest sweep item |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, r in rows:
        add(_row(label, r))
    add("")


def _breaks(add: Add, table: Table) -> None:
    broken = [(label, r) for label, by_size in table.items() for r in by_size.values() if r["breaks"]]
    if not broken:
        add("Where it breaks: nowhere in these scenarios.")
        add("")
        return
    add("Where it breaks:")
    add("")
    for label, r in broken:
        add(f"- {label}, {r['per_day']:,} a day: " + "; ".join(r["breaks"]) + ".")
    add("")


def _held(add: Add, held: dict[str, Any]) -> None:
    add("**Outages the sweep must hold through** (`pager_bench.held`: the real handler and the real sweep). GitHub's "
        "whole REST API answers 502 (the deliveries list and the redeliveries too) while webhooks still arrive and an "
        "outsider comments, each comment a page and a `pager-draft` dispatch; the replay goes on 4 hours after GitHub "
        "returns:")
    add("")
    add("| GitHub down | comments | still kept by GitHub at its return | drafts dispatched | shown as pages | named | "
        "counted as no longer kept | lost silently |")
    add("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, g in held.get("github", {}).items():
        add(f"| {label} | {g['comments']} | {g['kept']} | {g['drafts']} | {g['as_page']} | {g['named']} | "
            f"{g['said_forgotten']} | **{g['lost']}** |")
    add("")
    e = held.get("endpoint")
    if e:
        add(f"pager's own endpoint answers 502 to every delivery for {e['hours']:g} hours in a quiet fleet whose list "
            f"holds only pages (a comment every 6 minutes), then works again: {e['after_minutes']:.0f} minutes after the "
            f"fix, {e['as_page']} of {e['pages']} reached the chat as pages, {e['exhausted']} were named as \"all attempts "
            f"failed\" ({e['named']} named at all); GitHub made {e['attempts']} attempts of them, at most "
            f"{e['attempts_max']} of one.")
        add("")
    broken = held.get("broken") or {}
    if broken:
        add("A deployment broken from its first delivery (no delivery ever passed), a page every 30 minutes, pager's "
            "endpoint down for hours, then fixed: " + "; ".join(
                f"down {hours:g} h, {b['after_minutes']:.0f} minutes after the fix {b['as_page']} of {b['pages']} pages "
                f"back as themselves, {b['named']} named, at most {b['attempts_max']} attempts of one"
                for hours, b in broken.items()) + ".")
        add("")


def _mark(met: bool | None) -> str:
    return "met" if met else ("–" if met is None else "**not met**")


def _target_rows(table: Table, held: dict[str, Any] | None) -> list[tuple[str, str, bool | None]]:
    rows = [r for by_size in table.values() for r in by_size.values()]
    neither = sum(r["counts"]["neither"] for r in rows)
    out: list[tuple[str, str, bool | None]] = [
        ("0 events neither passed nor named, in every scenario at every size",
         f"{neither:,} in all" + (f", at most {max(r['counts']['neither'] for r in rows):,} in one replay" if neither else ""),
         neither == 0 if rows else None)]
    out.append(_fix_target(table))
    out += _day_targets(table)
    out.append(_writes_target(table))
    out.append(_attempts_target(table))
    out.append(_item_target(table))
    return out + _held_targets(held or {})


def _fix_target(table: Table) -> tuple[str, str, bool | None]:
    r = next((by_size[TARGET_SIZE] for by_size in table.values() if TARGET_SIZE in by_size
              and by_size[TARGET_SIZE]["kind"] == "outage" and _trouble(by_size[TARGET_SIZE]) == TARGET_OUTAGE), None)
    target = f"after a 30-minute outage at {TARGET_SIZE:,} a day, every event passed within {FIX_LIMIT / HOUR:.0f} h of the fix"
    if r is None:
        return target, "not replayed", None
    return target, f"{r['passed_in_it']:,} of {r['failed_in_it']:,}, the last {_minutes(r['last_pass_minutes'])} after", r["all_within"]


def _trouble(r: dict[str, Any]) -> float:
    return float(r.get("trouble_seconds", 0.0))


def _day_targets(table: Table) -> list[tuple[str, str, bool | None]]:
    """After pager's own 24-hour outage: at 10,000 a day every event back within 6 h of the fix; at 100,000 within
    GitHub's three days (the outage's first events are forgotten 48 h after the fix)."""
    out: list[tuple[str, str, bool | None]] = []
    for n, within in ((10_000, "6 h of the fix"), (100_000, "GitHub's three days (48 h after the fix for its first events)")):
        r = table.get(DAY_OUTAGE, {}).get(n)
        target = f"after pager's own 24-hour outage at {n:,} a day, every event GitHub still keeps passed within {within}"
        if r is None:
            out.append((target, "not replayed", None))
            continue
        c = r["counts"]
        out.append((target, f"{r['passed_in_it']:,} of {r['failed_in_it']:,}, the last {_minutes(r['last_pass_minutes'])} "
                    f"after; {c['named']:,} named, {c['waiting']:,} still waiting", r["all_within"]))
    return out


def _writes_target(table: Table) -> tuple[str, str, bool | None]:
    outages = [(label, r) for label, by_size in table.items() for r in by_size.values() if r["kind"] == "outage"]
    over = [(label, r) for label, r in outages if r["writes"] > writes_allowed(r)]
    measured = ", ".join(f"{r['writes']:,} of {writes_allowed(r):,}" for _, r in outages)
    target = (f"writes per outage beyond the runs' own (a scheduled run's commit, the lease) at most {WRITES_CONSTANT} and "
              f"one per {WRITES_PER_EVENTS} events it held")
    return target, (measured + (f"; over at {len(over)}" if over else "")) or "not replayed", not over if outages else None


def _attempts_target(table: Table) -> tuple[str, str, bool | None]:
    rows = [r for by_size in table.values() for r in by_size.values()]
    most = max((r["attempts_max"] for r in rows), default=0)
    limit = max((r["max_attempts"] for r in rows), default=0)
    return (f"no event attempted more than SWEEP_MAX_ATTEMPTS ({limit}) times, anywhere", f"at most {most}",
            most <= limit if rows else None)


def _item_target(table: Table) -> tuple[str, str, bool | None]:
    rows = [r for by_size in table.values() for n, r in by_size.items() if n == LARGEST_AT]
    r = max(rows, key=lambda r: r["largest_bytes"], default=None)
    target = f"every item under DynamoDB's {ITEM_LIMIT // 1024} KB at {LARGEST_AT:,} a day"
    if r is None:
        return target, "not replayed", None
    return target, f"the largest `{r['largest_key']}`, {r['largest_bytes'] / 1024:.1f} KB", r["largest_bytes"] < ITEM_LIMIT


def _content(add: Add, table: Table) -> None:
    """What GitHub's content-generating limit would allow, if a redelivery counts as one (its docs do not say)."""
    counted = [(label, r) for label, by_size in table.items() for r in by_size.values() if r.get("content")]
    parts = [f"{label}, {r['per_day']:,} a day: {r['passed_in_it']:,} of {r['failed_in_it']:,} back, the last "
             f"{_minutes(r['last_pass_minutes'])} after the fix; GitHub refused {r['limited']:,} asks (403 with "
             f"retry-after), each held until then and probed after it by a passed delivery asked again ({r['probes']:,})"
             for label, r in counted]
    day = table.get(DAY_OUTAGE, {}).get(100_000)
    if day:
        hours = day["failed_in_it"] / CONTENT_AN_HOUR
        parts.append(f"at 100,000 a day, the {day['failed_in_it']:,} events of the 24-hour outage would take "
                     f"{hours:.0f} h at {CONTENT_AN_HOUR} an hour, "
                     + ("within" if hours <= 48 else "beyond") + " the 48 h GitHub keeps the first of them after the fix")
    if parts:
        add("If GitHub counts a redelivery as a content-generating request (80 a minute, 500 an hour; its docs do not "
            "say), pager is held by its answer and asks again after its retry-after: " + "; ".join(parts) + ".")
        add("")


def _held_targets(held: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    out: list[tuple[str, str, bool | None]] = []
    for label, g in held.get("github", {}).items():
        met = g["drafts"] == g["kept"] and g["said_forgotten"] >= g["comments"] - g["kept"]
        out.append((f"GitHub down {label}: a draft for every comment GitHub still keeps, the rest counted in the chat",
                    f"{g['drafts']} of {g['comments']} drafts ({g['kept']} kept), {g['said_forgotten']} counted", met))
    e = held.get("endpoint")
    if e:
        out.append((f"pager's endpoint down {e['hours']:g} h: every page back {e['after_minutes']:.0f} min after the fix, "
                    "none named (the sweep's ping finds the outage: no attempt is spent on it)",
                    f"{e['as_page']} of {e['pages']} back, {e['named']} named", e["as_page"] == e["pages"] and e["named"] == 0))
    broken = held.get("broken") or {}
    if broken:
        rows = list(broken.values())
        out.append(("a deployment broken from its first delivery, down 3, 6 or 12 h: every page back as itself within 30 "
                    "minutes of the fix, none named, no event above 3 attempts",
                    ", ".join(f"{b['as_page']} of {b['pages']}" for b in rows) + f" back; {sum(b['named'] for b in rows)} "
                    f"named; at most {max(b['attempts_max'] for b in rows)} attempts",
                    all(b["as_page"] == b["pages"] and b["named"] == 0 and b["attempts_max"] <= 3 for b in rows)))
    return out


def section(add: Add, scale: dict[str, Any]) -> None:
    """The section, from {"table": `scale.table_of`'s result, "held": `held.held_of`'s (either may be absent)}."""
    table: Table = scale.get("table") or {}
    held = scale.get("held")
    add("## At a busy fleet's size")
    add("")
    add("The real sweep (`run_sweep` every 15 minutes with its event's id, the recovery check every minute) against a "
        "model of pager's endpoint, at N deliveries a day (`pager_bench.scale`: a Poisson stream over ten repositories, "
        "the mix of the fleet's subscribed events; GitHub redelivers 2 s after each run and keeps three days). Per "
        "event that failed and that pager acts on (those it ignores are answered 200 whenever pager answers: nothing "
        "is lost with them; the column says of how many failed in all): passed later, named in ⚙️ pager's "
        "message at some look, and **neither**. To the last pass: from the trouble's end to the last "
        "passing attempt of the events that failed in it. A run's time is modelled: each call to GitHub "
        f"{CALL_SECONDS['github']} s, to Telegram {CALL_SECONDS['telegram']} s, each table round trip "
        f"{CALL_SECONDS['table']} s (assumptions; the function times out at {FUNCTION_TIMEOUT:.0f} s). Writes: the "
        "table's writes from the trouble's start to the replay's end, less a run's own (each scheduled run's commit, "
        "the lease every run and every asking check takes). The largest sweep item: the largest item of the sweep's "
        "own (its keys `sweep` and `sweep-followed`, the chunks of the events it follows) written, as DynamoDB counts "
        "it (its limit is 400 KB). pager's own outage is what the sweep's signed ping to the URL GitHub delivers to "
        "finds (502 in an outage). Every request to pager passes API Gateway's throttle (50 a second, a burst of 200: "
        "429 over it, which GitHub lists as a failure), and every request to GitHub its secondary rate limits (900 "
        "points a minute to one endpoint, a POST 5; a dispatch or a merge at most 80 a minute and 500 an hour: 403 "
        "with retry-after). Still waiting at the end: events the sweep follows, GitHub still keeps, and the pace "
        "had not reached when the replay ended (not lost: counted apart from neither).")
    add("")
    for kind in KINDS:
        _kind_table(add, kind, table)
    if table:
        _breaks(add, table)
        _content(add, table)
    if held:
        _held(add, held)
    add("Targets:")
    add("")
    for target, measured, met in _target_rows(table, held):
        add(f"- {target}: {measured}. {_mark(met)}")
    add("")
    _times(add, table, held)


def _times(add: Add, table: Table, held: dict[str, Any] | None) -> None:
    sizes: dict[int, float] = {}
    for by_size in table.values():
        for n, r in by_size.items():
            sizes[n] = sizes.get(n, 0.0) + r["seconds"]
    parts = [f"{n:,} a day: {seconds:.0f} s" for n, seconds in sorted(sizes.items())]
    if held:
        parts += [f"GitHub down ({label}): {g['seconds']:.0f} s" for label, g in held.get("github", {}).items()]
        parts += [f"pager's endpoint down: {held['endpoint']['seconds']:.0f} s"] if held.get("endpoint") else []
        parts += [f"broken from its first delivery, {hours:g} h: {b['seconds']:.0f} s" for hours, b in (held.get("broken") or {}).items()]
    if parts:
        add("Replay times (each size: its scenarios' replays added up): " + "; ".join(parts) + ".")
        add("")
