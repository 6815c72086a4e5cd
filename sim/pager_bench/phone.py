"""What the maintainer's phone lives through in a replay: pager.attention at work, measured.

Two sources, both written as the replay goes (`Ledger`, `FakeTelegram.history`):
- the chat: every send, edit and delete of the bot's, with its time and the message's first line, and
  every message sent with a sound (a buzz). A message's kind is what its first line starts with when it
  is sent (`KINDS`); an answer to a command is a reply to a person's message;
- the table (`Ledger`): each write of an alarm's head and entries, of a release's and a contribution's
  record and of a quiet hours' note, and each load of a repository alarm's head (a render:
  `alarm.render_now` settles on the head, and nothing else loads it in a replay, where nobody presses 🛠),
  with the function that made it (the webhook, or the sweep function's every-minute check).

Folded (`observe`, pure once the facts are read) into:
- sends, buzzes, edits and deletes (the old message of a repost) per day of the maintainer's clock, by kind;
- buzzes at night (`NIGHT`, on the maintainer's clock);
- the moments that must buzz (pager.attention.MOMENTS), counted from the table and checked against the
  chat: a release offered 🔀 Merge (its record starts offering it), an outsider's first contact (a
  contribution shown in a thread that has not buzzed within the hour, the first one of a thread
  included), a repository alarm's failure still red when its grace ended (an entry open at its opening
  plus ALARM_GRACE_MINUTES). Each buzzed (the message it was shown in was sent with a sound; for an
  alarm, one of its messages buzzed between its grace's end and its closing), was kept for the quiet
  hours' summary (a note of it in the summary of those hours), or neither: then, for an alarm's failure,
  why (`alarm_tally`), else silent;
- the times a repository went red (its alarm's episodes: from a first failure to the all clear);
- the grace table (`grace_row`): what ALARM_GRACE_MINUTES of 0, 5, ... 30 would have done in the same
  week, computed from this one replay (`grace_buzzes`, below).

`grace_buzzes` replays decide_render's rule on the alarm's history: the entries' openings and closings and
the renders the deliveries made (the same whatever the grace), in the order the table saw them, and the
every-minute check's renders (which depend on the grace: the check renders an alarm whose index says it is
due, an entry past its grace that has not buzzed). A render that changes the message while Telegram is down
fails and changes nothing (the index keeps what it said). At the replay's own grace it must give the
chat's alarm buzzes, one for one and at the same times: `observe` says whether it does.
"""

from __future__ import annotations

import bisect
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, NamedTuple

from pager.attention import FOLLOW_UP_SECONDS, QuietHours
from pager.signals.release import offers_merge
from pager.store import MemoryStore, Record
from pager_world.store import key_kind
from pager_world.telegram import FakeTelegram

NIGHT = "22:00-07:00"  # the maintainer's night, on their clock: buzzes in it are counted, and quiet hours set to it
GRACES = (0, 5, 10, 15, 20, 30)  # minutes: the grace table's rows
GAPS = (0, 15, 30, 45, 60, 75, 90)  # minutes: the rest table's rows (BUZZ_GAP_MINUTES)
FLAKE_SECONDS = 1800.0  # a failure closed within this long of its opening is a flake a rerun cleared
KINDS = (  # (kind, the marks its messages start with, what the report calls them)
    ("contribution", ("💬",), "💬 contribution"),
    ("alarm", ("🚨",), "🚨 alarm"),
    ("health", ("⚙️",), "⚙️ pager's own health"),
    ("release", ("📦", "🔀"), "📦 🔀 release"),
    ("summary", ("🌅",), "🌅 quiet hours' summary"),
    ("rest", ("📬",), "📬 call after the phone's rest"),
    ("answer", (), "answers to commands"),
)
OTHER = "other"  # a message of none of the kinds (none expected)
ALARM_HEAD = re.compile(r"alarm#(\d+)")  # a repository's alarm (pager's own health is alarm#control)
ENTRY_ITEM = "entry:"


# ------------------------------------------------------------------------------------------ the table


class Line(NamedTuple):
    """One thing the table saw: a write ("save": the record's data) or a render ("render")."""

    what: str
    at: float
    key: str
    item: str
    data: Mapping[str, Any]
    function: str  # webhook or sweep


class Ledger(MemoryStore):
    """pager's in-memory table that also notes, in order, what attention is about (the module docstring)."""

    NOTED = frozenset({"alarm", "release", "contribution", "summary", "attention"})

    def __init__(self, clock: Callable[[], float], function: Callable[[], str]) -> None:
        super().__init__()
        self.clock, self.function = clock, function
        self.lines: list[Line] = []

    def load(self, key: str, item: str = "") -> Record:
        record = super().load(key, item)
        if not item and ALARM_HEAD.fullmatch(key):
            self.lines.append(Line("render", self.clock(), key, "", {}, self.function()))
        return record

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        saved = super().save(record, data, expires_at=expires_at)
        kind = key_kind(record.key)
        if kind in self.NOTED and (not record.item or kind == "summary" or record.item.startswith((ENTRY_ITEM, "summary:"))):
            self.lines.append(Line("save", self.clock(), record.key, record.item, saved.data, self.function()))
        return saved


# ------------------------------------------------------------------------------------------ the chat


class Post(NamedTuple):
    what: str  # send, edit or delete
    message_id: int
    at: float
    kind: str
    buzz: bool


def kind_of(first_line: str) -> str:
    return next((kind for kind, marks, _ in KINDS if marks and first_line.startswith(marks)), OTHER)


def posts_of(telegram: FakeTelegram) -> list[Post]:
    """The chat's history with each message's kind (the kind it was sent as, for its edits and delete too)."""
    rang = {message_id for message_id, _, _ in telegram.buzzes}
    kinds: dict[int, str] = {}
    posts = []
    for what, message_id, at, first in telegram.history:
        if what == "send":
            message = telegram.messages.get(message_id)
            asked = telegram.messages.get(message.reply_to) if message is not None and message.reply_to else None
            kinds[message_id] = "answer" if asked is not None and asked.author is not None else kind_of(first)
        posts.append(Post(what, message_id, at, kinds.get(message_id, OTHER), what == "send" and message_id in rang))
    return posts


# ------------------------------------------------------------------------------------------ the folds


def hours(value: str, zone: tzinfo) -> QuietHours:
    """`HH:MM-HH:MM` on the maintainer's clock (pager.attention's quiet hours)."""
    found = QuietHours.parse(value, zone)
    if found is None:
        raise ValueError("no hours")
    return found


def day_of(at: float, zone: tzinfo) -> str:
    return datetime.fromtimestamp(at, tz=zone).date().isoformat()


def by_day(posts: Iterable[Post], zone: tzinfo) -> dict[str, dict[str, Counter[str]]]:
    """day -> kind -> sends, buzzes, edits, deletes."""
    days: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for post in posts:
        counts = days[day_of(post.at, zone)][post.kind]
        counts[post.what + "s"] += 1
        counts["buzzes"] += post.buzz
    return {day: {kind: Counter(c) for kind, c in kinds.items()} for day, kinds in sorted(days.items())}


@dataclass
class _Alarm:
    """One repository alarm as the model follows it: its open entries, whether its message is shown (open),
    `heard` (decide_render's: every opening until then buzzed), what the message shows, the index's due."""

    entries: dict[str, tuple[float, Any]] = field(default_factory=dict)  # key -> (opened at, what is shown of it)
    showing: bool = False
    heard: float | None = None
    shown: Any = None
    due: float | None = None


class Buzz(NamedTuple):
    at: float
    ref: str
    heard: tuple[tuple[str, float], ...]  # the openings it buzzed for: (entry key, opened at)


Step = tuple  # ("open", at, ref, key, opened, shown) | ("close", at, ref, key) | ("render", at, ref, function)


def alarm_steps(lines: Iterable[Line]) -> list[Step]:
    """A repository alarm's history from the table's lines, in order."""
    steps: list[Step] = []
    for line in lines:
        head = ALARM_HEAD.fullmatch(line.key)
        if head is None:
            continue
        ref = head.group(1)
        if line.what == "render":
            steps.append(("render", line.at, ref, line.function))
        elif line.item.startswith(ENTRY_ITEM):
            key, data = line.item[len(ENTRY_ITEM):], line.data
            if data.get("state") == "open":
                shown = (data.get("title"), data.get("url"), data.get("rank"), data.get("at"))
                steps.append(("open", line.at, ref, key, float(data.get("at", line.at)), shown))
            else:
                steps.append(("close", line.at, ref, key))
    return steps


def _down(windows: Sequence[tuple[float, float]], at: float) -> bool:
    return any(start <= at < end for start, end in windows)


def _render(alarm: _Alarm, ref: str, at: float, grace: float, down: bool) -> Buzz | None:
    """decide_render's rule, and what the render leaves in the check's index (`due_of`)."""
    if not alarm.entries:
        if alarm.showing:
            if down:
                return None  # the all clear's edit fails
            alarm.showing, alarm.heard, alarm.shown = False, None, None
        alarm.due = None
        return None
    heard = alarm.heard if alarm.showing else None
    ripe = tuple(sorted((k, opened) for k, (opened, _) in alarm.entries.items()
                        if (heard is None or opened > heard) and opened + grace <= at))
    shown = dict(alarm.entries)
    if down and (ripe or not alarm.showing or shown != alarm.shown):
        return None  # a send, repost or edit while Telegram is down: nothing changes
    if ripe:
        heard = max(heard if heard is not None else at - grace, at - grace)
    alarm.showing, alarm.heard, alarm.shown = True, heard, shown
    alarm.due = min((opened + grace for opened, _ in alarm.entries.values() if heard is None or opened > heard),
                    default=None)
    return Buzz(at, ref, ripe) if ripe else None


def grace_buzzes(steps: Sequence[Step], grace: float, checks: Sequence[float],
                 down: Sequence[tuple[float, float]] = ()) -> list[Buzz]:
    """The repository alarms' buzzes had ALARM_GRACE_MINUTES been grace / 60 (the module docstring)."""
    alarms: dict[str, _Alarm] = defaultdict(_Alarm)
    buzzes: list[Buzz] = []
    next_check = 0

    def check_until(t: float) -> None:
        nonlocal next_check
        while next_check < len(checks) and checks[next_check] <= t:
            c = checks[next_check]
            for ref, alarm in alarms.items():
                if alarm.due is not None and alarm.due <= c:
                    buzz = _render(alarm, ref, c, grace, _down(down, c))
                    if buzz:
                        buzzes.append(buzz)
            next_check += 1

    for step in steps:
        what, at, ref = step[0], step[1], step[2]
        check_until(at)
        alarm = alarms[ref]
        if what == "open":
            alarm.entries[step[3]] = (step[4], step[5])
        elif what == "close":
            alarm.entries.pop(step[3], None)
        elif step[3] == "webhook":  # a delivery's render; the check's own are the model's to make
            buzz = _render(alarm, ref, at, grace, _down(down, at))
            if buzz:
                buzzes.append(buzz)
    check_until(checks[-1] if checks else 0.0)
    return buzzes


class Opening(NamedTuple):
    ref: str
    key: str
    at: float
    closed: float  # inf: still open at the end


def openings(steps: Iterable[Step]) -> list[Opening]:
    """Every opening of a repository alarm's entry, and when it closed."""
    found: list[Opening] = []
    live: dict[tuple[str, str], float] = {}
    for step in steps:
        what, at, ref = step[0], step[1], step[2]
        if what == "open" and (ref, step[3]) not in live:
            live[(ref, step[3])] = step[4]
        elif what == "close" and (ref, step[3]) in live:
            found.append(Opening(ref, step[3], live.pop((ref, step[3])), at))
    found += [Opening(ref, key, opened, float("inf")) for (ref, key), opened in live.items()]
    return sorted(found, key=lambda o: o.at)


def episodes(steps: Iterable[Step]) -> list[tuple[str, float, float]]:
    """Each time a repository alarm was red: (ref, from its first failure, to its all clear or inf)."""
    open_keys: dict[str, set[str]] = defaultdict(set)
    since: dict[str, float] = {}
    found = []
    for step in steps:
        what, at, ref = step[0], step[1], step[2]
        if what == "open":
            if not open_keys[ref]:
                since[ref] = at
            open_keys[ref].add(step[3])
        elif what == "close" and step[3] in open_keys[ref]:
            open_keys[ref].discard(step[3])
            if not open_keys[ref]:
                found.append((ref, since.pop(ref), at))
    found += [(ref, at, float("inf")) for ref, at in since.items()]
    return sorted(found, key=lambda e: e[1])


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def grace_row(buzzes: Sequence[Buzz], all_openings: Sequence[Opening], minutes: int) -> dict[str, Any]:
    """A row of the grace table: alarm buzzes; of them flakes' (every failure it buzzed for closed within
    FLAKE_SECONDS of its opening); the failures that stayed red longer than that, and the median time from
    such a failure to the buzz that heard it (and how many no buzz heard)."""
    closed = {(o.ref, o.key, o.at): o.closed for o in all_openings}
    flakes = sum(all(closed.get((b.ref, k, at), float("inf")) - at <= FLAKE_SECONDS for k, at in b.heard) for b in buzzes)
    heard_at = {(b.ref, k, at): b.at for b in buzzes for k, at in b.heard}
    stayed = [o for o in all_openings if o.closed - o.at > FLAKE_SECONDS]
    delays = [heard_at[(o.ref, o.key, o.at)] - o.at for o in stayed if (o.ref, o.key, o.at) in heard_at]
    return {"minutes": minutes, "buzzes": len(buzzes), "flakes": flakes, "stayed_red": len(stayed),
            "unheard": len(stayed) - len(delays), "delay_median": _median(delays)}


def check_times(start: float, every: float, end: float) -> list[float]:
    times, t = [], start
    while t < end:
        times.append(t)
        t += every
    return times


def reposts(lines: Iterable[Line]) -> Counter[str]:
    """Messages sent anew in place of one still shown, by kind: an alarm's head (pager's own health for
    alarm#control), or a release's record, that names a new message while the one before was still shown
    (an alarm's until its all clear)."""
    shown: dict[str, Any] = {}
    count: Counter[str] = Counter()
    for line in lines:
        kind = key_kind(line.key)
        if line.what != "save" or line.item or kind not in ("alarm", "release"):
            continue
        if kind == "alarm":
            message = line.data.get("message") or {}
            now = (message.get("id"), bool(message.get("open")))
            kind = "alarm" if ALARM_HEAD.fullmatch(line.key) else "health"
        else:
            now = (line.data.get("message_id"), line.data.get("message_id") is not None)
        before = shown.get(line.key)
        count[kind] += before is not None and before[1] and now[0] is not None and now[0] != before[0]
        shown[line.key] = now
    return +count


# ------------------------------------------------------------------------------------------ moments


class Moment(NamedTuple):
    at: float
    thing: str
    message_id: int | None
    sound: Mapping[str, Any]


def offers(lines: Iterable[Line]) -> list[Moment]:
    """Each time a release's record starts offering 🔀 Merge (and the message that shows it)."""
    before: dict[str, Mapping[str, Any]] = {}
    found = []
    for line in lines:
        if line.what != "save" or key_kind(line.key) != "release" or line.item:
            continue
        if offers_merge(line.data) and not offers_merge(before.get(line.key, {})):
            found.append(Moment(line.at, line.key, line.data.get("message_id"), line.data.get("sound") or {}))
        before[line.key] = line.data
    return found


def contacts(lines: Iterable[Line]) -> tuple[list[Moment], int, int]:
    """An outsider's first contacts: each contribution shown (its record's first write with a message) in a
    thread that had not buzzed within FOLLOW_UP_SECONDS (pager.attention: a follow-up is silent); and how
    many contributions were shown in all, in how many threads."""
    last: dict[str, float] = {}
    found, shown = [], 0
    seen: set[str] = set()
    threads: set[str] = set()
    for line in lines:
        if line.what != "save" or key_kind(line.key) != "contribution" or line.item or line.key in seen:
            continue
        if not isinstance(line.data.get("message_id"), int):
            continue
        seen.add(line.key)
        shown += 1
        at = float(line.data.get("shown_at") or line.at)
        thread = "#".join(line.key.split("#")[:4])  # contribution#<repository id>#<thing>#<number>
        sound = line.data.get("sound") or {}
        if thread not in last or not 0 <= at - last[thread] < FOLLOW_UP_SECONDS:
            found.append(Moment(at, line.key, line.data["message_id"], sound))
        if sound.get("buzz"):
            last[thread] = at
        threads.add(thread)
    return found, shown, len(threads)


class Kept(NamedTuple):
    """A note kept for a summary (of quiet hours, or at the end of the phone's rest): when it was written, the
    period it is kept for, when that period's summary was sent (None: never), and whether it was settled
    without a message instead (`resolved`: nothing it kept needed the maintainer any more)."""

    at: float
    period: tuple[float, float]
    called: float | None
    resolved: bool = False


def _fate(kept: Sequence[Kept], end: float) -> str:
    """What became of a moment kept for a summary, by the replay's `end`: called, resolved before its call,
    pending (its period ends after the replay), or uncalled."""
    if any(k.called is not None for k in kept):
        return "called"
    if any(k.resolved for k in kept):
        return "resolved"
    return "pending" if all(k.period[1] > end for k in kept) else "uncalled"


def notes(lines: Iterable[Line]) -> dict[str, list[Kept]]:
    """What the summaries noted: `<kind>:<thing>` -> each note, with its period and when its summary was sent
    (a summary's record `summary#<start>` written with what it sent; its period from the check's index)."""
    periods: dict[int, tuple[float, float]] = {}
    sent: dict[str, float] = {}
    nothing: set[str] = set()
    written: list[tuple[str, str, float]] = []
    for line in lines:
        if line.what != "save":
            continue
        if line.key == "attention" and line.item.startswith("summary:") and "end" in line.data:
            periods[int(float(line.data["start"]))] = (float(line.data["start"]), float(line.data["end"]))
        elif key_kind(line.key) == "summary" and line.item:
            written.append((line.key, line.item, float(line.data.get("at") or line.at)))
        elif key_kind(line.key) == "summary" and isinstance(line.data.get("sent"), dict) and line.key not in sent:
            sent[line.key] = line.at
        elif key_kind(line.key) == "summary" and line.data.get("sent") == "nothing":
            nothing.add(line.key)
    found: dict[str, list[Kept]] = defaultdict(list)
    for key, item, at in written:
        start = datetime.fromisoformat(key.split("#", 1)[1].replace("Z", "+00:00")).timestamp()
        found[item].append(Kept(at, periods.get(int(start), (start, start)), sent.get(key), key in nothing))
    return dict(found)


def tally(moments: Iterable[Moment], rang: set[int], noted: Mapping[str, list[Kept]], kind: str,
          night: QuietHours, end: float) -> dict[str, Any]:
    """Moments that must buzz: in all, at night, buzzed, kept for a summary (of quiet hours, or the call at the
    end of the phone's rest) and of them resolved before their call, pending at the replay's `end`, or never
    called (`_fate`); silent; and the waits of the called ones from the moment to their call."""
    counts: dict[str, Any] = Counter(n=0, night=0, buzzed=0, kept=0, resolved=0, pending=0, uncalled=0, silent=0)
    waits = []
    for m in moments:
        counts["n"] += 1
        counts["night"] += night.period(m.at) is not None
        thing = "#".join(m.thing.split("#")[:4]) if kind == "contribution" else m.thing  # a contribution's note: its thread's
        kept = noted.get(f"{kind}:{thing}"[:200], [])
        if m.message_id in rang:
            counts["buzzed"] += 1
        elif m.sound.get("summary") and kept:
            counts["kept"] += 1
            fate = _fate(kept, end)
            counts[fate] += fate != "called"
            waits += [min(k.called for k in kept if k.called is not None) - m.at] if fate == "called" else []
        else:
            counts["silent"] += 1
    return {**counts, "waits": sorted(waits)}


def alarm_tally(all_openings: Iterable[Opening], grace: float, rang: Mapping[str, list[float]],
                noted: Mapping[str, list[Kept]], night: QuietHours,
                checks: Sequence[float], down: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """Failures still red when their grace ended: in all, at night (the grace's end), buzzed (a buzz of the
    alarm's messages from the grace's end to the closing), kept (a note of the alarm in a summary whose period,
    quiet hours or the phone's rest, it was red in past its grace; of them never called: that summary never
    sent); the others closed before the every-minute check after their grace's end looked (`between_checks`:
    the grace's resolution is the check's minute), or while Telegram was down from then to their closing
    (`telegram_down`), or neither (silent)."""
    counts = Counter(n=0, night=0, buzzed=0, kept=0, resolved=0, pending=0, uncalled=0, between_checks=0,
                     telegram_down=0, silent=0)
    waits: list[float] = []
    for o in all_openings:
        due = o.at + grace
        if o.closed <= due:
            continue
        counts["n"] += 1
        counts["night"] += night.period(due) is not None
        times = rang.get(o.ref, [])
        k = bisect.bisect_left(times, due)
        kept = [n for n in noted.get(f"alarm:{o.ref}", []) if n.period[0] <= o.closed and due < n.period[1]]
        looked = checks[bisect.bisect_left(checks, due):bisect.bisect_left(checks, o.closed)]
        if k < len(times) and times[k] <= o.closed:
            counts["buzzed"] += 1
        elif kept:
            counts["kept"] += 1
            fate = _fate(kept, checks[-1] if checks else 0.0)
            counts[fate] += fate != "called"
            waits += [min(n.called for n in kept if n.called is not None) - due] if fate == "called" else []
        elif not looked:
            counts["between_checks"] += 1
        elif all(_down(down, c) for c in looked):
            counts["telegram_down"] += 1
        else:
            counts["silent"] += 1
    return {**counts, "waits": sorted(waits)}


# ------------------------------------------------------------------------------------------ it all


def observe(telegram: FakeTelegram, ledger: Ledger, *, grace: float, zone: tzinfo, quiet_hours: str,
            checks: Sequence[float], down: Sequence[tuple[float, float]], rest: float = 0.0) -> dict[str, Any]:
    """A replay's figures (the module docstring); `checks` are the every-minute check's times, `down`
    Telegram's outages, `rest` BUZZ_GAP_MINUTES in seconds. The grace table only without quiet hours and
    without the phone's rest (the model knows neither)."""
    night = hours(NIGHT, zone)
    quiet = hours(quiet_hours, zone) if quiet_hours else None
    posts = posts_of(telegram)
    steps = alarm_steps(ledger.lines)
    all_openings = openings(steps)
    alarm_buzzes = _alarm_buzzes(posts, ledger.lines)
    noted = notes(ledger.lines)
    rang = {p.message_id for p in posts if p.buzz}
    found, shown, threads = contacts(ledger.lines)
    figures: dict[str, Any] = {
        "days": by_day(posts, zone),
        "sends": sum(p.what == "send" for p in posts),
        "buzzes": sum(p.buzz for p in posts),
        "reposts_by_kind": dict(reposts(ledger.lines)),
        "night": sum(p.buzz and night.period(p.at) is not None for p in posts),
        "night_by_day": Counter(day_of(p.at, zone) for p in posts if p.buzz and night.period(p.at) is not None),
        "summaries": [p.at for p in posts if p.what == "send" and p.kind == "summary"],
        "calls": [p.at for p in posts if p.what == "send" and p.kind == "rest"],
        "rest_minutes": rest / 60,
        "quiet_hours": quiet_hours,
        "inside_quiet": sum(p.buzz and quiet.period(p.at) is not None for p in posts) if quiet else None,
        "grace_minutes": grace / 60,
        "moments": {
            "release": tally(offers(ledger.lines), rang, noted, "release", night, checks[-1] if checks else 0.0),
            "contact": tally(found, rang, noted, "contribution", night, checks[-1] if checks else 0.0),
            "alarm": alarm_tally(all_openings, grace, alarm_buzzes, noted, night, checks, down),
        },
        "contributions": {"shown": shown, "threads": threads},
        "episodes": _episodes(steps, alarm_buzzes, grace, noted),
    }
    figures["reposts"] = sum(figures["reposts_by_kind"].values())
    if quiet is None and rest == 0:
        figures.update(_graces(steps, all_openings, grace, checks, down, posts))
    return figures


def _alarm_buzzes(posts: Sequence[Post], lines: Sequence[Line]) -> dict[str, list[float]]:
    """ref -> when its messages buzzed (an alarm's messages are the ones its head named)."""
    alarm_of = {}
    for line in lines:
        head = ALARM_HEAD.fullmatch(line.key) if line.what == "save" and not line.item else None
        message_id = (line.data.get("message") or {}).get("id") if head else None
        if head and isinstance(message_id, int):
            alarm_of[message_id] = head.group(1)
    found: dict[str, list[float]] = defaultdict(list)
    for p in posts:
        if p.buzz and p.message_id in alarm_of:
            found[alarm_of[p.message_id]].append(p.at)
    return dict(found)


def _episodes(steps: Sequence[Step], alarm_buzzes: Mapping[str, list[float]], grace: float,
              noted: Mapping[str, list[Kept]]) -> dict[str, int]:
    """The times a repository went red: in all; buzzed on its own message; else kept for a call or a summary
    while red (`kept`); cleared within the grace without either; red longer and neither (each of its failures
    closed within its own grace, or Telegram was down)."""
    red = episodes(steps)
    buzzed = [any(s <= t <= c for t in alarm_buzzes.get(ref, [])) for ref, s, c in red]
    kept = [not b and any(s <= k.at <= c for k in noted.get(f"alarm:{ref}", []))
            for b, (ref, s, c) in zip(buzzed, red, strict=True)]
    rest = [(c - s, b or k) for b, k, (_, s, c) in zip(buzzed, kept, red, strict=True)]
    return {"n": len(red), "buzzed": sum(buzzed), "kept": sum(kept),
            "quiet_within_grace": sum(not heard and length <= grace for length, heard in rest),
            "quiet_longer": sum(not heard and length > grace for length, heard in rest)}


def _graces(steps: Sequence[Step], all_openings: Sequence[Opening], grace: float, checks: Sequence[float],
            down: Sequence[tuple[float, float]], posts: Sequence[Post]) -> dict[str, Any]:
    """The grace table, the flakes' durations, and the model at the replay's own grace against the chat."""
    model = {g: grace_buzzes(steps, g * 60.0, checks, down) for g in sorted({*GRACES, round(grace / 60)})}
    own = [b.at for b in model[round(grace / 60)]]
    phone = [p.at for p in posts if p.buzz and p.kind == "alarm"]
    flakes = sorted(o.closed - o.at for o in all_openings if o.closed - o.at <= FLAKE_SECONDS)
    return {"grace": [grace_row(model[g], all_openings, g) for g in GRACES],
            "flakes": {"n": len(flakes), "median": _median(flakes), "min": min(flakes, default=None),
                       "max": max(flakes, default=None)},
            "model": {"buzzes": len(own), "phone": len(phone), "same_times": own == phone}}
