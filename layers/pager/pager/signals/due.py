"""What comes due without an event (the every-minute check's part): an alarm whose grace ended while it
stayed red, a fix whose hold ended, and the summary at the end of quiet hours or of the phone's rest.

    tick(services, now)   one query of the check's index (`attention_store.index`); for each red alarm
                          come due, its render (which buzzes once, or notes it for the summary); for each
                          period over (quiet hours, a rest) whose summary is still to send, the summary

The call (`Moment.SUMMARY`) buzzes once per period and only if something that would have buzzed arrived
meanwhile and still needs the maintainer. It says what it holds: one thing is that thing's own message,
posted anew with a sound (`messages.decide_call`: the old one deleted, as a repost does); several are one
message whose first line counts them by kind and names where ("📬 3 new from outside · 1 release ready —
acme/lib, acme/app", at most FIRST_LINE characters), then one line per thing with its link: exactly what it
counts. Quiet hours' opens with 🌅, a rest's with 📬. It is settled on its own record (`summary#<start>`),
so a check that comes twice, or one whose send failed and the next minute's, calls once; once it called,
the phone rests again. A moment of urgency now that rings while the phone rests ends the rest there
(`attention_store.called`): what the rest kept follows in the next minute, without a sound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import tzinfo
from typing import Any

from .. import attention_store
from ..attention import LOUD, Moment, Sound
from ..engine.effects import Step
from ..engine.settle import settle
from ..errors import PagerError
from ..html import MAX_TEXT, escape, link, visible_length
from ..observe import logger
from ..services import Services
from ..words import clock, plural, units
from . import alarm, contribution, release
from .common import repo_url
from .messages import decide_call, show, shown_of

KINDS = (  # (kind of note, its emoji, how a count of them reads, and in short when the first line needs it)
    ("alarm", "🚨", ("repository red", "repositories red"), ("red", "red")),
    ("health", "⚙️", ("pager needs you", "pager needs you"), ("pager", "pager")),
    ("contribution", "💬", ("new from outside", "new from outside"), ("new", "new")),
    ("release", "🔀", ("release ready", "releases ready"), ("ready", "ready")),
)
LISTED = 20  # things a call lists, one a line; the rest are counted in one line
FIRST_LINE = 80  # visible characters of a call's first line: what a phone's notification shows


def tick(services: Services, now: float) -> dict[str, Any]:
    """Render the alarms come due, then send the calls whose quiet hours or rest are over (a call that comes in
    the minute an alarm rang follows it without a sound: the phone just called); what it did."""
    index = attention_store.index(services)
    rendered, summaries = [], []
    for red in index.red:
        if red.due is None or red.due > now:
            continue
        try:
            rendered.append(f"{red.repository}: " + alarm.render_now(services, alarm.Alarm(red.ref, red.repository, red.branch)))
        except PagerError as exc:  # the next minute tries again: the index still says it is due
            logger.warning("alarm not rendered when due", extra={"alarm": red.ref, "error": type(exc).__name__, "reason": str(exc)})
    quiet = services.settings.quiet
    night = quiet.period(now) if quiet is not None else None
    call = attention_store.last_call(services) if index.summaries else None
    for start, end in index.summaries:
        ends = attention_store.rest_ended(start, end, call)  # a rest a moment of urgency now ended early
        if ends > now or (night is not None and (start, end) != night and night[0] <= now):
            continue  # not over yet; or a rest's, come due inside quiet hours: sent when they end
        try:
            summaries.append(send_summary(services, start, ends, index.red, now))
        except PagerError as exc:
            logger.warning("summary not sent yet", extra={"error": type(exc).__name__, "reason": str(exc)})
    return {"alarms_due": rendered, "summaries": summaries} if rendered or summaries else {}


def send_summary(services: Services, start: float, end: float, red: Sequence[attention_store.Red], now: float) -> str:
    """The call at the end of the period (start, end), once, of what still needs the maintainer: an alarm still
    red and not seen (👀) since, a contribution still open, a release still ready to merge, pager's own
    health still red; none of a repository or a thread muted meanwhile (its pages arrived silently, as a mute
    has them). Nothing when nothing does; one thing's own message, posted anew, when it is all the call holds;
    else one message that says what it holds. Without a sound when the phone called since the period began (a
    contact that came just after it ended, a moment of urgency now that ended the rest early): it rang then,
    and what the period kept is in the chat."""
    key = attention_store.summary_key(start)
    if services.store.load(key).data.get("sent"):  # called already (its mark in the index did not follow)
        attention_store.summary_sent(services, start)
        return "summary already sent"
    attention_store.summary_closing(services, start)  # a note written from now on goes to a later call
    notes = _needed(services, attention_store.summary_notes(services, start), red, now)
    called = attention_store.last_call(services)
    loud = called is None or called <= start  # the phone called after the period began: what it kept follows silently
    if len(notes) == 1 and _called_by_its_own(services, notes[0], start, end, now if loud else None):
        settled = settle(services, key, decide_summary(None, loud, alone=str(notes[0].get("message"))), ttl_seconds=3 * 24 * 3600)
    else:
        quiet = services.settings.quiet
        night = quiet is not None and quiet.period(start) == (start, end)
        text = render_summary(notes, start=start, end=end, zone=services.settings.zone, night=night)
        settled = settle(services, key, decide_summary(text, loud), ttl_seconds=3 * 24 * 3600)
        if loud and text is not None:
            _rang(services, [n for n in notes if n.get("kind") == "alarm"])
    attention_store.summary_sent(services, start)
    return settled.outcome


def _needed(services: Services, notes: list[dict[str, Any]], red: Sequence[attention_store.Red], now: float) -> list[dict[str, Any]]:
    """Of a period's notes, those that still need the maintainer (`still_needed`), gathered: the mutes, the
    alarms still red and not seen since, the releases still ready, the threads closed since."""
    mutes = attention_store.mutes(services, now, threads=True)
    muted = {m.repository_id for m in mutes if m.thread is None}
    threads = {contribution.thing_key(m.repository_id, *m.thread) for m in mutes if m.thread is not None}
    still_red = {r.ref for r in red if not (r.ref.isdigit() and int(r.ref) in muted)} - _seen_since(services, notes)
    ready = release.ready_to_merge(services, muted)
    notes = [note for note in notes if _repository_id(note) not in muted and note.get("thing") not in threads]
    return still_needed(notes, still_red, set(ready), _closed(services, notes))


def _rang(services: Services, notes: Sequence[Mapping[str, Any]]) -> None:
    """The alarms a call named among other things rang with it: each waits its hour before it rings again, as
    one called by its own message does (a failure here is logged: one more ring within the hour at worst)."""
    for note in notes:
        try:
            settle(services, alarm.alarm_key(str(note.get("thing"))), alarm.decide_rang(services.now()))
        except PagerError as exc:
            logger.warning("an alarm's call not recorded", extra={"alarm": note.get("thing"), "error": type(exc).__name__})


def _seen_since(services: Services, notes: Sequence[Mapping[str, Any]]) -> set[str]:
    """Of the alarms the notes are about, those someone said they look at (👀) after the note was kept: they
    need no call (one load per alarm noted)."""
    seen = set()
    for note in notes:
        if note.get("kind") != "alarm":
            continue
        ack = services.store.load(alarm.alarm_key(str(note.get("thing")))).data.get("ack")
        if isinstance(ack, Mapping) and float(ack.get("at") or 0) >= float(note.get("at") or 0):
            seen.add(str(note.get("thing")))
    return seen


KEPT_FOR = {"contribution": contribution.TTL_SECONDS, "release": release.TTL_SECONDS}  # the records' own expiry


def _called_by_its_own(services: Services, note: Mapping[str, Any], start: float, end: float, rang: float | None) -> bool:
    """Post the one thing a call holds anew, its own message (with a sound when it `rang`, the time), once; False when its
    record no longer shows a message to post (the call then says it in words). A comment stays a reply in
    its thread; a thread's first message posted anew stays its first (its follow-ups reply to the new one),
    and the thread counts as called then (a follow-up within the hour is silent). An alarm posted anew is
    rendered again afterwards: a failure stored while its message was being posted is shown (and comes due)."""
    key, kind = str(note.get("message") or ""), note.get("kind")
    if not key:
        return False
    ttl = KEPT_FOR.get(str(kind))
    thread = contribution.Thread.from_data(services.store.load(str(note.get("thing")), contribution.THREAD).data) \
        if kind == "contribution" else contribution.NO_THREAD
    settled = settle(services, key, decide_call(start, end, rang is not None, reply_to=thread.first, reply_chat=thread.chat),
                     ttl_seconds=ttl)
    if settled.after.get("called_for") != start:
        return False
    if kind == "contribution":
        after = shown_of(settled.after)
        rang_at = settled.after.get("rang")  # when it rang (this call, or one before: the thread keeps the newest)
        settle(services, str(note.get("thing")), contribution.decide_called(
            settled.after.get("moved_from"), after, float(rang_at) if isinstance(rang_at, (int, float)) else None),
               item=contribution.THREAD, ttl_seconds=contribution.TTL_SECONDS)
    elif kind in ("alarm", "health"):
        head = settled.after
        alarm.render_now(services, alarm.Alarm(str(note.get("thing")), str(head.get("repository") or ""),
                                               str(head.get("branch") or "")))
    return True


def _repository_id(note: Mapping[str, Any]) -> int | None:
    """The repository a note is about, by its id, which a rename keeps (an alarm's ref, the id in the key of
    a contribution or a release); None for pager's own health."""
    kind, thing = note.get("kind"), str(note.get("thing") or "")
    found = thing if kind == "alarm" else (thing.split("#") + [""])[1] if kind != "health" else ""
    return int(found) if found.isdigit() else None


def _closed(services: Services, notes: Sequence[Mapping[str, Any]]) -> set[str]:
    """Of the contribution notes' threads (contribution#<repository id>#<thing>#<number>), those closed,
    merged or answered since their newest contribution, both in GitHub's time (the last closing's
    `updated_at`, the thread's `newest`): a thread closed meanwhile needs nothing more; one an outsider
    wrote in after it was closed still does. Two loads a thread, gathered here."""
    closed = set()
    for thing in {str(n.get("thing") or "") for n in notes if n.get("kind") == "contribution"}:
        key = "#".join(thing.split("#")[:4])
        record = services.store.load(key).data
        if record.get("state", "open") != "open" and str(record.get("order") or "") >= str(
                services.store.load(key, contribution.THREAD).data.get("newest") or ""):
            closed.add(thing)
    return closed


def still_needed(notes: Sequence[dict[str, Any]], red: set[str], ready: set[str], closed: set[str]) -> list[dict[str, Any]]:
    """Of a period's notes, those that still need the maintainer, pure: an alarm still red, a release still
    ready to merge, a contribution whose thread is not `closed` since (one closed, merged or answered
    meanwhile needs nothing more); pager's own health while it is still red."""
    def needed(note: dict[str, Any]) -> bool:
        kind, thing = note.get("kind"), str(note.get("thing") or "")
        if kind == "alarm":
            return thing in red
        if kind == "release":
            return thing in ready
        if kind == "contribution":
            return thing not in closed
        return thing in red  # pager's own health, while it is still red

    return [note for note in notes if needed(note)]


def decide_summary(text: str | None, loud: bool = True, *, alone: str = ""):
    """Send the call once (None: nothing arrived, nothing to send; `alone`: the one thing it held was posted
    anew as itself, that record's key), with a sound unless the phone called a moment ago (`loud` False: a
    contact that came just after the rest's end called already)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("sent"):
            return Step("summary already sent")
        if alone:
            return Step("called with its own message", data={"sent": {"alone": alone}})
        if text is None:
            return Step("nothing arrived meanwhile", data={"sent": "nothing"})
        sound = LOUD.sound(Moment.SUMMARY) if loud else Sound(False, "the phone called a moment ago")
        effect, _ = show(None, text, None, sound)
        return Step("summary sent", effect=effect, then=lambda posted: {"sent": posted.fields(), "at": now})

    return decide


def render_summary(notes: Sequence[Mapping[str, Any]], *, start: float, end: float, zone: tzinfo,
                   night: bool = True) -> str | None:
    """The call's text, saying what it holds: its first line what is new and how many, by kind, and where
    (at most FIRST_LINE characters, what a phone's notification shows); the next when it was kept (after quiet
    hours, the `night`, or the phone's rest); then one line per thing, linked, in the order they came: exactly
    what the first line counts, as many as fit one message, then how many more. None when nothing arrived."""
    if not notes:
        return None
    ordered = sorted(notes, key=lambda n: float(n.get("at") or 0))
    by_kind = {kind: [n for n in ordered if n.get("kind") == kind] for kind, _, _, _ in KINDS}
    counts = [(_count(kind, len(by_kind[kind]), words), _count(kind, len(by_kind[kind]), short))
              for kind, _, words, short in KINDS if by_kind[kind]]
    emoji = "🌅" if night else "📬"
    when = (f"Kept without a sound in quiet hours, {clock(start, zone)}–{clock(end, zone)}" if night
            else f"Kept without a sound since {clock(start, zone)}, while the phone rested")
    lines = [first_line(emoji, counts, _names(ordered)), when]
    things = [_thing_line(n) for kind, _, _, _ in KINDS for n in by_kind[kind]]
    return "\n".join(lines + _listed(things, MAX_TEXT - sum(visible_length(line) + 1 for line in lines)))


def _listed(things: Sequence[str], room: int) -> list[str]:
    """The things' lines that fit `room` characters (LISTED at most), and a last line saying how many more."""
    shown: list[str] = []
    for index, line in enumerate(things):
        more = f"… and {len(things) - index - 1} more" if index + 1 < len(things) else ""
        if index >= LISTED or visible_length(line) + 1 + (visible_length(more) + 1 if more else 0) > room:
            return shown + [f"… and {len(things) - index} more"]
        shown.append(line)
        room -= visible_length(line) + 1
    return shown


def _count(kind: str, n: int, words: tuple[str, str]) -> str:
    return words[0] if kind == "health" else plural(n, *words)


def _names(notes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the notes are, once each, in the order they came: the repositories, and pager for its own health."""
    return list(dict.fromkeys(str(n.get("repository") or "") if n.get("kind") != "health" else "pager" for n in notes))


def first_line(emoji: str, counts: Sequence[tuple[str, str]], names: Sequence[str], limit: int = FIRST_LINE) -> str:
    """"📬 3 new from outside · 1 release ready — acme/lib, acme/app": the counts (each `(words, short)`: in short
    when the words would not leave room), then as many of the places, linked, as fit `limit` visible
    characters, with how many more; without them when not even one fits."""
    head = f"{emoji} {' · '.join(words for words, _ in counts)}"
    if units(head) > limit:
        head = f"{emoji} {' · '.join(short for _, short in counts)}"
    for shown in range(len(names), 0, -1):
        more = f" and {len(names) - shown} more" if shown < len(names) else ""
        if units(f"{head} — {', '.join(names[:shown])}{more}") <= limit:
            linked = ", ".join(link(repo_url(name), name) if name != "pager" else name for name in names[:shown])
            return f"{escape(head)} — {linked}{more}"
    return escape(head)


def _thing_line(note: Mapping[str, Any]) -> str:
    """One thing a call holds: its kind's mark and what it is, linked to it."""
    kind = note.get("kind")
    emoji = next((e for k, e, _, _ in KINDS if k == kind), "•")
    if kind == "release":
        return f"{emoji} {_link(note)} is ready to merge"
    return f"{emoji} {_link(note)}"


def _link(note: Mapping[str, Any]) -> str:
    label, url = str(note.get("label") or ""), str(note.get("url") or "")
    return link(url, label) if url else escape(label)
