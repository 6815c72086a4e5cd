"""Words for the person: times, durations and counts as a phone shows them, GitHub's things as its pages name them.

Pure: values in, text out (plain text: the signals escape and link it). No GUID, no `event.action` name, no
raw ISO time, no table key and no exception class reaches the chat (SPEC §6.1); they stay in the logs.

    local_time(epoch, zone, now)   "14:02" today, "Tue 14:02" this week, "3 Dec 14:02" before
    stamp(epoch, zone)             "Tue 14:02", in a message that stays in the chat for days
    clock(epoch, zone)             "22:00", where the day goes without saying
    duration(seconds)              "45 s", "12 min", "2 h 5 min", "3 days"
    plural(n, one, many)           "1 delivery", "3 deliveries"
    fit(text, room)                plain text cut at a word with "…" to what a first line has room for
    EVENT_NOUNS / event_noun       what GitHub calls the thing of a webhook event ("issue", "workflow run")
    thing_of(event, payload)       the thing an event is about, named as GitHub's pages name it, and its link
    failure(exc)                   why a press or a command did not act, in the person's words
    merge_refused(reason, ...)     why GitHub refused a 🔀 merge; merge_answer: the same as a press's answer
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from typing import Any

from .errors import GitHubRefused, GitHubUnavailable, PagerError, TelegramRefused, TelegramUnavailable, Transient
from .html import escape, visible_length
from .values import field, integer, text

WEEK = 7 * 24 * 3600


def local_time(epoch: float, zone: tzinfo, now: float | None = None) -> str:
    """A moment as a clock in `zone` shows it: the time alone today, with the weekday within the last
    six days, with the date before that (or after `now`)."""
    at = datetime.fromtimestamp(epoch, tz=zone)
    if now is not None:
        today = datetime.fromtimestamp(now, tz=zone)
        if at.date() == today.date():
            return at.strftime("%H:%M")
        if 0 < now - epoch < WEEK - 24 * 3600:
            return at.strftime("%a %H:%M")
    return f"{at.day} {at.strftime('%b %H:%M')}"


def stamp(epoch: float, zone: tzinfo) -> str:
    """A moment in a message that stays in the chat for days ("Tue 14:02"): never "14:02" alone, which
    reads as today on any day."""
    return datetime.fromtimestamp(epoch, tz=zone).strftime("%a %H:%M")


def clock(epoch: float, zone: tzinfo) -> str:
    """The time alone ("22:00"), where the day goes without saying."""
    return datetime.fromtimestamp(epoch, tz=zone).strftime("%H:%M")


def duration(seconds: float) -> str:
    """How long something lasted, to the unit that matters: seconds, minutes, hours and minutes, days."""
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    if hours < 48:
        return f"{hours} h {rest} min" if rest else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{plural(days, 'day')} {hours} h" if hours else plural(days, "day")


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


# How much of a first line a phone's notification shows, about: pager's own messages say what happened and
# what to do within it (SPEC §6.1), and leave status codes, setting names and details to the lines below.
FIRST_LINE = 80


def units(text: str) -> int:
    """How long Telegram counts plain text: in UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def with_title(before: str, title: str, after: str = "", limit: int = FIRST_LINE) -> tuple[str, bool]:
    """A message's first line, what a phone's notification shows: `before` and `after` (HTML, kept whole) around
    a `title` (plain text) cut to what `limit` leaves; and whether the title was cut (its message then says it
    whole below)."""
    room = limit - visible_length(before + after)
    cut = fit(title, max(room, 1))
    return before + escape(cut) + after, cut != title


def fit(text: str, room: int) -> str:
    """Plain text at most `room` characters long as Telegram counts them: cut at a word, with "…", when longer."""
    if units(text) <= room:
        return text
    kept, used = [], units("…")
    for char in text:
        used += units(char)
        if used > room:
            break
        kept.append(char)
    cut = "".join(kept)
    word = cut.rfind(" ")
    if word > len(cut) * 2 // 3:  # a word's end near the cut: there, rather than inside the word
        cut = cut[:word]
    return cut.rstrip(" ,;:—-") + "…"


# What GitHub calls the thing each webhook event is about (its docs, "Webhook events and payloads").
EVENT_NOUNS: Mapping[str, str] = {
    "issues": "issue",
    "issue_comment": "comment",
    "pull_request": "pull request",
    "pull_request_review": "review",
    "pull_request_review_comment": "review comment",
    "discussion": "discussion",
    "discussion_comment": "comment",
    "workflow_run": "workflow run",
    "check_suite": "check suite",
    "check_run": "check run",
    "code_scanning_alert": "code scanning alert",
    "release": "release",
}


def event_noun(event: str) -> str:
    """The thing of an event kind in words ("an issue"), never its name in the API (`issues`)."""
    noun = EVENT_NOUNS.get(event) or event.replace("_", " ") or "event"
    return noun


@dataclass(frozen=True)
class Thing:
    """What an event is about, as GitHub's pages name it: a label ("bob's comment on acme/lib#3") and its
    page (empty when the payload has none)."""

    label: str
    url: str = ""
    short: str = ""  # the shortest name that still tells it apart ("acme/lib#3"), for a button


# The things GitHub numbers in a repository: the event, the payload's field that holds the thing, its noun.
_NUMBERED: Mapping[str, tuple[str, str]] = {
    "issues": ("issue", "issue"),
    "pull_request": ("pull_request", "pull request"),
    "discussion": ("discussion", "discussion"),
}
# Comments and reviews on a numbered thing: the event, the payload's field that holds the thing, the one
# that holds the comment, its noun.
_COMMENTS: Mapping[str, tuple[str, str, str]] = {
    "issue_comment": ("issue", "comment", "comment"),
    "discussion_comment": ("discussion", "comment", "comment"),
    "pull_request_review_comment": ("pull_request", "comment", "review comment"),
    "pull_request_review": ("pull_request", "review", "review"),
}


def thing_of(event: str, payload: Any, repository: str = "") -> Thing:
    """The thing a webhook event is about, from its payload (GitHub's account of it); with a payload that
    says nothing, the kind of thing and where."""
    repository = text(field(payload, "repository", "full_name")) or repository
    where = repository or "a repository"
    if event in _NUMBERED:
        kind, noun = _NUMBERED[event]
        return _numbered(field(payload, kind), noun, where)
    if event in _COMMENTS:
        parent, kind, noun = _COMMENTS[event]
        return _comment(field(payload, parent), field(payload, kind), noun, where)
    if event in _OWN_NAMES:
        return _OWN_NAMES[event](payload, where)
    noun = event_noun(event)
    article = "an" if noun[:1] in "aeiou" else "a"
    return Thing(f"{article} {noun} event of {where}", "", where)


def _numbered(obj: Any, noun: str, where: str) -> Thing:
    """An issue, a pull request or a discussion: its author's, with its number and title."""
    number = integer(field(obj, "number"))
    ref = f"{where}#{number}" if number else where
    author = text(field(obj, "user", "login"))
    title = text(field(obj, "title"))
    if number:
        label = f"{author}'s {noun} {ref}" if author else f"{noun} {ref}"
    else:  # a payload that names no number: the kind of thing and where
        label = f"{author}'s {noun} in {where}" if author else f"{'an' if noun[:1] in 'aeiou' else 'a'} {noun} in {where}"
    return Thing(f"{label}: {title}" if title else label, text(field(obj, "html_url")), ref)


def _comment(parent: Any, obj: Any, noun: str, where: str) -> Thing:
    """A comment or a review: its author's, on the numbered thing it is on (whose page stands in when it has none)."""
    number = integer(field(parent, "number"))
    ref = f"{where}#{number}" if number else where
    author = text(field(obj, "user", "login"))
    label = f"{author}'s {noun} on {ref}" if author else f"a {noun} on {ref}"
    return Thing(label, text(field(obj, "html_url")) or text(field(parent, "html_url")), ref)


def _workflow_run(payload: Any, where: str) -> Thing:
    """A workflow's run: the workflow's name, the run's number and its branch."""
    run = field(payload, "workflow_run")
    name = text(field(payload, "workflow", "name")) or text(field(run, "name")) or "workflow"
    number = integer(field(run, "run_number"))
    branch = text(field(run, "head_branch"))
    label = f"{name} run #{number}" if number else f"{name} run"
    label += f" on {where}" + (f" {branch}" if branch else "")
    return Thing(label, text(field(run, "html_url")), f"{name} #{number} {where}" if number else where)


def _check_suite(payload: Any, where: str) -> Thing:
    """A check suite: the app that runs it and the commit it checks (it has no page of its own)."""
    suite = field(payload, "check_suite")
    app = text(field(suite, "app", "name")) or "another app"
    sha = text(field(suite, "head_sha"))[:7]
    return Thing(f"{app}'s checks on {where}" + (f" {sha}" if sha else ""), "", f"{app} {where}")


def _code_scanning_alert(payload: Any, where: str) -> Thing:
    """A code scanning alert, by its number."""
    alert = field(payload, "alert")
    number = integer(field(alert, "number"))
    label = f"code scanning alert #{number} of {where}" if number else f"a code scanning alert of {where}"
    return Thing(label, text(field(alert, "html_url")), f"alert #{number} {where}")


def _release(payload: Any, where: str) -> Thing:
    """A release, by its tag."""
    release = field(payload, "release")
    tag = text(field(release, "tag_name"))
    return Thing(f"release {tag} of {where}" if tag else f"a release of {where}", text(field(release, "html_url")),
                 f"{tag} {where}" if tag else where)


# The things named in a way of their own: the event, how its payload names the thing.
_OWN_NAMES: Mapping[str, Callable[[Any, str], Thing]] = {
    "workflow_run": _workflow_run,
    "check_suite": _check_suite,
    "code_scanning_alert": _code_scanning_alert,
    "release": _release,
}


# A merge GitHub refused because the release changes .github/workflows/ and the app lacks the Workflows
# permission: what it means, what to do (the message links the app's permissions page; an answer cannot).
WORKFLOWS_LACKED = "this release changes .github/workflows/, and pager's app lacks the Workflows permission"
WORKFLOWS_TODO = "Merge it on GitHub, or add the permission (linked in the message)"
WORKFLOWS_FIX = ("Merge it on GitHub, or add it on {page} (Repository permissions → Workflows: Read and write; the "
                 "installation's owner then accepts it) and approve the pull request again for 🔀")


def merge_refused(reason: str, *, workflows: bool = False) -> str:
    """Why GitHub refused a 🔀 merge: for a release that changes workflows, what that means (GitHub's own
    words stay in the log); for any other refusal, GitHub's reason."""
    return f"GitHub refused the merge: {WORKFLOWS_LACKED if workflows else reason}"


def merge_answer(reason: str, *, workflows: bool = False) -> str:
    """The 🔀 press's answer to a refused merge (at most 200 characters, the Bot API's limit): why, and for a
    release that changes workflows, what to do."""
    said = merge_refused(reason, workflows=workflows)
    return (f"{said}. {WORKFLOWS_TODO}" if workflows else said)[:200]


def failure(exc: PagerError) -> str:
    """Why a press or a command did not act, in the person's words (the exception itself goes to the log)."""
    if isinstance(exc, TelegramUnavailable):
        return "Telegram is not answering: try again in a minute"
    if isinstance(exc, GitHubUnavailable):
        return "GitHub is not answering: try again in a minute"
    if isinstance(exc, GitHubRefused):
        return f"GitHub refused: {exc.reason or f'it answered {exc.status}'}"
    if isinstance(exc, TelegramRefused):
        return f"Telegram refused: {exc.description or f'it answered {exc.status}'}"
    if isinstance(exc, Transient):
        return "pager is busy: try again in a minute"
    return "that did not work: try again in a minute"
