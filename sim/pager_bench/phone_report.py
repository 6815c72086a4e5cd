"""docs/benchmarks.md's section "What the maintainer's phone lives through": `pager_bench.phone`'s figures of
pager (fast recovery) on one trace, without quiet hours and with them, as tables, the grace's table and the
default it supports, the phone's rest (a table of BUZZ_GAP_MINUTES and the default it supports), and the
attention targets. A piece of its own: `report.report` calls `section` once."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from . import fleet
from .markdown import table
from .phone import FLAKE_SECONDS, KINDS, NIGHT, OTHER

Add = Callable[[str], None]

# Before the attention model every message pager sent buzzed: on the subscribed events of the default week
# (`make bench`: 7 days, seed 1) it sent 347, measured with the code of commit 7937730.
BEFORE_BUZZES, BEFORE_COMMIT = 347, "7937730"
BUZZ_SHARE = 0.40  # the target: at most this share of the buzzes before


def sent_before(p: dict[str, Any]) -> int:
    """The buzzes under the rule before (every message buzzed), on this run: its sends less its reposts, and
    less the summaries and calls, messages that rule never sent."""
    return p["sends"] - p["reposts"] - len(p["summaries"]) - len(p.get("calls", []))


def _minutes(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds / 60:.1f} min"


def _day(day: str, trace: fleet.Trace) -> str:
    d = date.fromisoformat(day)
    label = f"{d:%a} {d.day} {d:%b}"
    start = datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()
    return label + (" (after the last event: the replay's last hours)" if start >= trace.end else "")


def _totals(days: dict[str, dict[str, Counter[str]]]) -> dict[str, Counter[str]]:
    total: dict[str, Counter[str]] = {}
    for kinds in days.values():
        for kind, counts in kinds.items():
            total.setdefault(kind, Counter()).update(counts)
    return total


def _cell(counts: Counter[str] | None) -> str:
    if not counts or not any(counts.values()):
        return "–"
    return f"{counts['sends']} / {counts['buzzes']} / {counts['edits']}"


def _kinds_row(label: str, kinds: dict[str, Counter[str]]) -> str:
    every = sum(kinds.values(), Counter())
    names = [kind for kind, _, _ in KINDS] + ([OTHER] if OTHER in kinds else [])
    return (f"| {label} | " + " | ".join(_cell(kinds.get(kind)) for kind in names)
            + f" | {_cell(every)} | {every['deletes']} |")


def _by_kind(add: Add, trace: fleet.Trace, p: dict[str, Any], quiet: dict[str, Any] | None) -> None:
    labels = [label for _, _, label in KINDS] + (["other"] if any(OTHER in k for k in p["days"].values()) else [])
    add("Sends / buzzes / edits per day of the maintainer's clock, by kind of message; then the messages deleted "
        "(the old message of a repost).")
    add("")
    add("| day | " + " | ".join(labels) + " | all | deleted |")
    add("|---|" + "---:|" * (len(labels) + 2))
    for day, kinds in p["days"].items():
        add(_kinds_row(_day(day, trace), kinds))
    add(_kinds_row("**the week**", _totals(p["days"])))
    if quiet:
        add(_kinds_row(f"**the week, QUIET_HOURS={quiet['quiet_hours']}**", _totals(quiet["days"])))
    add("")


def _buzzes(days: dict[str, dict[str, Counter[str]]], day: str) -> int:
    return sum(c["buzzes"] for c in days.get(day, {}).values())


def _nights(add: Add, trace: fleet.Trace, p: dict[str, Any], quiet: dict[str, Any]) -> None:
    summaries = Counter(datetime.fromtimestamp(at, UTC).date().isoformat() for at in quiet["summaries"])
    add(f"Buzzes per day without quiet hours and with QUIET_HOURS={quiet['quiet_hours']} (the same trace replayed "
        f"again with that setting), and of them at night ({NIGHT.replace('-', '–')} on the maintainer's clock). "
        "With quiet hours, what would have buzzed inside them is kept for one summary that buzzes at their end; "
        "the summaries count as buzzes, at their time.")
    add("")
    add("| day | buzzes, no quiet hours | … at night | buzzes, with quiet hours | … at night | of them summaries |")
    add("|---|---:|---:|---:|---:|---:|")
    for day in sorted(set(p["days"]) | set(quiet["days"])):
        add(f"| {_day(day, trace)} | {_buzzes(p['days'], day)} | {p['night_by_day'].get(day, 0)} | "
            f"{_buzzes(quiet['days'], day)} | {quiet['night_by_day'].get(day, 0)} | {summaries.get(day, 0)} |")
    add(f"| **the week** | **{p['buzzes']}** | **{p['night']}** | **{quiet['buzzes']}** | **{quiet['night']}** | "
        f"{len(quiet['summaries'])} |")
    add("")
    times = sorted({f"{datetime.fromtimestamp(at, UTC):%H:%M:%S}" for at in quiet["summaries"]})
    if times:
        add(f"The summaries were sent at {', '.join(times)} (the first every-minute check after the quiet hours end).")
        add("")


def supported_grace(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The default the grace table supports: the shortest grace that keeps at least half the week's flake
    buzzes quiet (the flakes' median clearing time, on the table's steps)."""
    loudest = rows[0]["flakes"] if rows else 0
    return next((row for row in rows if 2 * row["flakes"] <= loudest), None) if loudest else None


def _episodes(add: Add, p: dict[str, Any]) -> None:
    e, grace = p["episodes"], p["grace_minutes"]
    add(f"Alarms (repository alarm messages; ALARM_GRACE_MINUTES={grace:g}): a repository went red {e['n']} times in "
        f"the week; {e['quiet_within_grace']} cleared within the grace without ever buzzing, {e['buzzed']} buzzed"
        + (f", {e['kept']} were kept for the call at the end of the phone's rest (or quiet hours' summary)"
           if e.get("kept") else "")
        + (f", {e['quiet_longer']} were red longer but never buzzed (each failure closed within its own grace, "
           "or Telegram was down)" if e["quiet_longer"] else "") + ".")
    add("")


def _grace_row(row: dict[str, Any], grace: float) -> str:
    mark = "**" if row["minutes"] == round(grace) else ""
    unheard = f" ({row['unheard']} never buzzed)" if row["unheard"] else ""
    return (f"| {mark}{row['minutes']}{mark} | {row['buzzes']} | {row['flakes']} | {_minutes(row['delay_median'])} of "
            f"{row['stayed_red']}{unheard} |")


def _grace_table(add: Add, p: dict[str, Any]) -> None:
    f, m, grace = p["flakes"], p["model"], p["grace_minutes"]
    add(f"The grace's table: each value of ALARM_GRACE_MINUTES on the same week. Flakes: failures that closed "
        f"within {FLAKE_SECONDS / 60:.0f} minutes of failing, as a rerun that passes closes them ({f['n']} of the "
        f"week's failures, closed {_minutes(f['min'])} to {_minutes(f['max'])} after failing, median "
        f"{_minutes(f['median'])}); a buzz is a flake's when every failure it buzzed for was one. The delay runs from "
        "a failure that stayed red longer than that to the buzz for it.")
    add("")
    add("| ALARM_GRACE_MINUTES | alarm buzzes in the week | … of them flakes' | failures red past 30 min: median delay to their buzz |")
    add("|---:|---:|---:|---:|")
    for row in p["grace"]:
        add(_grace_row(row, grace))
    add("")
    add("Computed from the one replay without quiet hours and without the phone's rest (BUZZ_GAP_MINUTES=0) (`pager_bench.phone.grace_buzzes`): the table's history "
        "of each alarm (every failure's opening and closing, the renders the deliveries made, in the order the "
        "table saw them) is run through decide_render's rule with each grace, with the every-minute check's renders "
        "where that grace makes an alarm due, and a render that would change the message while Telegram is down "
        f"changing nothing. At the replay's own {grace:g} minutes it gives {m['buzzes']} alarm buzzes, the chat "
        f"had {m['phone']}: " + ("the same, at the same times." if m["same_times"] and m["buzzes"] == m["phone"]
                                 else "**not the same**: the other rows are an estimate."))
    add("")


def _supported(add: Add, p: dict[str, Any], chosen: dict[str, Any]) -> None:
    """The default the grace's table supports, and whether the grace could decide the week's total."""
    rows, grace = p["grace"], p["grace_minutes"]
    own = next((row for row in rows if row["minutes"] == round(grace)), chosen)
    steps = ", ".join(f"{b['minutes']}→{a['minutes']}: {b['flakes'] - a['flakes']}" for b, a in zip(rows, rows[1:], strict=False))
    longest = rows[-1]
    add(f"**The default these figures support: {chosen['minutes']} minutes**"
        + (" (the default now)." if chosen["minutes"] == round(grace) else f" (the default now is {grace:g}).")
        + f" The grace is there for flakes, and {chosen['minutes']} minutes is the shortest value that keeps at least "
        f"half of their buzzes quiet ({rows[0]['flakes'] - chosen['flakes']} of {rows[0]['flakes']}), while a failure "
        f"that stays red buzzes after a median {_minutes(chosen['delay_median'])}. Each step of the table spares the "
        f"buzzes of the flakes that close within it ({steps}) and makes every one of the {chosen['stayed_red']} "
        f"failures that stayed red wait as much longer: the other {chosen['flakes']} flake buzzes would cost each of "
        f"them {longest['minutes'] - chosen['minutes']} minutes more ({longest['minutes']} minutes: "
        f"{_minutes(longest['delay_median'])}), and a shorter grace gains minutes only by buzzing for more flakes.")
    add("")
    fewest = p["buzzes"] - (own["buzzes"] - longest["buzzes"])
    limit = int(BUZZ_SHARE * sent_before(p))
    if fewest > limit:
        add(f"Without the phone's rest the grace does not decide the week's total: with {longest['minutes']} minutes "
            f"the week would still have {fewest} buzzes, above the {limit} of the target below; the rest does (below).")
        add("")


def _grace(add: Add, p: dict[str, Any], g: dict[str, Any]) -> None:
    """The alarms' episodes in the week (`p`), and the grace's table from the replay without the phone's rest (`g`)."""
    _episodes(add, p)
    _grace_table(add, g)
    chosen = supported_grace(g["grace"])
    if chosen is not None:
        _supported(add, g, chosen)


def _wait(t: dict[str, Any]) -> str:
    waits = t.get("waits") or []
    return f"{_minutes(waits[len(waits) // 2])} / {_minutes(waits[-1])}" if waits else "–"


def _split(t: dict[str, Any]) -> str:
    called = t["kept"] - t.get("resolved", 0) - t.get("pending", 0) - t.get("uncalled", 0)
    return f"{t['buzzed']} / {t['kept']} ({called}; {t.get('resolved', 0)})" + _fates({**t, "resolved": 0})


def supported_gap(gaps: dict[int, dict[str, Any]], limit: int) -> int | None:
    """The default the rest's table supports: the shortest rest whose week meets the buzz target."""
    return next((gap for gap, g in sorted(gaps.items()) if g["buzzes"] <= limit), None)


def _rests(add: Add, p: dict[str, Any], gaps: dict[int, dict[str, Any]]) -> None:
    """The phone's rest: each value of BUZZ_GAP_MINUTES on the same week, and the default it supports."""
    limit = int(BUZZ_SHARE * sent_before(p))
    own = round(p["rest_minutes"])
    add("The phone's rest: each value of BUZZ_GAP_MINUTES on the same week (the trace replayed once per value). "
        "After a call (a contact's, an alarm's or a call's buzz) the phone rests: a first contact or an alarm red "
        "past its grace is shown at once without a sound and kept for one call when the rest ends; a release "
        "ready to merge calls at once. Kept: the moments kept for a call; called: of them, those whose call came "
        "(the rest's summary, sent with a sound). The wait runs from the moment to its call.")
    add("")
    add(f"| BUZZ_GAP_MINUTES | buzzes in the week | … of them calls after a rest | first contacts: buzzed at once / "
        f"kept (called; no longer needed by their call) | alarm failures: the same | a called moment's wait to its "
        f"call: median / longest | "
        f"within the buzz target (at most {limit}) |")
    add("|---:|---:|---:|---:|---:|---:|---|")
    for gap, g in sorted(gaps.items()):
        c, a = g["moments"]["contact"], g["moments"]["alarm"]
        waits = sorted(c.get("waits", []) + a.get("waits", []))
        mark = "**" if gap == own else ""
        add(f"| {mark}{gap}{mark} | {g['buzzes']} | {len(g['calls'])} | {_split(c)} | {_split(a)} | "
            f"{_wait({'waits': waits})} | {'yes' if g['buzzes'] <= limit else 'no'} |")
    add("")
    chosen = supported_gap(gaps, limit)
    if chosen is None:
        add(f"No rest of the table brings the week to at most {limit} buzzes.")
    else:
        g = gaps[chosen]
        add(f"**The default these figures support: {chosen} minutes**"
            + (" (the default now)." if chosen == own else f" (the default now is {own}).")
            + f" It is the shortest rest that keeps the week within the buzz target ({g['buzzes']} buzzes, at most "
            f"{limit}): a person is called at most once {'an hour' if chosen == 60 else f'every {chosen} minutes'} "
            "for contacts and alarms, never less than once for anything that needs them, and a release ready to "
            "merge at once. A shorter rest calls sooner and more often; a longer one makes each kept moment wait "
            "longer for fewer calls.")
    add("")


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _unheard(t: dict[str, int]) -> str:
    """The moments that neither buzzed nor were kept for a summary, by why."""
    why = ((t.get("between_checks", 0), "closed before the every-minute check after its grace looked"),
           (t.get("telegram_down", 0), "closed while Telegram was down"), (t["silent"], "**silent**"))
    return "".join(f", {n} {what}" for n, what in why if n)


def _fates(t: dict[str, Any]) -> str:
    """What became of the kept moments that were not called, when any was not."""
    said = [f"{t['resolved']} no longer needed when their call came" if t.get("resolved") else "",
            f"{t['pending']} with their call after the replay's end" if t.get("pending") else "",
            f"**{t['uncalled']} never called**" if t.get("uncalled") else ""]
    said = [x for x in said if x]
    return f" ({', '.join(said)})" if said else ""


def _moment(t: dict[str, Any], q: dict[str, Any] | None) -> str:
    text = f"{t['buzzed']} of {t['n']} buzzed at once" + (f", {t['kept']} kept for a call{_fates(t)}" if t["kept"] else "")
    text += _unheard(t)
    if q is not None:
        text += (f"; with quiet hours {q['buzzed']} buzzed at once and {q['kept']} kept for a call or the summary"
                 + _fates(q) + _unheard(q))
    return text


def targets(p: dict[str, Any], quiet: dict[str, Any] | None) -> list[tuple[str, str, bool]]:
    """(target, measured, met) of the attention model, without quiet hours and (when replayed) with them. The
    count before is the same run's under the rule before (every message sent buzzed; reposts were not made)."""
    before = sent_before(p)
    limit = int(BUZZ_SHARE * before)
    moments = p["moments"]
    q = quiet["moments"] if quiet else {}
    rows = [
        (f"total buzzes in the week at most {BUZZ_SHARE:.0%} of those before the attention model, when every message "
         f"buzzed: {before} in this run (its sends less its reposts, its summaries and its calls; {BEFORE_BUZZES} "
         f"measured at {BEFORE_COMMIT} on the "
         f"week of `make bench`'s defaults), so at most {limit}",
         f"{p['buzzes']} without quiet hours ({p['buzzes'] / before:.0%})"
         + (f", {quiet['buzzes']} with QUIET_HOURS={quiet['quiet_hours']} ({quiet['buzzes'] / before:.0%})" if quiet else ""),
         p["buzzes"] <= limit and (quiet is None or quiet["buzzes"] <= limit)),
    ]
    rest = f"; while the phone rests ({p['rest_minutes']:g} min after a call), kept for the call at its end"
    for kind, what in (("release", "every release offered 🔀 Merge buzzed at once"),
                       ("alarm", f"every repository alarm's failure still red when its grace ({p['grace_minutes']:g} min) "
                                 f"ended buzzed{rest}"),
                       ("contact", "every outsider's first contact in a thread buzzed (a contribution in a thread that "
                                   f"had not buzzed within the hour){rest}")):
        t, tq = moments[kind], q.get(kind)
        called = t["silent"] == 0 and not t.get("uncalled") and (kind != "release" or t["kept"] == 0)
        rows.append((what + ("; inside quiet hours, kept for the summary" if quiet else ""), _moment(t, tq),
                     called and (tq is None or (tq["silent"] == 0 and not tq.get("uncalled")))))
    if quiet:
        rows.append((f"no buzz inside quiet hours (QUIET_HOURS={quiet['quiet_hours']})",
                     f"{quiet['inside_quiet']} of {quiet['buzzes']} buzzes inside them (without quiet hours "
                     f"{p['night']} of {p['buzzes']} at night); {_n(len(quiet['summaries']), 'summary', 'summaries')} "
                     "at their end", quiet["inside_quiet"] == 0))
    return rows


def _floor(p: dict[str, Any], quiet: dict[str, Any] | None) -> list[str]:
    """What the buzz target is up against: the moments that must buzz, and how the phone's rest calls for them."""
    m = p["moments"]
    health = sum(c["buzzes"] for kinds in p["days"].values() for kind, c in kinds.items() if kind == "health")
    must = sum(t["n"] for t in m.values()) + health
    said = (f"{m['contact']['n']} first contacts, {m['alarm']['n']} alarm failures red past their grace, "
            f"{_n(m['release']['n'], 'release', 'releases')} offered 🔀 Merge"
            + (f", {_n(health, 'time', 'times')} pager's own health" if health else ""))
    at_once = sum(t["buzzed"] for t in m.values()) + health
    kept = sum(t["kept"] for t in m.values())
    waits = sorted(w for t in m.values() for w in t.get("waits", []))
    lines = [f"The moments that must buzz: {said} ({must}). Of them {at_once} buzzed at once and {kept} were kept "
             f"while the phone rested, for {_n(len(p['calls']), 'call', 'calls')} at the end of its rests"
             + (f" (a kept moment's wait to its call: median {_minutes(waits[len(waits) // 2])}, at most "
                f"{_minutes(waits[-1])})" if waits else "")
             + f": {p['buzzes']} buzzes in the week."]
    if quiet:
        lines.append(f"With quiet hours, what came inside the night is kept for the summaries: {quiet['buzzes']} "
                     f"buzzes, {_n(len(quiet['summaries']), 'summary', 'summaries')} and "
                     f"{_n(len(quiet['calls']), 'call', 'calls')} after a rest among them.")
    return lines


def _alarms_more(add: Add, p: dict[str, Any], alarms: Counter[str]) -> None:
    """Why alarms buzz more than under the rule before, when they do."""
    e = p["episodes"]
    before = alarms["sends"] - p["reposts_by_kind"].get("alarm", 0)
    if alarms["buzzes"] > before:
        add(f"Alarms buzz more than before: the rule before buzzed once per alarm message, when a repository went red "
            f"({before}); now each failure still red past its grace buzzes ({alarms['buzzes']}): a repository red "
            f"with several failures one after another buzzes for each, and only the {_n(e['quiet_within_grace'], 'time', 'times')} a "
            f"repository cleared within the grace stay silent. Buzzing once per time a repository went red would "
            f"have made {e['buzzed']}.")
        add("")


def _before_now(add: Add, p: dict[str, Any], quiet: dict[str, Any] | None) -> None:
    """Buzzes by kind under the rule before (a buzz per message; reposts were not made) and now."""
    week = _totals(p["days"])
    q = _totals(quiet["days"]) if quiet else {}
    add("Buzzes by kind: under the rule before (every message buzzed; counted in this run as its sends less its "
        "reposts) and now" + (", without quiet hours and with them." if quiet else "."))
    add("")
    new = ("summary", "rest")  # messages the rule before never sent
    rows = [[label, f"{0 if kind in new else week.get(kind, Counter())['sends'] - p['reposts_by_kind'].get(kind, 0)}",
             f"{week.get(kind, Counter())['buzzes']}", f"{q.get(kind, Counter())['buzzes']}"]
            for kind, _, label in KINDS if week.get(kind) or q.get(kind)]
    rows.append(["**all**", f"**{sent_before(p)}**", f"**{p['buzzes']}**",
                 f"**{quiet['buzzes']}**" if quiet else ""])
    width = 4 if quiet else 3  # the last column only with quiet hours
    table(add, ["kind", "the rule before", "now", "with quiet hours"][:width], "lrrr"[:width], [r[:width] for r in rows])
    _alarms_more(add, p, week.get("alarm", Counter()))


def section(add: Add, trace: fleet.Trace, label: str, p: dict[str, Any], quiet: dict[str, Any] | None,
            gaps: dict[int, dict[str, Any]] | None = None) -> None:
    add(f"## What the maintainer's phone lives through ({label}, pager with fast recovery)")
    add("")
    add("The week's chat as the maintainer's phone gets it, counted in the fake Telegram of the replay above: "
        "each message sent (a send), sent with a sound (a buzz), edited, and deleted (a moment that must buzz on a "
        "message already shown sends it anew with a sound and deletes the old one: a repost). The maintainer's "
        "clock is UTC (TIMEZONE); ALARM_GRACE_MINUTES and BUZZ_GAP_MINUTES are the defaults. A message's kind is "
        "what it starts with; an "
        "answer to a command is a reply to one (the trace has none). Definitions: the docstring of "
        "`sim/pager_bench/phone.py`.")
    add("")
    _by_kind(add, trace, p, quiet)
    deleted = sum(c["deletes"] for c in _totals(p["days"]).values())
    add(f"Reposts in the week: {p['reposts']}" + (
        "." if deleted == p["reposts"] else f"; {p['reposts'] - deleted} of their old messages stayed (sent more than "
        "48 hours before, which a bot may no longer delete)."))
    add("")
    if quiet:
        _nights(add, trace, p, quiet)
    without_rest = p if p.get("grace") else (gaps or {}).get(0)
    if without_rest and without_rest.get("grace"):
        _grace(add, p, without_rest)
    if gaps:
        _rests(add, p, gaps)
    _before_now(add, p, quiet)
    add("Targets of the attention model, measured in the same run:")
    add("")
    add("| target | measured | |")
    add("|---|---|---|")
    for target, measured, met in targets(p, quiet):
        add(f"| {target} | {measured} | {'met' if met else '**not met**'} |")
    add("")
    for line in _floor(p, quiet):
        add(line)
        add("")
