"""docs/benchmarks.md's section "What the maintainer's phone lives through": `pager_bench.phone`'s figures of
pager (fast recovery) on one trace, without quiet hours and with them, as tables, the grace's table and the
default it supports, the urgency table (how soon each kind of moment called, and by which form of call), the
phone's rest (a table of BUZZ_GAP_MINUTES and the default it supports), and the attention targets. A piece of
its own: `report.report` calls `section` once."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from pager.attention import NOW_AGAIN_SECONDS

from . import fleet
from .markdown import fmt_s, table
from .phone import FIRST_LINE, FLAKE_SECONDS, KINDS, NIGHT, OTHER

Add = Callable[[str], None]

# Before the attention model every message pager sent buzzed: on the subscribed events of the default week
# (`make bench`: 7 days, seed 1) it sent 347, measured with the code of commit 7937730.
BEFORE_BUZZES, BEFORE_COMMIT = 347, "7937730"
BUZZ_SHARE = 0.40  # the target: at most this share of the buzzes before
NOW_WITHIN = 60.0  # seconds: a red default branch buzzes within the every-minute check's minute of its grace's end
MOMENTS = (  # (kind of moment, how the report names it, its urgency)
    ("alarm", "🚨 a default branch red past its grace", "now"),
    ("health", "⚙️ pager's own health", "now"),
    ("contact", "💬 an outsider's first contact", "soon"),
    ("release", "🔀 a release ready to merge", "soon"),
)


def sent_before(p: dict[str, Any]) -> int:
    """The buzzes under the rule before (every message buzzed), on this run: its sends less its reposts, and
    less the calls' messages (📬, 🌅, and the things' own messages a call posted anew), which that rule never sent."""
    return p["sends"] - p["reposts"] - len(p["summaries"]) - len(p.get("rest_calls", [])) - p.get("own_calls", 0)


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


def _n(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _by_kind(add: Add, trace: fleet.Trace, p: dict[str, Any], quiet: dict[str, Any] | None) -> None:
    labels = [label for _, _, label in KINDS] + (["other"] if any(OTHER in k for k in p["days"].values()) else [])
    add("Sends / buzzes / edits per day of the maintainer's clock, by kind of message; then the messages deleted "
        "(the old message of a repost, or of a thing's own message a call posted anew). A call that held one thing "
        "is that thing's own message posted anew: it counts under that thing's kind "
        f"({_n(p.get('own_calls', 0), 'such call', 'such calls')} in the week"
        + (f", {quiet.get('own_calls', 0)} with quiet hours" if quiet else "") + ").")
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


def _night_calls(q: dict[str, Any]) -> list[float]:
    """When the calls at the end of quiet hours buzzed (their 🌅 message, or the one thing's own message anew)."""
    return [c["at"] for c in q.get("calls", []) if c["night"] and c["loud"]]


def _nights(add: Add, trace: fleet.Trace, p: dict[str, Any], quiet: dict[str, Any]) -> None:
    calls = _night_calls(quiet)
    by_day = Counter(datetime.fromtimestamp(at, UTC).date().isoformat() for at in calls)
    add(f"Buzzes per day without quiet hours and with QUIET_HOURS={quiet['quiet_hours']} (the same trace replayed "
        f"again with that setting), and of them at night ({NIGHT.replace('-', '–')} on the maintainer's clock). "
        "With quiet hours, what would have buzzed inside them is kept for one call that buzzes at their end (its 🌅 "
        "message, or the one thing it holds posted anew); those calls count as buzzes, at their time.")
    add("")
    add("| day | buzzes, no quiet hours | … at night | buzzes, with quiet hours | … at night | of them calls at "
        "the end of quiet hours |")
    add("|---|---:|---:|---:|---:|---:|")
    for day in sorted(set(p["days"]) | set(quiet["days"])):
        add(f"| {_day(day, trace)} | {_buzzes(p['days'], day)} | {p['night_by_day'].get(day, 0)} | "
            f"{_buzzes(quiet['days'], day)} | {quiet['night_by_day'].get(day, 0)} | {by_day.get(day, 0)} |")
    add(f"| **the week** | **{p['buzzes']}** | **{p['night']}** | **{quiet['buzzes']}** | **{quiet['night']}** | "
        f"{len(calls)} |")
    add("")
    times = sorted({f"{datetime.fromtimestamp(at, UTC):%H:%M:%S}" for at in calls})
    if times:
        add(f"Those calls were sent at {', '.join(times)} (the first every-minute check after the quiet hours end).")
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
        + (f", {e['kept']} were kept for the call at the end of quiet hours" if e.get("kept") else "")
        + (f", {e['quiet_longer']} were red longer but never buzzed (each failure closed within its own grace, "
           "within the hour of its repository's last buzz, or while Telegram was down)" if e["quiet_longer"] else "")
        + ".")
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
    add(f"Computed from the one replay without quiet hours (BUZZ_GAP_MINUTES={p['rest_minutes']:g}: the phone's rest "
        "does not change an alarm's buzzes, whose urgency is now) (`pager_bench.phone.grace_buzzes`): the table's "
        "history of each alarm (every failure's opening and closing, the renders the deliveries made, in the order "
        "the table saw them) is run through decide_render's rule with each grace, with the every-minute check's "
        "renders where that grace makes an alarm due, an alarm that buzzed not buzzing again within the hour "
        f"({NOW_AGAIN_SECONDS // 60} minutes: what came past its grace meanwhile buzzes when the hour ends), and a "
        "render that would change the message while Telegram is down changing nothing. At the replay's own "
        f"{grace:g} minutes it gives {m['buzzes']} alarm buzzes, the chat had {m['phone']}: "
        + ("the same, at the same times." if m["same_times"] and m["buzzes"] == m["phone"]
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
        add(f"The grace does not decide the week's total: with {longest['minutes']} minutes the week would still have "
            f"{fewest} buzzes, above the {limit} of the target below.")
        add("")


def _grace(add: Add, p: dict[str, Any], g: dict[str, Any]) -> None:
    """The alarms' episodes in the week (`p`), and the grace's table from a replay without quiet hours (`g`)."""
    _episodes(add, p)
    _grace_table(add, g)
    chosen = supported_grace(g["grace"])
    if chosen is not None:
        _supported(add, g, chosen)


# ------------------------------------------------------------------------------------------ the urgency table


def _median(waits: list[float]) -> float | None:
    return statistics.median(waits) if waits else None


def _spread(waits: list[float]) -> str:
    """Median / longest of a sorted list of waits."""
    return f"{fmt_s(_median(waits))} / {fmt_s(waits[-1])}" if waits else "–"


def _forms(t: dict[str, Any]) -> str:
    """How many a call held, and by which form: its 📬/🌅 message · the thing's own message anew · silently
    right after a now buzz that ended the rest."""
    if not t.get("called"):
        return "0"
    return f"{t['called']} ({t['message']} · {t['own']} · {t['after']})"


def _not_called(t: dict[str, Any]) -> str:
    """What became of the moments that neither buzzed nor were called, by why (none of them lost)."""
    why = ((t.get("resolved", 0), "no longer needed when their call came"),
           (t.get("pending", 0), "their call after the replay's end"),
           (t.get("held", 0), "cleared while the hour of their repository's last buzz held them"),
           (t.get("between_checks", 0), "cleared before the every-minute check after their grace's end"),
           (t.get("telegram_down", 0), "closed while Telegram was down"))
    said = [f"{n} {what}" for n, what in why if n]
    return "; ".join(said) or "–"


def _lost(t: dict[str, Any]) -> str:
    return str(t["lost"]) if not t["lost"] else f"**{t['lost']}**"


def urgency_rows(p: dict[str, Any]) -> list[list[str]]:
    """The urgency table's rows: each kind of moment (`MOMENTS`), and an alarm's split by whether its repository
    had buzzed within the hour before its grace's end."""
    rows = []
    for kind, label, urgency in MOMENTS:
        t = p["moments"].get(kind)
        if t is None:
            continue
        rows.append([label, urgency, str(t["n"]), str(t["buzzed"]), _forms(t), _not_called(t), _lost(t), _spread(t["waits"])])
        if kind == "alarm":
            within, after = t["rings_within_hour"], t["rings_after_outage"]
            plain = t["rings_not_within_hour"]
            rows.append(["… its repository had not buzzed within the hour", "", str(t["n"] - t["within_hour"]),
                         str(len(plain) + len(after)), "", "", "",
                         _spread(plain) + (f"; {len(after)} whose grace ended while Telegram was down: {_spread(after)} "
                                           "after its return" if after else "")])
            rows.append(["… within the hour of its repository's last buzz", "", str(t["within_hour"]), str(len(within)),
                         "", "", "", _spread(within)])
    return rows


def _urgency(add: Add, p: dict[str, Any], quiet: dict[str, Any] | None) -> None:
    add("How soon each kind of moment called (`pager.attention.Urgency`). Now: it buzzes when it happens, whatever "
        "buzzed before, also while the phone rests; for an alarm the moment is its grace's end (the failure's opening "
        f"plus ALARM_GRACE_MINUTES={p['grace_minutes']:g}), and a repository alarm that buzzed does not buzz again "
        f"within the hour ({NOW_AGAIN_SECONDS // 60} minutes): what came past its grace meanwhile buzzes when the "
        "hour ends. Soon: while the phone rests "
        f"(BUZZ_GAP_MINUTES={p['rest_minutes']:g} after a call) it is shown without a sound and kept for the call at "
        "the rest's end. A call holds what was kept: several things are one 📬 message (🌅 after quiet hours), one "
        "thing is its own message posted anew with a sound; and when a now buzz ended the rest early, what the "
        "rest kept follows in the next minute without a sound: that buzz was its call. The wait runs from the moment "
        "to the buzz that called it (its own, or its call's); lost: neither buzzed nor called while it still needed "
        "the maintainer.")
    add("")
    columns = ["moment", "urgency", "in the week", "buzzed on its own",
               "called by a call (📬/🌅 message · its own message anew · right after a now buzz)",
               "neither, and why", "lost", "wait to the buzz that called it: median / longest"]
    table(add, columns, "llrrrlrr", urgency_rows(p))
    if quiet:
        add(f"The same with QUIET_HOURS={quiet['quiet_hours']} (the trace replayed again): inside them nothing buzzes, "
            "and what would have buzzed, a red default branch included, is kept for the call at their end.")
        add("")
        table(add, columns, "llrrrlrr", urgency_rows(quiet))


# ------------------------------------------------------------------------------------------ the rest's table


def supported_gap(gaps: dict[int, dict[str, Any]], limit: int) -> int | None:
    """The default the rest's table supports: the shortest rest whose week meets the buzz target."""
    return next((gap for gap, g in sorted(gaps.items()) if g["buzzes"] <= limit), None)


def _soon(g: dict[str, Any]) -> dict[str, Any]:
    """The soon moments of a replay together: how many buzzed on their own, were kept, called, no longer needed,
    lost; their waits (all, and the kept ones')."""
    ts = [g["moments"][kind] for kind in ("contact", "release")]
    total = {key: sum(t[key] for t in ts) for key in ("n", "buzzed", "kept", "called", "resolved", "pending", "lost")}
    return {**total, "waits": sorted(w for t in ts for w in t["waits"]), "kept_waits": sorted(w for t in ts for w in t["kept_waits"])}


def _calls(g: dict[str, Any]) -> tuple[int, int, int]:
    """A replay's calls: with a sound as one 📬/🌅 message, with a sound as a thing's own message anew, and
    silently right after a now buzz that ended the rest."""
    calls = g.get("calls", [])
    return (sum(c["how"] == "message" for c in calls), sum(c["how"] == "own" for c in calls),
            sum(c["how"] == "after" for c in calls))


def _rests(add: Add, p: dict[str, Any], gaps: dict[int, dict[str, Any]]) -> None:
    """The phone's rest: each value of BUZZ_GAP_MINUTES on the same week, and the default it supports."""
    limit = int(BUZZ_SHARE * sent_before(p))
    own = round(p["rest_minutes"])
    add("The phone's rest: each value of BUZZ_GAP_MINUTES on the same week (the trace replayed once per value). "
        "After a call (any buzz but pager's own health) the phone rests: an outsider's first contact or a release "
        "ready to merge (soon) is shown at once without a sound and kept for one call when the rest ends; a red "
        "default branch (now) buzzes all the same, and ends the rest: what the rest kept follows without a sound. "
        "Calls: those with a sound, as one 📬 message or as the one thing's own message anew; then the silent ones "
        "right after a now buzz. The soon moments' wait runs from the moment to the buzz that called it (0 for one "
        "that buzzed on its own; a call whose rest ends while Telegram is down waits for its return).")
    add("")
    add(f"| BUZZ_GAP_MINUTES | buzzes in the week | … now (🚨 ⚙️) | … soon moments on their own | … calls: 📬 message / "
        f"own message anew | silent calls right after a now buzz | soon moments kept: called / no longer needed / lost "
        f"| soon moments' wait: median / longest (the kept ones: median / longest) | within the buzz target (at most "
        f"{limit}) |")
    add("|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for gap, g in sorted(gaps.items()):
        s, (message, posted, after) = _soon(g), _calls(g)
        mark = "**" if gap == own else ""
        add(f"| {mark}{gap}{mark} | {g['buzzes']} | {g['now_buzzes']} | {s['buzzed']} | {message} / {posted} | {after} | "
            f"{s['called']} / {s['resolved']} / {s['lost']} | {_spread(s['waits'])} ({_spread(s['kept_waits'])}) | "
            f"{'yes' if g['buzzes'] <= limit else 'no'} |")
    add("")
    chosen = supported_gap(gaps, limit)
    now = max((g["now_buzzes"] for g in gaps.values()), default=0)
    if chosen is None:
        add(f"No rest of the table brings the week to at most {limit} buzzes: the now moments alone make {now}.")
    else:
        g, s = gaps[chosen], _soon(gaps[chosen])
        add(f"**The shortest rest within the buzz target: {chosen} minutes**"
            + (" (the default now)." if chosen == own else f" (the default now is {own}: {gaps[own]['buzzes']} buzzes)."
               if own in gaps else ".")
            + f" {g['buzzes']} buzzes, at most {limit}: the {g['now_buzzes']} of the now moments, which no rest changes, "
            f"and {g['buzzes'] - g['now_buzzes']} for the soon ones, whose wait is then a median "
            f"{fmt_s(_median(s['waits']))} and at most {fmt_s(s['waits'][-1] if s['waits'] else None)} (the kept ones' "
            f"median {fmt_s(_median(s['kept_waits']))}). A shorter rest calls the soon moments sooner and more often; "
            "a longer one makes them wait longer for fewer calls, and the now buzzes cut it short all the same.")
    add("")


# ------------------------------------------------------------------------------------------ before and now


def _alarms_more(add: Add, p: dict[str, Any], alarms: Counter[str]) -> None:
    """Why alarms buzz more than under the rule before, when they do."""
    e = p["episodes"]
    before = alarms["sends"] - p["reposts_by_kind"].get("alarm", 0)
    if alarms["buzzes"] > before:
        add(f"Alarms buzz more than before: the rule before buzzed once per alarm message, when a repository went red "
            f"({before}); now each failure still red past its grace buzzes ({alarms['buzzes']}), once an hour at most "
            f"per repository: a repository red with several failures one after another buzzes for each, and only the "
            f"{_n(e['quiet_within_grace'], 'time', 'times')} a repository cleared within the grace stay silent. "
            f"Buzzing once per time a repository went red would have made {e['buzzed']}.")
        add("")


def _before_now(add: Add, p: dict[str, Any], quiet: dict[str, Any] | None) -> None:
    """Buzzes by kind under the rule before (a buzz per message; reposts were not made) and now."""
    week = _totals(p["days"])
    q = _totals(quiet["days"]) if quiet else {}
    add("Buzzes by kind: under the rule before (every message buzzed; counted in this run as its sends less its "
        "reposts and the calls' messages) and now" + (", without quiet hours and with them." if quiet else ".")
        + " Now, a thing's own message a call posted anew counts under its kind.")
    add("")
    new = ("summary", "rest")  # messages the rule before never sent

    def before(kind: str) -> int:
        return 0 if kind in new else week.get(kind, Counter())["sends"] - p["reposts_by_kind"].get(kind, 0) - sum(
            1 for c in p.get("calls", []) if c["form"] == "own" and c["kind"] == kind)

    rows = [[label, f"{before(kind)}", f"{week.get(kind, Counter())['buzzes']}", f"{q.get(kind, Counter())['buzzes']}"]
            for kind, _, label in KINDS if week.get(kind) or q.get(kind)]
    rows.append(["**all**", f"**{sent_before(p)}**", f"**{p['buzzes']}**",
                 f"**{quiet['buzzes']}**" if quiet else ""])
    width = 4 if quiet else 3  # the last column only with quiet hours
    table(add, ["kind", "the rule before", "now", "with quiet hours"][:width], "lrrr"[:width], [r[:width] for r in rows])
    _alarms_more(add, p, week.get("alarm", Counter()))


# ------------------------------------------------------------------------------------------ the targets


def _alarm_target(p: dict[str, Any]) -> tuple[str, str, bool]:
    """A red default branch buzzes within the check's minute of its grace's end; within the hour of its
    repository's last buzz, when that hour ends, at most 60 minutes after its grace's end (and the check's minute)."""
    t = p["moments"]["alarm"]
    plain, within, after = t["rings_not_within_hour"], t["rings_within_hour"], t["rings_after_outage"]
    hour = NOW_AGAIN_SECONDS + NOW_WITHIN
    said = [f"{len(plain) + len(after)} of the {t['n'] - t['within_hour']} whose repository had not buzzed within the "
            f"hour buzzed: {sum(w <= NOW_WITHIN for w in plain)} within 1 minute of their grace's end (the longest "
            f"{fmt_s(plain[-1] if plain else None)})"
            + (f", {len(after)} whose grace ended while Telegram was down within "
               f"{fmt_s(after[-1])} of its return" if after else "")]
    said.append(f"{t['within_hour']} within the hour of their repository's last buzz: "
                + (f"{len(within)} buzzed, at most {fmt_s(within[-1])} after their grace's end" if within else "none buzzed")
                + (f", {t['held']} cleared before the hour ended" if t.get("held") else ""))
    others = t["n"] - t["buzzed"] - t.get("held", 0)
    if others:
        said.append(f"{others} neither ({_not_called({**t, 'held': 0})}; lost {t['lost']})")
    met = (all(w <= NOW_WITHIN for w in plain + after) and all(w <= hour for w in within) and t["lost"] == 0
           and t["silent"] == 0)
    return (f"a default branch red past its grace buzzes within 1 minute of its grace's end, every time (one whose "
            "grace ends while Telegram is down, within 1 minute of its return), except when the same repository buzzed "
            f"within the hour: then at most 60 minutes after its grace's end, and the every-minute check's minute "
            f"(without quiet hours; ALARM_GRACE_MINUTES={p['grace_minutes']:g})", "; ".join(said), met)


def _first_line_target(p: dict[str, Any], quiet: dict[str, Any] | None) -> tuple[str, str, bool]:
    """Every call's first line, as a phone's notification shows it, at most FIRST_LINE characters."""
    labels = {kind: label for kind, _, label in KINDS}
    said = []
    for name, f in (("without quiet hours", p["first_lines"]), ("with quiet hours", quiet["first_lines"] if quiet else None)):
        if f is None:
            continue
        over = ", ".join(f"{n} {labels.get(kind, kind)} (up to {f['longest_by_kind'][kind][0]}: "
                         f"“{f['longest_by_kind'][kind][1]}”)" for kind, n in sorted(f["over_by_kind"].items()))
        calls = [f["max_by_kind"][kind] for kind in ("rest", "summary") if kind in f["max_by_kind"]]
        said.append(f"{name}: {f['over']} of {f['n']} longer (the longest {f['max']})"
                    + (f": {over}" if over else "") + (f"; every 📬/🌅 within, at most {max(calls)}" if calls else ""))
    met = p["first_lines"]["over"] == 0 and (quiet is None or quiet["first_lines"]["over"] == 0)
    return (f"every call's first line at most {FIRST_LINE} characters: the visible text (`pager.html.visible_length`) "
            "of the first line of every message that buzzed and of every 📬/🌅 message", "; ".join(said), met)


def _lost_target(p: dict[str, Any], quiet: dict[str, Any] | None) -> tuple[str, str, bool]:
    """No moment lost: each one buzzed on its own or was called by a call that held it."""
    said, lost = [], 0
    for name, q in (("without quiet hours", p), ("with quiet hours", quiet)):
        if q is None:
            continue
        m = q["moments"]
        n = sum(t["n"] for t in m.values())
        buzzed = sum(t["buzzed"] for t in m.values())
        called = sum(t.get("called", 0) for t in m.values())
        lost += sum(t["lost"] for t in m.values())
        said.append(f"{name}: of {n}, {buzzed} buzzed on their own, {called} were called, {n - buzzed - called} "
                    f"neither, each for a reason the urgency table gives, {sum(t['lost'] for t in m.values())} lost")
    return ("no moment lost: every moment that calls (a red default branch, pager's own health, an outsider's first "
            "contact, a release ready to merge) buzzed on its own, or was called by a call that held it, or no longer "
            "needed the maintainer by then", "; ".join(said), lost == 0)


def targets(p: dict[str, Any], quiet: dict[str, Any] | None) -> list[tuple[str, str, bool]]:
    """(target, measured, met) of the attention model, without quiet hours and (when replayed) with them. The
    count before is the same run's under the rule before (every message sent buzzed; reposts were not made)."""
    before = sent_before(p)
    limit = int(BUZZ_SHARE * before)
    rows = [
        _alarm_target(p),
        (f"total buzzes in the week at most {BUZZ_SHARE:.0%} of those before the attention model, when every message "
         f"buzzed: {before} in this run (its sends less its reposts and the calls' messages; {BEFORE_BUZZES} "
         f"measured at {BEFORE_COMMIT} on the week of `make bench`'s defaults), so at most {limit}",
         f"{p['buzzes']} without quiet hours ({p['buzzes'] / before:.0%}; {p['now_buzzes']} of them now moments')"
         + (f", {quiet['buzzes']} with QUIET_HOURS={quiet['quiet_hours']} ({quiet['buzzes'] / before:.0%})" if quiet else ""),
         p["buzzes"] <= limit and (quiet is None or quiet["buzzes"] <= limit)),
    ]
    if quiet:
        rows.append((f"no buzz inside quiet hours (QUIET_HOURS={quiet['quiet_hours']})",
                     f"{quiet['inside_quiet']} of {quiet['buzzes']} buzzes inside them (without quiet hours "
                     f"{p['night']} of {p['buzzes']} at night); {_n(len(_night_calls(quiet)), 'call', 'calls')} at "
                     "their end", quiet["inside_quiet"] == 0))
    rows.append(_first_line_target(p, quiet))
    rows.append(_lost_target(p, quiet))
    return rows


DROPPED = ("Targets of the model before, dropped or rewritten by design: \"every release offered 🔀 Merge buzzed at "
           "once\" is dropped, a release ready to merge is soon now (it waits for the phone's rest to end, and nothing "
           "breaks while it waits); \"every repository alarm's failure still red when its grace ended buzzed; while "
           "the phone rests, kept for the call at its end\" is now the first target, a red default branch being now "
           "(it buzzes whatever buzzed before, once an hour at most per repository); \"every outsider's first contact "
           "buzzed; while the phone rests, kept for the call at its end\" is now part of \"no moment lost\", with "
           "every form a call takes (its 📬/🌅 message, the thing's own message posted anew, or the silent follow-up "
           "of a now buzz that ended the rest).")


def _floor(p: dict[str, Any], quiet: dict[str, Any] | None) -> list[str]:
    """What the buzz target is up against: the moments that call, and how the calls went."""
    m = p["moments"]
    now = m["alarm"]["n"] + m["health"]["n"]
    soon = _soon(p)
    message, posted, after = _calls(p)
    lines = [f"The moments that call: {m['alarm']['n']} failures red past their grace and "
             f"{_n(m['health']['n'], 'entry', 'entries')} of pager's own health (now: {now}), {m['contact']['n']} first "
             f"contacts and {_n(m['release']['n'], 'release', 'releases')} ready to merge (soon: {soon['n']}). The now "
             f"moments made {p['now_buzzes']} buzzes, whatever the phone's rest: {p['now_buzzes'] / max(1, int(BUZZ_SHARE * sent_before(p))):.0%} "
             f"of the buzz target's {int(BUZZ_SHARE * sent_before(p))}. Of the soon ones {soon['buzzed']} buzzed on their own "
             f"and {soon['kept']} were kept while the phone rested, for {message + posted} calls with a sound "
             f"({message} 📬 messages, {posted} things' own messages anew) and {after} silent ones right after a now "
             f"buzz that ended the rest: {p['buzzes']} buzzes in the week."]
    if quiet:
        lines.append(f"With quiet hours, what came inside the night is kept for the calls at their end: {quiet['buzzes']} "
                     f"buzzes, {_n(len(_night_calls(quiet)), 'call', 'calls')} at the end of quiet hours and "
                     f"{sum(c['loud'] and not c['night'] for c in quiet.get('calls', []))} at the end of a rest among them.")
    return lines


def section(add: Add, trace: fleet.Trace, label: str, p: dict[str, Any], quiet: dict[str, Any] | None,
            gaps: dict[int, dict[str, Any]] | None = None) -> None:
    add(f"## What the maintainer's phone lives through ({label}, pager with fast recovery)")
    add("")
    add("The week's chat as the maintainer's phone gets it, counted in the fake Telegram of the replay above: "
        "each message sent (a send), sent with a sound (a buzz), edited, and deleted (a moment that must buzz on a "
        "message already shown sends it anew with a sound and deletes the old one: a repost). The maintainer's "
        "clock is UTC (TIMEZONE); ALARM_GRACE_MINUTES and BUZZ_GAP_MINUTES are the defaults. A message's kind is "
        "what it starts with; an "
        "answer to a command is a reply to one (the trace has none, nor any press of 👀 or 🛠). Definitions: the "
        "docstring of `sim/pager_bench/phone.py`.")
    add("")
    _by_kind(add, trace, p, quiet)
    deleted = sum(c["deletes"] for c in _totals(p["days"]).values())
    moved = p["reposts"] + p.get("own_calls", 0)
    add(f"Reposts in the week: {p['reposts']}, and {p.get('own_calls', 0)} things' own messages posted anew by a call"
        + ("." if deleted == moved else f"; {moved - deleted} of their old messages stayed (sent more than 48 hours "
           "before, which a bot may no longer delete)."))
    add("")
    if quiet:
        _nights(add, trace, p, quiet)
    without_quiet = p if p.get("grace") else next((g for g in (gaps or {}).values() if g.get("grace")), None)
    if without_quiet:
        _grace(add, p, without_quiet)
    _urgency(add, p, quiet)
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
    add(DROPPED)
    add("")
    for line in _floor(p, quiet):
        add(line)
        add("")
