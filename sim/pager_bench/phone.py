"""What the maintainer's phone lives through in a replay: pager.attention at work, measured.

Two sources, both written as the replay goes (`Ledger`, `FakeTelegram.history` and `buzzes`):
- the chat: every send, edit and delete of the bot's, with its time and the message's first line, and
  every message sent with a sound (a buzz). A message's kind is what its first line starts with when it
  is sent (`KINDS`); an answer to a command is a reply to a person's message;
- the table (`Ledger`): each write of an alarm's head and entries (a repository's, and pager's own health,
  `alarm#control`), of a release's and a contribution's record, of a call's record and its notes
  (`summary#<start>`) and of the every-minute check's index, and each load of a repository alarm's head
  (a render: `alarm.render_now` settles on the head, and nothing else loads it in a replay, where nobody
  presses 🛠 or 👀), with the function that made it (the webhook, or the sweep function's every-minute check).

Folded (`observe`, pure once the facts are read) into:
- sends, buzzes, edits and deletes (the old message of a repost) per day of the maintainer's clock, by kind;
- buzzes at night (`NIGHT`, on the maintainer's clock);
- the calls at the end of a quiet period (the phone's rest, quiet hours), from their records (`calls_of`): one
  📬/🌅 message, the one thing's own message posted anew (a send with a sound, the old one deleted), or
  nothing left to call for; sent with a sound, or silently right after a call (a moment of urgency now that
  ended the rest early: then that buzz is the call, `Call.rang`);
- the moments of pager.attention.MOMENTS that call, by urgency. Now: a repository alarm's failure still red
  when its grace ended (the moment: its opening plus ALARM_GRACE_MINUTES), pager's own health (an entry of
  alarm#control opening). Each is followed in the alarm's head (`Head`): the first write whose `heard` reaches
  the opening heard it, with a buzz (the head's `called` set then, its message sent with a sound) or kept for
  a call (quiet hours); a failure that closed before any render heard it did so between two checks, while
  Telegram was down, or while the repository's last buzz held it (NOW_AGAIN_SECONDS), else it was lost.
  Soon: an outsider's first contact (a contribution shown in a thread that has not buzzed or been kept within
  the hour, the first one of a thread included) and a release offered 🔀 Merge (its record starts offering
  it). Each buzzed on its own (the message it was shown in was sent with a sound), or was kept for a call (a
  note of it in `summary#<start>`) that held it, or that no longer needed it; else it was lost. The wait runs
  from the moment to the buzz that called it;
- the first line of every message that buzzed and of every 📬/🌅 message, its visible length
  (`pager.html.visible_length`: what a phone's notification shows);
- the times a repository went red (its alarm's episodes: from a first failure to the all clear);
- the grace table (`grace_row`): what ALARM_GRACE_MINUTES of 0, 5, ... 30 would have done in the same
  week, computed from this one replay (`grace_buzzes`, below).

`grace_buzzes` replays decide_render's rule on the alarm's history: the entries' openings and closings and
the renders the deliveries made (the same whatever the grace), in the order the table saw them, and the
every-minute check's renders (which depend on the grace: the check renders an alarm whose index says it is
due, an entry past its grace that has not buzzed, and not within the hour of the alarm's last buzz). A
render rings for the openings past their grace that have not rung, unless the alarm rang within the hour
(NOW_AGAIN_SECONDS): then it rings when that hour ends. A render that changes the message while Telegram is
down fails and changes nothing (the index keeps what it said). The phone's rest does not change an alarm's
buzzes (their urgency is now), quiet hours do (the model knows none). At the replay's own grace it must give
the chat's alarm buzzes, one for one and at the same times: `observe` says whether it does.
"""

from __future__ import annotations

import bisect
import html
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any, NamedTuple

from pager.attention import FOLLOW_UP_SECONDS, NOW_AGAIN_SECONDS, QuietHours, period_of
from pager.html import visible_length
from pager.signals.release import offers_merge
from pager.store import MemoryStore, Record, Write
from pager_world.store import key_kind
from pager_world.telegram import FakeTelegram

NIGHT = "22:00-07:00"  # the maintainer's night, on their clock: buzzes in it are counted, and quiet hours set to it
GRACES = (0, 5, 10, 15, 20, 30)  # minutes: the grace table's rows
GAPS = (0, 15, 30, 45, 60, 75, 90, 105, 120, 150)  # minutes: the rest table's rows (BUZZ_GAP_MINUTES)
FLAKE_SECONDS = 1800.0  # a failure closed within this long of its opening is a flake a rerun cleared
FIRST_LINE = 80  # visible characters of a call's first line: what a phone's notification shows (SPEC §6.1)
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
ALARM_HEAD = re.compile(r"alarm#(\d+)")  # a repository's alarm
HEALTH_HEAD = re.compile(r"alarm#(control)")  # pager's own health
ENTRY_ITEM = "entry:"
CALL_FORMS = ("message", "own", "after")  # a call's 📬/🌅 message; the thing's own message anew; silent, after a now buzz


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
        self._note(record, saved.data)
        return saved

    def save_all(self, writes: Sequence[Write]) -> None:
        kept = {w.where for w in writes if w.once and MemoryStore.load(self, *w.where).exists}  # a note kept once stays
        super().save_all(writes)
        for w in writes:
            if w.data is not None and w.where not in kept:
                self._note(w.record, w.data)

    def _note(self, record: Record, data: dict[str, Any]) -> None:
        kind = key_kind(record.key)
        if kind in self.NOTED and (not record.item or kind == "summary" or record.item.startswith((ENTRY_ITEM, "summary:"))):
            self.lines.append(Line("save", self.clock(), record.key, record.item, data, self.function()))


# ------------------------------------------------------------------------------------------ the chat


class Post(NamedTuple):
    what: str  # send, edit or delete
    message_id: int
    at: float
    kind: str
    buzz: bool
    first: str = ""  # the message's first line then (HTML, as sent)


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
        posts.append(Post(what, message_id, at, kinds.get(message_id, OTHER), what == "send" and message_id in rang,
                          first))
    return posts


def rang_at(posts: Iterable[Post]) -> dict[int, float]:
    """message id -> when it was sent with a sound."""
    return {p.message_id: p.at for p in posts if p.buzz}


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
    `heard` (decide_render's: every opening until then buzzed), when it last buzzed (`called`, kept across its
    all clear), what the message shows, the index's due."""

    entries: dict[str, tuple[float, Any]] = field(default_factory=dict)  # key -> (opened at, what is shown of it)
    showing: bool = False
    heard: float | None = None
    called: float | None = None
    shown: Any = None
    due: float | None = None


class Buzz(NamedTuple):
    at: float
    ref: str
    heard: tuple[tuple[str, float], ...]  # the openings it buzzed for: (entry key, opened at)


Step = tuple  # ("open", at, ref, key, opened, shown) | ("close", at, ref, key) | ("render", at, ref, function)


def alarm_steps(lines: Iterable[Line], head: re.Pattern[str] = ALARM_HEAD) -> list[Step]:
    """A repository alarm's history from the table's lines, in order (with HEALTH_HEAD, pager's own health's)."""
    steps: list[Step] = []
    for line in lines:
        found = head.fullmatch(line.key)
        if found is None:
            continue
        ref = found.group(1)
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


def _within_hour(called: float | None, at: float) -> bool:
    """Whether an alarm that last buzzed at `called` is still within its hour at `at` (pager.attention.again_at)."""
    return called is not None and 0 <= at - called < NOW_AGAIN_SECONDS


def _render(alarm: _Alarm, ref: str, at: float, grace: float, down: bool) -> Buzz | None:
    """decide_render's rule (`alarm.ring`), and what the render leaves in the check's index (`alarm.due_of`)."""
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
    rings = bool(ripe) and not _within_hour(alarm.called, at)  # not within the hour of its last buzz
    shown = dict(alarm.entries)
    if down and (rings or not alarm.showing or shown != alarm.shown):
        return None  # a send, repost or edit while Telegram is down: nothing changes
    if rings:
        heard = max(heard if heard is not None else at - grace, at - grace)
        alarm.called = at
    alarm.showing, alarm.heard, alarm.shown = True, heard, shown
    due = min((opened + grace for opened, _ in alarm.entries.values() if heard is None or opened > heard), default=None)
    if due is not None and alarm.called is not None:
        due = max(due, alarm.called + NOW_AGAIN_SECONDS)  # it rings when the hour of its last buzz ends
    alarm.due = due
    return Buzz(at, ref, ripe) if rings else None


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


def _message_id(data: Mapping[str, Any]) -> int | None:
    """The message a record names: an alarm's head in `message`, a release's or a contribution's in `message_id`."""
    message = data.get("message")
    found = message.get("id") if isinstance(message, Mapping) else data.get("message_id")
    return found if isinstance(found, int) else None


def reposts(lines: Iterable[Line]) -> Counter[str]:
    """Messages sent anew in place of one still shown, by kind: an alarm's head (pager's own health for
    alarm#control), or a release's record, that names a new message while the one before was still shown
    (an alarm's until its all clear); not a call's, which posts the one thing it holds anew (`calls_of`)."""
    shown: dict[str, Any] = {}
    count: Counter[str] = Counter()
    for line in lines:
        kind = key_kind(line.key)
        if line.what != "save" or line.item or kind not in ("alarm", "release"):
            continue
        if kind == "alarm":
            message = line.data.get("message") or {}
            now = (message.get("id"), bool(message.get("open")), line.data.get("called_for"))
            kind = "alarm" if ALARM_HEAD.fullmatch(line.key) else "health"
        else:
            now = (line.data.get("message_id"), line.data.get("message_id") is not None, line.data.get("called_for"))
        before = shown.get(line.key)
        moved = before is not None and before[1] and now[0] is not None and now[0] != before[0]
        count[kind] += moved and now[2] == before[2]  # a new `called_for`: the call posted it anew
        shown[line.key] = now
    return +count


# ------------------------------------------------------------------------------------------ calls


class Call(NamedTuple):
    """A call at the end of a quiet period (the phone's rest, quiet hours), as its record `summary#<start>`
    says it went: `form` "message" (one 📬/🌅 message), "own" (the one thing it held, its own message posted
    anew: `alone`, that record's key) or "nothing" (nothing it kept needed the maintainer any more); when it
    was sent, whether with a sound (`loud`), and when the phone rang for it (`rang`): its own buzz, or for one
    sent silently the call just before it (a moment of urgency now that ended the rest early, or a contact
    just after the rest's end), whose kind is `by`. `text`: a 📬/🌅 message's full text."""

    start: float
    at: float
    form: str
    message_id: int | None = None
    loud: bool = False
    rang: float | None = None
    by: str = ""
    alone: str = ""
    text: str = ""

    @property
    def how(self) -> str:
        """How it called: its 📬/🌅 message, the thing's own message anew, or silently after the buzz before."""
        return "after" if not self.loud else self.form


def _start_of(key: str) -> float:
    """A call's period start from its record's key (`summary#<ISO time>`)."""
    return datetime.fromisoformat(key.split("#", 1)[1].replace("Z", "+00:00")).timestamp()


def calls_of(lines: Sequence[Line], posts: Sequence[Post], texts: Mapping[int, str] | None = None) -> dict[float, Call]:
    """period start -> its call (the module docstring); `texts`: the chat's messages' full texts by id."""
    sent_at = {p.message_id: p.at for p in posts if p.what == "send"}
    rang = rang_at(posts)
    called = sorted((p.at, p.kind) for p in posts if p.buzz and p.kind != "health")  # pager's own health never rests
    times = [t for t, _ in called]
    moved: dict[tuple[str, int], int | None] = {}  # (record, its period's start) -> the message a call posted anew
    for line in lines:
        period = line.data.get("called_for") if line.what == "save" and not line.item else None
        if isinstance(period, (int, float)) and (line.key, int(period)) not in moved:
            moved[(line.key, int(period))] = _message_id(line.data)
    found: dict[float, Call] = {}
    for line in lines:
        sent = line.data.get("sent")
        if line.what != "save" or line.item or key_kind(line.key) != "summary" or not sent:
            continue
        start = _start_of(line.key)
        if start in found:
            continue
        if sent == "nothing" or not isinstance(sent, Mapping):
            found[start] = Call(start, line.at, "nothing")
            continue
        alone = str(sent.get("alone") or "")
        message_id = moved.get((alone, int(start))) if alone else sent.get("message_id")
        at = sent_at.get(message_id, line.at) if isinstance(message_id, int) else line.at
        loud = message_id in rang
        k = bisect.bisect_right(times, at)  # the calls until it, its own included
        before = called[k - 1] if not loud and k > 0 else None
        found[start] = Call(start, at, "own" if alone else "message", message_id if isinstance(message_id, int) else None,
                            loud, at if loud else before[0] if before else None, before[1] if before else "",
                            alone, (texts or {}).get(message_id, "") if isinstance(message_id, int) else "")
    return found


def periods_of(lines: Iterable[Line]) -> dict[int, tuple[float, float]]:
    """A period's start in whole seconds (as its call's record is keyed) -> (start, end) as the check's index last
    held it (a rest cut short ends at the buzz that cut it)."""
    periods: dict[int, tuple[float, float]] = {}
    for line in lines:
        if line.what == "save" and line.key == "attention" and line.item.startswith("summary:") and "end" in line.data:
            periods[int(float(line.data["start"]))] = (float(line.data["start"]), float(line.data["end"]))
    return periods


class Kept(NamedTuple):
    """A note kept for a call (of quiet hours, or at the end of the phone's rest): the moment it keeps (the
    note's `at`), the period it is kept for, its call (None: none was sent), and whether that call held it
    (`listed`): it is the one thing posted anew, or its 📬/🌅 message links it or counts it among more."""

    at: float
    period: tuple[float, float]
    call: Call | None = None
    listed: bool = False

    @property
    def called(self) -> float | None:
        """When the phone rang for it; None when no call held it."""
        return self.call.rang if self.call is not None and self.listed else None


def _lists(call: Call, note: Mapping[str, Any]) -> bool:
    """Whether a call held the note: the thing posted anew is its record; a 📬/🌅 message links it, names it, or
    counts it among the things it does not list one by one."""
    if call.form == "own":
        return str(note.get("message") or "") == call.alone
    if call.form != "message":
        return False
    if not call.text:
        return True  # a message deleted since (none is): taken at its word
    url, label = str(note.get("url") or ""), str(note.get("label") or "")
    href = html.escape(url, quote=False).replace('"', "&quot;")
    return bool(url and f'href="{href}"' in call.text) or bool(label and html.escape(label, quote=False) in call.text) \
        or call.text.rsplit("\n", 1)[-1].startswith("… and ")


def notes(lines: Sequence[Line], calls: Mapping[float, Call] | None = None) -> dict[str, list[Kept]]:
    """What the calls kept: `<kind>:<thing>` -> each note, with its period and its call (`calls_of`)."""
    periods = periods_of(lines)
    found: dict[str, list[Kept]] = defaultdict(list)
    for line in lines:
        if line.what != "save" or key_kind(line.key) != "summary" or not line.item:
            continue
        start = _start_of(line.key)
        call = (calls or {}).get(start)
        found[line.item].append(Kept(float(line.data.get("at") or line.at), periods.get(int(start), (start, start)), call,
                                     call is not None and _lists(call, line.data)))
    return dict(found)


def _fate(kept: Sequence[Kept], end: float) -> tuple[str, Kept | None]:
    """What became of a moment kept for a call, by the replay's `end`: called (and by which note's call),
    resolved (its call came and no longer needed it), pending (its period ends after the replay), or
    uncalled (lost)."""
    held = next((k for k in kept if k.listed), None)
    if held is not None:
        return "called", held
    if any(k.call is not None for k in kept):
        return "resolved", None
    return ("pending" if kept and all(k.period[1] > end for k in kept) else "uncalled"), None


def _kept_for(kept: Sequence[Kept], period: tuple[float, float] | None, at: float) -> list[Kept]:
    """Of a thing's notes, those of a moment kept at `at` for `period`: its period's (by its start: a rest cut
    short keeps it), else the first later one it was kept for instead (its period's call was under way)."""
    if period is None:
        return []
    mine = [k for k in kept if int(k.period[0]) == int(period[0])]
    later = sorted((k for k in kept if int(period[0]) < int(k.period[0]) <= max(at, k.at) + 60), key=lambda k: k.period[0])
    return mine + later[:1]


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
    thread that had not buzzed, nor been kept for a call, within FOLLOW_UP_SECONDS (pager.attention: a
    follow-up is silent; `contribution.thread_after`); and how many contributions were shown in all, in how
    many threads."""
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
        if sound.get("buzz") or sound.get("summary"):
            last[thread] = at
        threads.add(thread)
    return found, shown, len(threads)


def _counts() -> dict[str, int]:
    return dict.fromkeys(("n", "night", "buzzed", "kept", "called", *CALL_FORMS, "resolved", "pending", "uncalled",
                          "silent"), 0)


def _called(counts: dict[str, int], kept: Kept | None, at: float, waits: list[float], kept_waits: list[float]) -> None:
    """Count a moment its call held: by how it called, and its wait to the buzz that called it."""
    if kept is None or kept.call is None or kept.called is None:
        return
    counts["called"] += 1
    counts[kept.call.how] += 1
    waits.append(kept.called - at)
    kept_waits.append(kept.called - at)


def tally(moments: Iterable[Moment], rang: Mapping[int, float], noted: Mapping[str, list[Kept]], kind: str,
          night: QuietHours, end: float) -> dict[str, Any]:
    """Moments of urgency soon: in all, at night, buzzed on their own, kept for a call (of the phone's rest, or of
    quiet hours) and of them called (by its 📬/🌅 message, by their own message posted anew, or right after a now
    buzz that ended the rest: `Call.how`), no longer needed by their call, pending at the replay's `end`, or never
    called; silent (neither buzzed nor kept: lost); the waits from the moment to the buzz that called it (of
    all, and of the kept ones)."""
    counts = _counts()
    waits: list[float] = []
    kept_waits: list[float] = []
    for m in moments:
        counts["n"] += 1
        counts["night"] += night.period(m.at) is not None
        thing = "#".join(m.thing.split("#")[:4]) if kind == "contribution" else m.thing  # a contribution's note: its thread's
        kept = _kept_for(noted.get(f"{kind}:{thing}"[:200], []), period_of(m.sound), m.at)
        if m.message_id in rang:
            counts["buzzed"] += 1
            waits.append(rang[m.message_id] - m.at)
        elif m.sound.get("summary") and kept:
            counts["kept"] += 1
            fate, held = _fate(kept, end)
            counts[fate] += fate != "called"
            _called(counts, held, m.at, waits, kept_waits)
        else:
            counts["silent"] += 1
    return {**counts, "lost": counts["uncalled"] + counts["silent"], "waits": sorted(waits),
            "kept_waits": sorted(kept_waits)}


class Head(NamedTuple):
    """A write of an alarm's head: when, its `heard` (every opening until then rang or was kept), when it last
    rang (`called`), and the message it names."""

    at: float
    heard: float | None
    called: float | None
    message_id: int | None


def heads(lines: Iterable[Line], head: re.Pattern[str] = ALARM_HEAD) -> dict[str, list[Head]]:
    """ref -> every write of its head, in order."""
    found: dict[str, list[Head]] = defaultdict(list)
    for line in lines:
        matched = head.fullmatch(line.key) if line.what == "save" and not line.item else None
        if matched is None:
            continue
        heard, called = line.data.get("heard"), line.data.get("called")
        found[matched.group(1)].append(Head(line.at, float(heard) if isinstance(heard, (int, float)) else None,
                                            float(called) if isinstance(called, (int, float)) else None,
                                            _message_id(line.data)))
    return dict(found)


def alarm_tally(all_openings: Iterable[Opening], grace: float, written: Mapping[str, list[Head]], rang: Mapping[int, float],
                noted: Mapping[str, list[Kept]], night: QuietHours, checks: Sequence[float],
                down: Sequence[tuple[float, float]], kind: str = "alarm") -> dict[str, Any]:
    """Moments of urgency now: an alarm's failure still red when its grace ended (the moment: its grace's end; for
    pager's own health, `kind` "health", the grace is 0), in all, at night, and whether its repository's alarm had
    buzzed within the hour before it (`within_hour`, pager.attention.NOW_AGAIN_SECONDS). The head's first write
    whose `heard` reaches the opening tells what became of it: rung (its `called` then, its message sent with a
    sound: buzzed), or kept for a call (quiet hours) and then called, no longer needed, pending or never called
    (`_fate`). A failure no render heard closed before the every-minute check after its grace's end looked
    (`between_checks`), while Telegram was down from then to its closing (`telegram_down`), while the hour of
    its alarm's last buzz held it (`held`), or none of these (`silent`: lost). The waits run from the grace's end
    to the buzz that called it, split by whether its alarm had buzzed within the hour."""
    counts = {**_counts(), **dict.fromkeys(("within_hour", "between_checks", "telegram_down", "held"), 0)}
    waits: list[float] = []
    kept_waits: list[float] = []
    rings: dict[str, list[float]] = {"within_hour": [], "not_within_hour": [], "after_outage": []}
    for o in all_openings:
        due = o.at + grace
        if o.closed <= due:
            continue
        counts["n"] += 1
        counts["night"] += night.period(due) is not None
        saves = written.get(o.ref, [])
        before = saves[bisect.bisect_right([s.at for s in saves], due) - 1] if saves and saves[0].at <= due else None
        within = kind == "alarm" and before is not None and _within_hour(before.called, due)
        counts["within_hour"] += within
        heard = next((s for s in saves if due <= s.at <= o.closed and s.heard is not None and s.heard >= o.at), None)
        looked = checks[bisect.bisect_left(checks, due):bisect.bisect_left(checks, o.closed)]
        if heard is not None and heard.called is not None and heard.called >= due and heard.message_id in rang:
            counts["buzzed"] += 1
            at = rang[heard.message_id]
            waits.append(at - due)
            returned = max((e for s, e in down if s < at and e > due), default=None)  # Telegram down meanwhile
            if within:
                rings["within_hour"].append(at - due)
            elif returned is not None:
                rings["after_outage"].append(at - returned)  # from Telegram's return
            else:
                rings["not_within_hour"].append(at - due)
        elif heard is not None and (kept := [k for k in noted.get(f"{kind}:{o.ref}", [])
                                             if k.period[0] <= heard.at < max(k.period[1], k.period[0] + 1)]):
            counts["kept"] += 1
            fate, held = _fate(kept, checks[-1] if checks else 0.0)
            counts[fate] += fate != "called"
            _called(counts, held, due, waits, kept_waits)
        elif not looked:
            counts["between_checks"] += 1
        elif all(_down(down, c) for c in looked):
            counts["telegram_down"] += 1
        elif within and before is not None and before.called is not None and \
                o.closed <= before.called + NOW_AGAIN_SECONDS + (looked[1] - looked[0] if len(looked) > 1 else 60.0):
            counts["held"] += 1
        else:
            counts["silent"] += 1
    return {**counts, "lost": counts["uncalled"] + counts["silent"], "waits": sorted(waits),
            "kept_waits": sorted(kept_waits), **{f"rings_{name}": sorted(w) for name, w in rings.items()}}


def first_lines(posts: Iterable[Post]) -> dict[str, Any]:
    """The first line of every message sent with a sound and of every 📬/🌅 message, as a phone's notification
    shows it (`visible_length`): how many, the longest, and those longer than FIRST_LINE by kind, with the
    longest of each kind."""
    measured = [(visible_length(p.first), p.kind, p.first) for p in posts
                if p.what == "send" and (p.buzz or p.kind in ("summary", "rest"))]
    over = [m for m in measured if m[0] > FIRST_LINE]
    longest: dict[str, tuple[int, str]] = {}
    for length, kind, first in over:
        if length > longest.get(kind, (0, ""))[0]:
            longest[kind] = (length, _plain(first))
    return {"n": len(measured), "max": max((m[0] for m in measured), default=0), "over": len(over),
            "over_by_kind": dict(Counter(kind for _, kind, _ in over)), "longest_by_kind": longest,
            "max_by_kind": {kind: max(m[0] for m in measured if m[1] == kind) for kind in {m[1] for m in measured}}}


def _plain(first: str) -> str:
    """A first line's visible text."""
    return html.unescape(re.sub(r"<[^>]+>", "", first))


# ------------------------------------------------------------------------------------------ it all


def observe(telegram: FakeTelegram, ledger: Ledger, *, grace: float, zone: tzinfo, quiet_hours: str,
            checks: Sequence[float], down: Sequence[tuple[float, float]], rest: float = 0.0) -> dict[str, Any]:
    """A replay's figures (the module docstring); `checks` are the every-minute check's times, `down`
    Telegram's outages, `rest` BUZZ_GAP_MINUTES in seconds. The grace table only without quiet hours (the
    model knows none; the phone's rest does not change an alarm's buzzes)."""
    night = hours(NIGHT, zone)
    quiet = hours(quiet_hours, zone) if quiet_hours else None
    posts = posts_of(telegram)
    steps = alarm_steps(ledger.lines)
    all_openings = openings(steps)
    rang = rang_at(posts)
    calls = calls_of(ledger.lines, posts, {m: message.text for m, message in telegram.messages.items()})
    noted = notes(ledger.lines, calls)
    written = heads(ledger.lines)
    found, shown, threads = contacts(ledger.lines)
    end = checks[-1] if checks else 0.0
    sent_calls = [c for c in calls.values() if c.form != "nothing"]
    kinds = {p.message_id: p.kind for p in posts if p.what == "send"}
    by_call = _call_ids(calls)
    figures: dict[str, Any] = {
        "days": by_day(posts, zone),
        "sends": sum(p.what == "send" for p in posts),
        "buzzes": sum(p.buzz for p in posts),
        "reposts_by_kind": dict(reposts(ledger.lines)),
        "night": sum(p.buzz and night.period(p.at) is not None for p in posts),
        "night_by_day": Counter(day_of(p.at, zone) for p in posts if p.buzz and night.period(p.at) is not None),
        "summaries": [p.at for p in posts if p.what == "send" and p.kind == "summary"],
        "rest_calls": [p.at for p in posts if p.what == "send" and p.kind == "rest"],
        "calls": [{"at": c.at, "form": c.form, "how": c.how, "by": c.by, "loud": c.loud, "night": _night(c, quiet),
                   "kind": kinds.get(c.message_id, "") if c.message_id is not None else ""}
                  for c in sorted(sent_calls, key=lambda c: c.at)],
        "now_buzzes": sum(p.buzz and p.kind in ("alarm", "health") and p.message_id not in by_call for p in posts),
        "first_lines": first_lines(posts),
        "rest_minutes": rest / 60,
        "quiet_hours": quiet_hours,
        "inside_quiet": sum(p.buzz and quiet.period(p.at) is not None for p in posts) if quiet else None,
        "grace_minutes": grace / 60,
        "moments": {
            "alarm": alarm_tally(all_openings, grace, written, rang, noted, night, checks, down),
            "health": alarm_tally(openings(alarm_steps(ledger.lines, HEALTH_HEAD)), 0.0, heads(ledger.lines, HEALTH_HEAD),
                                  rang, noted, night, checks, down, kind="health"),
            "contact": tally(found, rang, noted, "contribution", night, end),
            "release": tally(offers(ledger.lines), rang, noted, "release", night, end),
        },
        "contributions": {"shown": shown, "threads": threads},
        "episodes": _episodes(steps, _alarm_buzzes(posts, ledger.lines, calls), grace, noted),
    }
    figures["reposts"] = sum(figures["reposts_by_kind"].values())
    figures["own_calls"] = sum(c.form == "own" for c in sent_calls)
    if quiet is None:
        figures.update(_graces(steps, all_openings, grace, checks, down, posts, ledger.lines, calls))
    return figures


def _night(call: Call, quiet: QuietHours | None) -> bool:
    """Whether a call is the one at the end of quiet hours (its period starts when they do)."""
    period = quiet.period(call.start) if quiet is not None else None
    return period is not None and period[0] == call.start


def _call_ids(calls: Mapping[float, Call]) -> set[int]:
    """The messages the calls sent: their 📬/🌅 messages and the things' own messages posted anew."""
    return {c.message_id for c in calls.values() if c.message_id is not None}


def _alarm_buzzes(posts: Sequence[Post], lines: Sequence[Line], calls: Mapping[float, Call]) -> dict[str, list[float]]:
    """ref -> when its messages rang (an alarm's messages are the ones its head named; a call that posted one
    anew is a call's, not the alarm's ring)."""
    alarm_of = {}
    for line in lines:
        head = ALARM_HEAD.fullmatch(line.key) if line.what == "save" and not line.item else None
        message_id = (line.data.get("message") or {}).get("id") if head else None
        if head and isinstance(message_id, int):
            alarm_of[message_id] = head.group(1)
    by_call = _call_ids(calls)
    found: dict[str, list[float]] = defaultdict(list)
    for p in posts:
        if p.buzz and p.message_id in alarm_of and p.message_id not in by_call:
            found[alarm_of[p.message_id]].append(p.at)
    return dict(found)


def _episodes(steps: Sequence[Step], alarm_buzzes: Mapping[str, list[float]], grace: float,
              noted: Mapping[str, list[Kept]]) -> dict[str, int]:
    """The times a repository went red: in all; buzzed on its own message; else kept for a call or a summary
    while red (`kept`); cleared within the grace without either; red longer and neither (each of its failures
    closed within its own grace, or while the hour of its last buzz held it, or Telegram was down)."""
    red = episodes(steps)
    buzzed = [any(s <= t <= c for t in alarm_buzzes.get(ref, [])) for ref, s, c in red]
    kept = [not b and any(s <= k.at <= c for k in noted.get(f"alarm:{ref}", []))
            for b, (ref, s, c) in zip(buzzed, red, strict=True)]
    rest = [(c - s, b or k) for b, k, (_, s, c) in zip(buzzed, kept, red, strict=True)]
    return {"n": len(red), "buzzed": sum(buzzed), "kept": sum(kept),
            "quiet_within_grace": sum(not heard and length <= grace for length, heard in rest),
            "quiet_longer": sum(not heard and length > grace for length, heard in rest)}


def _graces(steps: Sequence[Step], all_openings: Sequence[Opening], grace: float, checks: Sequence[float],
            down: Sequence[tuple[float, float]], posts: Sequence[Post], lines: Sequence[Line],
            calls: Mapping[float, Call]) -> dict[str, Any]:
    """The grace table, the flakes' durations, and the model at the replay's own grace against the chat."""
    model = {g: grace_buzzes(steps, g * 60.0, checks, down) for g in sorted({*GRACES, round(grace / 60)})}
    own = [b.at for b in model[round(grace / 60)]]
    phone = sorted(t for times in _alarm_buzzes(posts, lines, calls).values() for t in times)
    flakes = sorted(o.closed - o.at for o in all_openings if o.closed - o.at <= FLAKE_SECONDS)
    return {"grace": [grace_row(model[g], all_openings, g) for g in GRACES],
            "flakes": {"n": len(flakes), "median": _median(flakes), "min": min(flakes, default=None),
                       "max": max(flakes, default=None)},
            "model": {"buzzes": len(own), "phone": len(phone), "same_times": sorted(own) == phone}}
