"""What comes due without an event (the every-minute check's part): an alarm whose grace ended while it
stayed red, a fix whose hold ended, and the summary at the end of quiet hours or of the phone's rest.

    tick(services, now)   one query of the check's index (`attention_store.index`); for each red alarm
                          come due, its render (which buzzes once, or notes it for the summary); for each
                          period over (quiet hours, a rest) whose summary is still to send, the summary

The summary (`Moment.SUMMARY`) is one message with a sound, sent once per period and only if something
that would have buzzed arrived meanwhile: how many of each kind, with links, the alarms still red and the
releases waiting for 🔀 Merge. Quiet hours' opens with 🌅, a rest's with 📬 (the phone's next call). It is
settled on its own record (`summary#<start>`), so a check that comes twice, or one whose send failed and
the next minute's, sends it once; once sent, the phone rests again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import tzinfo
from typing import Any

from .. import attention_store
from ..attention import LOUD, Moment, Sound
from ..errors import PagerError
from ..html import escape, link
from ..observe import logger
from ..services import Services
from ..words import clock, local_time, plural
from . import alarm, contribution, release
from .common import repo_url
from .messages import show
from .records import settle
from .steps import Step

KINDS = (  # (kind of note, its emoji, how a count of them reads)
    ("contribution", "💬", ("from outside", "from outside")),
    ("alarm", "🚨", ("alarm red past its grace", "alarms red past their grace")),
    ("release", "🔀", ("release ready to merge", "releases ready to merge")),
    ("health", "⚙️", ("time pager needed you", "times pager needed you")),
)
LISTED = 6  # things named per kind; the rest are counted
JUST_CALLED = 300.0  # seconds: a rest's call this soon after a call made since the rest ended is silent


def tick(services: Services, now: float) -> dict[str, Any]:
    """Send the summaries whose quiet hours or rest are over, then render the alarms come due (after the
    summary, an alarm come due at the same minute is kept for the phone's next call, not a second buzz);
    what it did."""
    index = attention_store.index(services)
    rendered, summaries = [], []
    quiet = services.settings.quiet
    night = quiet.period(now) if quiet is not None else None
    for start, end in index.summaries:
        if end > now or (night is not None and (start, end) != night and night[0] <= now):
            continue  # not over yet; or a rest's, come due inside quiet hours: sent when they end
        try:
            summaries.append(send_summary(services, start, end, index.red, now))
        except PagerError as exc:
            logger.warning("summary not sent yet", extra={"error": type(exc).__name__, "reason": str(exc)})
    for red in index.red:
        if red.due is None or red.due > now:
            continue
        try:
            rendered.append(f"{red.repository}: " + alarm.render_now(services, alarm.Alarm(red.ref, red.repository, red.branch)))
        except PagerError as exc:  # the next minute tries again: the index still says it is due
            logger.warning("alarm not rendered when due", extra={"alarm": red.ref, "error": type(exc).__name__, "reason": str(exc)})
    return {"alarms_due": rendered, "summaries": summaries} if rendered or summaries else {}


def send_summary(services: Services, start: float, end: float, red: Sequence[attention_store.Red], now: float) -> str:
    """The summary of the period (start, end), once, of what still needs the maintainer: an alarm still red,
    a contribution still open, a release still ready to merge, pager's own health; none of a repository
    or a thread muted meanwhile (its pages arrived silently, as a mute has them). Nothing when nothing does.
    Without a sound when the phone called a moment ago (a contact that came just after the period's end)."""
    attention_store.summary_closing(services, start)  # a note written from now on goes to a later call
    notes = attention_store.summary_notes(services, start)
    mutes = attention_store.mutes(services, now, threads=True)
    muted = {m.repository_id for m in mutes if m.thread is None}
    threads = {contribution.thing_key(m.repository_id, *m.thread) for m in mutes if m.thread is not None}
    still_red = [r for r in red if not (r.ref.isdigit() and int(r.ref) in muted)]
    ready = release.ready_to_merge(services, muted)
    quiet = services.settings.quiet
    night = quiet is not None and quiet.period(start) == (start, end)
    notes = [note for note in notes if _repository_id(note) not in muted and note.get("thing") not in threads]
    notes = still_needed(notes, {r.ref for r in still_red}, set(ready), _closed(services, notes))
    text = render_summary(notes, still_red, list(ready.values()), start=start, end=end, zone=services.settings.zone,
                          now=now, night=night)
    called = attention_store.last_call(services)
    loud = called is None or not (called >= end and now - called < JUST_CALLED)  # called since the period's end
    settled = settle(services, attention_store.summary_key(start), decide_summary(text, loud), ttl_seconds=3 * 24 * 3600)
    attention_store.summary_sent(services, start)
    return settled.outcome


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
    meanwhile needs nothing more); pager's own health always."""
    def needed(note: dict[str, Any]) -> bool:
        kind, thing = note.get("kind"), str(note.get("thing") or "")
        if kind == "alarm":
            return thing in red
        if kind == "release":
            return thing in ready
        if kind == "contribution":
            return thing not in closed
        return True

    return [note for note in notes if needed(note)]


def decide_summary(text: str | None, loud: bool = True):
    """Send the summary once (None: nothing arrived, nothing to send), with a sound unless the phone called a
    moment ago (`loud` False: a contact that came just after the rest's end called already)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("sent"):
            return Step("summary already sent")
        if text is None:
            return Step("nothing arrived meanwhile", data={"sent": "nothing"})
        sound = LOUD.sound(Moment.SUMMARY) if loud else Sound(False, "the phone called a moment ago")
        effect, _ = show(None, text, None, sound)
        return Step("summary sent", effect=effect, then=lambda posted: {"sent": posted.fields(), "at": now})

    return decide


def render_summary(notes: Sequence[Mapping[str, Any]], red: Sequence[attention_store.Red], ready: Sequence[Mapping[str, Any]],
                   *, start: float, end: float, zone: tzinfo, now: float, night: bool = True) -> str | None:
    """The summary's text: its first line what needs the maintainer, counted by kind (after quiet hours, the
    `night`, or the phone's rest); then each kind with links, the alarms still red and the releases waiting
    for 🔀 Merge. None when nothing arrived."""
    if not notes:
        return None
    by_kind = {kind: [n for n in notes if n.get("kind") == kind] for kind, _, _ in KINDS}
    counts = [plural(len(by_kind[kind]), *words) for kind, _, words in KINDS if by_kind[kind]]
    if night:
        lines = [f"🌅 Quiet hours are over ({clock(start, zone)}–{clock(end, zone)}): {', '.join(counts)} ({_where(notes)})"]
    else:
        lines = [f"📬 Without a sound since {clock(start, zone)}: {', '.join(counts)} ({_where(notes)})"]
    lines += _noted_lines(by_kind)
    lines += _red_lines(red, zone, now)
    lines += _ready_lines(ready)
    return "\n".join(lines)


def _where(notes: Sequence[Mapping[str, Any]]) -> str:
    """The repositories of the notes, linked, as a phone's notification can show them: three at most, then
    how many more (pager's own health is pager's)."""
    names = list(dict.fromkeys(str(n.get("repository") or "") if n.get("kind") != "health" else "" for n in notes))
    shown = ", ".join(link(repo_url(name), name) if name else "pager" for name in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _noted_lines(by_kind: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """A line for each kind of note that arrived, its things with links in the order they arrived."""
    lines = []
    for kind, emoji, _ in KINDS:
        if kind in ("alarm", "release"):
            continue  # listed as they stand now (_red_lines, _ready_lines)
        found = sorted(by_kind[kind], key=lambda n: float(n.get("at") or 0))
        if found:
            lines.append(f"{emoji} " + _listed([_link(n) for n in found]))
    return lines


def _red_lines(red: Sequence[attention_store.Red], zone: tzinfo, now: float) -> list[str]:
    """The alarms still red, each since when (pager's own as pager); none when none is."""
    if not red:
        return []
    return ["🚨 still red: " + _listed([
        link(f"https://github.com/{r.repository}/actions", r.repository) + f" since {local_time(r.since, zone, now)}"
        if r.ref != alarm.CONTROL else f"pager since {local_time(r.since, zone, now)}" for r in red])]


def _ready_lines(ready: Sequence[Mapping[str, Any]]) -> list[str]:
    """The releases waiting for 🔀 Merge; none when none is."""
    if not ready:
        return []
    return ["🔀 ready to merge: " + _listed([
        link(str(r.get("url") or ""), f"{r.get('repository')}#{r.get('number')}") for r in ready])]


def _link(note: Mapping[str, Any]) -> str:
    label, url = str(note.get("label") or ""), str(note.get("url") or "")
    return link(url, label) if url else escape(label)


def _listed(items: list[str]) -> str:
    shown = ", ".join(items[:LISTED])
    return shown + (f", and {len(items) - LISTED} more" if len(items) > LISTED else "")
