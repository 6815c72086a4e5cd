"""Attention: for every message pager sends or edits, whether the phone buzzes, and why (SPEC §6.1).

A message buzzes (it is sent without `disable_notification`) only when a person should act or know now;
everything else arrives without a sound. Telegram notifies of new messages only, never of an edit: a
moment that must buzz on a thing already shown reposts its message (a new message with a sound, the old
one deleted), so that the chat still holds one message per thing. docs/attention.md is this table in
prose; a test holds the two together.

    Urgency      how soon a moment calls: now (whatever buzzed before), soon (it may wait for the phone's rest to
                 end), or silent
    MOMENTS      every moment pager sends or edits a message for: send, repost or edit; its urgency; why
    Volume       what turns a buzz down for one repository now: a mute (of the repository, or of the thread a
                 contribution is in), quiet hours, the phone's rest
    Sound        what a moment comes to: a buzz, silence, or silence kept for a summary (the quiet hours', or
                 the call at the end of the phone's rest)
    QuietHours   QUIET_HOURS in TIMEZONE, which may wrap midnight: inside them nothing buzzes, and what
                 would have buzzed is kept for one summary that buzzes when they end
    rest_of      BUZZ_GAP_MINUTES: after a call (any buzz but pager's own health) the phone rests; a moment of
                 soon urgency that would buzz meanwhile arrives silently and is kept for one call when the rest
                 ends, so a busy hour calls once, not once a message; a moment of urgency now buzzes all the same
    grace        ALARM_GRACE_MINUTES: an alarm's entry buzzes only once it is still red past its grace
    again_at     NOW_AGAIN_SECONDS: an alarm that buzzed is not buzzed again within the hour (a flapping
                 repository rings once an hour at most); what opened meanwhile buzzes when the hour ends

Pure: settings, records and `now` in, decisions out. What is kept in the table for it (mutes, the
summary's notes, when an alarm comes due) is `pager.attention_store`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from enum import StrEnum

FOLLOW_UP_SECONDS = 3600  # a further contribution in a thread within this long of its last buzz is silent
NOW_AGAIN_SECONDS = 3600  # an alarm that buzzed buzzes again, for something new, no sooner than this
CHECK_SLACK = 120.0  # the every-minute check's own delay: a rest ending this close to quiet hours is in them


class Moment(StrEnum):
    CONTACT = "contact"
    FOLLOW_UP = "follow-up"
    EDITED = "edited"
    CONTRIBUTION_CLOSED = "contribution closed"
    CONTRIBUTION_REOPENED = "contribution reopened"
    ALARM_OPENED = "alarm opened"
    ALARM_RED = "alarm red"
    ALARM_CHANGED = "alarm changed"
    ALARM_CLEAR = "alarm clear"
    ALARM_SEEN = "alarm seen"
    FIX_STARTED = "fix started"
    RELEASE_OPENED = "release opened"
    RELEASE_WAITING = "release waiting"
    RELEASE_READY = "release ready"
    RELEASE_DONE = "release done"
    HEALTH = "health"
    HEALTH_CHANGED = "health changed"
    SUMMARY = "summary"
    ANSWER = "answer"


class Urgency(StrEnum):
    """How soon a moment calls (SPEC §6.1, amended 2026-12-07), as a pager pages: not in one queue."""

    NOW = "now"  # buzzes when it happens (an alarm: when its grace ends), whatever buzzed before
    SOON = "soon"  # may wait for one call at the end of the phone's rest (BUZZ_GAP_MINUTES)
    SILENT = "silent"  # never buzzes


@dataclass(frozen=True)
class Rule:
    message: str  # what pager does with the chat: send, repost (send anew, delete the old one) or edit
    urgency: Urgency
    why: str
    rests: bool = False  # its buzz is a call after which the phone rests

    @property
    def buzz(self) -> bool:
        return self.urgency is not Urgency.SILENT

    @property
    def waits(self) -> bool:
        """While the phone rests, kept for the call at the rest's end."""
        return self.urgency is Urgency.SOON


MOMENTS: Mapping[Moment, Rule] = {
    Moment.CONTACT: Rule("send (a reply in its thread)", Urgency.SOON,
                         "someone from outside opened, commented or reviewed: they wait for an answer, but an hour "
                         "of waiting breaks nothing", rests=True),
    Moment.FOLLOW_UP: Rule("send (a reply in its thread)", Urgency.SILENT,
                           "the same thread buzzed less than an hour ago: the phone already called"),
    Moment.EDITED: Rule("send (a reply in its thread)", Urgency.SILENT,
                        "its author from outside changed what they wrote: there for when you read the thread"),
    Moment.CONTRIBUTION_CLOSED: Rule("edit", Urgency.SILENT, "closed, merged or answered: nothing is left to do"),
    Moment.CONTRIBUTION_REOPENED: Rule("edit", Urgency.SILENT,
                                       "reopened: shown open again, with its 🔕; what comes next in it calls as ever"),
    Moment.ALARM_OPENED: Rule("send", Urgency.SILENT,
                              "a failure within its grace may be a flake that a rerun clears; 🛠 is there already"),
    Moment.ALARM_RED: Rule("send or repost", Urgency.NOW,
                           "the default branch is still red past its grace, or a new thing fails in it past its own: "
                           "every deploy and pull request meets it until someone looks", rests=True),
    Moment.ALARM_CHANGED: Rule("edit", Urgency.SILENT, "an entry updated or closed while others stay red"),
    Moment.ALARM_CLEAR: Rule("edit", Urgency.SILENT, "all clear: nothing to do"),
    Moment.ALARM_SEEN: Rule("edit", Urgency.SILENT,
                            "someone said they look at it (👀): it is not called again until something new fails"),
    Moment.FIX_STARTED: Rule("edit", Urgency.SILENT, "the person who pressed 🛠 knows"),
    Moment.RELEASE_OPENED: Rule("send", Urgency.SILENT, "nothing to do until its checks pass"),
    Moment.RELEASE_WAITING: Rule("edit", Urgency.SILENT, "a new head, a refusal: it waits for its checks again"),
    Moment.RELEASE_READY: Rule("repost", Urgency.SOON,
                               "its checks passed and GitHub would merge it: 🔀 Merge is one press, and nothing breaks "
                               "while it waits", rests=True),
    Moment.RELEASE_DONE: Rule("edit", Urgency.SILENT, "merged, closed or tagged: nothing is left to do"),
    Moment.HEALTH: Rule("send or repost", Urgency.NOW,
                        "pager itself needs the maintainer (once per entry): pages may be lost otherwise; it leaves "
                        "the phone's rest as it was"),
    Moment.HEALTH_CHANGED: Rule("edit", Urgency.SILENT, "an entry of pager's own health updated or closed"),
    Moment.SUMMARY: Rule("send, or the one thing's own message anew", Urgency.SOON,
                         "quiet hours or the phone's rest are over and something kept needs the maintainer", rests=True),
    Moment.ANSWER: Rule("send (a reply to the command or the message pressed)", Urgency.SILENT,
                        "the person who asked is looking at the chat"),
}


@dataclass(frozen=True)
class Sound:
    """What one moment comes to: `buzz`, and why; `period`: silent now, and kept for the summary at the end
    of that period (its start and end: quiet hours, or the phone's rest); `rests`: a buzz after which the
    phone rests."""

    buzz: bool
    why: str
    period: tuple[float, float] | None = None
    rests: bool = False

    @property
    def summary(self) -> bool:
        return self.period is not None

    def to_data(self) -> dict[str, object]:
        kept = {"summary": True, "period": list(self.period)} if self.period else {}
        return {"buzz": self.buzz, "why": self.why, **kept}


@dataclass(frozen=True)
class Volume:
    """What turns a buzz down for one repository at one moment: a mute (until when), quiet hours (the period
    the moment is in), the phone's rest (`rest_of`: the period it rests in now); for a contribution, a mute
    of its thread alone (`thread_muted_until`), the rest of the repository buzzing as ever."""

    muted_until: float | None = None
    quiet: tuple[float, float] | None = None
    rest: tuple[float, float] | None = None
    thread_muted_until: float | None = None

    def sound(self, moment: Moment) -> Sound:
        rule = MOMENTS[moment]
        if not rule.buzz:
            return Sound(False, rule.why)
        if self.muted_until is not None:
            return Sound(False, "the repository is muted: silent, never lost")
        if self.thread_muted_until is not None:
            return Sound(False, "the thread is muted: silent, never lost")
        if self.quiet is not None:
            return Sound(False, "quiet hours: kept for the summary at their end", period=self.quiet)
        if rule.waits and self.rest is not None:
            return Sound(False, "the phone called a moment ago: kept for its next call", period=self.rest)
        return Sound(True, rule.why, rests=rule.rests)


def period_of(sound: Mapping[str, object]) -> tuple[float, float] | None:
    """The quiet period a recorded sound (`Sound.to_data`) is kept for, if any."""
    period = sound.get("period")
    if isinstance(period, list) and len(period) == 2 and all(isinstance(t, (int, float)) for t in period):
        return float(period[0]), float(period[1])
    return None


LOUD = Volume()


def rest_of(called_at: float | None, gap: float, now: float, quiet: QuietHours | None) -> tuple[float, float] | None:
    """The phone's rest `now` is in: from the last call (`called_at`) for `gap` seconds; None when it is not
    resting. A rest that ends inside quiet hours (or so close before them that its call would come inside)
    lasts to their end, so that one summary calls for both."""
    if called_at is None or gap <= 0 or not called_at <= now < called_at + gap:
        return None
    night = quiet.period(called_at + gap + CHECK_SLACK) if quiet is not None else None
    return (night[0], night[1]) if night is not None else (called_at, called_at + gap)


# -- quiet hours ------------------------------------------------------------------------------------------

QUIET_FORM = re.compile(r"([01][0-9]|2[0-3]):([0-5][0-9])-([01][0-9]|2[0-3]):([0-5][0-9])")


@dataclass(frozen=True)
class QuietHours:
    """From `start` to `end` on a clock in `zone`, every day; an end before the start wraps midnight."""

    start: time
    end: time
    zone: tzinfo

    @classmethod
    def parse(cls, value: str, zone: tzinfo) -> QuietHours | None:
        """`HH:MM-HH:MM`; None for "" (no quiet hours). ValueError for anything else, or a start equal to the end."""
        if not value:
            return None
        found = QUIET_FORM.fullmatch(value.strip())
        if found is None:
            raise ValueError("quiet hours are HH:MM-HH:MM")
        start, end = time(int(found[1]), int(found[2])), time(int(found[3]), int(found[4]))
        if start == end:
            raise ValueError("quiet hours must start and end at different times")
        return cls(start, end, zone)

    def _period(self, day: date) -> tuple[float, float]:
        """The quiet period that starts on `day` (local), as epoch seconds."""
        return (_moment(day, self.start, self.zone),
                _moment(day if self.end > self.start else day + timedelta(days=1), self.end, self.zone))

    def _periods(self, now: float) -> list[tuple[float, float]]:
        today = datetime.fromtimestamp(now, tz=self.zone).date()
        return [self._period(today + timedelta(days=d)) for d in (-2, -1, 0, 1)]

    def period(self, now: float) -> tuple[float, float] | None:
        """The quiet period `now` is in (its start and end), or None."""
        return next(((s, e) for s, e in self._periods(now) if s <= now < e), None)

    def next_start(self, now: float) -> float:
        return min(s for s, _ in self._periods(now) if s > now)


def _moment(day: date, at: time, zone: tzinfo) -> float:
    """When the clock in `zone` shows `at` on `day` (the first time, on the night the clocks go back); a time
    the clock skips (the night they go forward) comes when the clock jumps past it."""
    shown = datetime.combine(day, at, tzinfo=zone)
    late, early = shown.timestamp(), shown.replace(fold=1).timestamp()
    if early >= late:  # a time the clock shows (once, or twice: the first)
        return late
    after = shown.replace(fold=1).utcoffset()  # skipped: the jump lies between the two readings (whole seconds)
    before, jumped = int(early), int(late)
    while jumped - before > 1:  # halved each time, to the second of the jump
        middle = (before + jumped) // 2
        before, jumped = (before, middle) if datetime.fromtimestamp(middle, zone).utcoffset() == after else (middle, jumped)
    return float(jumped)


# -- an alarm's grace ---------------------------------------------------------------------------------------
#
# An alarm keeps one time, `heard`: every opening of an entry at or before it has buzzed (or came past its
# grace while the repository was muted or in quiet hours, which counts the same). An opening after it buzzes
# once it is still open `grace` seconds later. One number, whatever the number of entries: a thousand open
# alerts do not grow the alarm's record.


def ripe(openings: Mapping[str, float], heard: float | None, grace: float, now: float) -> list[str]:
    """Of an alarm's open entries (key -> when it opened), those past their grace that have not buzzed yet."""
    return sorted(k for k, at in openings.items() if (heard is None or at > heard) and at + grace <= now)


def heard_after(heard: float | None, grace: float, now: float) -> float:
    """`heard` once a render at `now` buzzed for (or let pass) every opening past its grace."""
    return max(heard if heard is not None else now - grace, now - grace)


def again_at(called: float | None, now: float) -> float | None:
    """When an alarm that last buzzed at `called` may buzz again (NOW_AGAIN_SECONDS later), or None when it
    may now: a flapping repository rings once an hour at most, and what opened meanwhile waits for the hour."""
    if called is None or not 0 <= now - called < NOW_AGAIN_SECONDS:
        return None
    return called + NOW_AGAIN_SECONDS


def due(openings: Mapping[str, float], heard: float | None, grace: float) -> float | None:
    """When the next opening of an alarm's entries comes past its grace without having buzzed (None: none)."""
    return min((at + grace for at in openings.values() if heard is None or at > heard), default=None)
