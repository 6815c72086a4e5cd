"""Contribution (docs/signals.md): someone from outside opens, comments or reviews; one message, one draft.

An opening event (`issues.opened`, `pull_request.opened` of a pull request that is not a release
one, `discussion.created`) or a comment (`issue_comment`, `discussion_comment`,
`pull_request_review_comment` created, `pull_request_review.submitted` with a body) by someone
outside sends one message and then asks the control repository for a draft reply
(`repository_dispatch` `pager-draft`). A closing event (`discussion.answered`, `issues.closed`,
`pull_request.closed`) edits the message of the thing it closes; a reopening (`issues.reopened`,
`pull_request.reopened`, `discussion.unanswered`) shows it open again.

One record per thing, `contribution#<repository id>#<issue|pull|discussion>#<number>[#<comment>]` (the id
survives a rename or a transfer):

    state       open, closed, merged or answered
    order       the order key (updated_at) of the newest payload applied
    message_id  the message shown, once sent, and its chat; text: its text (an edit appends the verdict)
    drafted     the pager-draft dispatch was made

Who is outside: the payload's `author_association` is not OWNER, MEMBER or COLLABORATOR and no bot
wrote it; in a repository owned by an organization, or when the payload has no association, GitHub is
asked first ("Check if a user is a repository collaborator": 204 a colleague, 404 someone from
outside, once the repository's installation read anew says the asking one sees it; kept an hour per
repository and login by the client), since the payload's
association is computed without a viewer and calls a private member of the organization CONTRIBUTOR.
GitHub failing there answers 500 (the delivery comes again); a colleague is never paged, an outsider
never dropped.

Twice: a message recorded is not sent again, a draft recorded is not asked again, a verdict recorded
is not edited again. Late: a closing event that came before the opening one (a late redelivery)
records its verdict, and the opening event then shows nothing: it is no longer new.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from .. import attention_store
from ..attention import FOLLOW_UP_SECONDS, LOUD, Moment, Volume, period_of
from ..engine.effects import Buttons, Dispatch, EditMessage, Note, Step
from ..engine.settle import holding, settle
from ..errors import PagerError
from ..html import MAX_TEXT, cut, escape, link, visible_length
from ..routing import Delivery
from ..services import Services
from ..values import field, integer, newest, order_of_time, text
from ..words import with_title
from .common import excerpt, is_outside, is_release_pull, needs_confirming, repo_url
from .messages import buttons_json, show
from .release import release_key

TTL_SECONDS = 180 * 24 * 3600  # a contribution's record outlives any redelivery by far
DRAFT_EVENT = "pager-draft"
THREAD = "thread"  # the item of a thread's record that says where its messages go and when it last buzzed
MUTE_PREFIX = "mute:c:"  # 🔕 of its repository on a contribution: mute:c:<repository id>:<i|p|d><number>
MUTE_THREAD_PREFIX = "mute:t:"  # 🔕 of its thread alone: mute:t:<repository id>:<i|p|d><number>
THINGS = {"issue": "i", "pull": "p", "discussion": "d"}
PAGES = {"issue": "issues", "pull": "pull", "discussion": "discussions"}  # a thread's page on GitHub


@dataclass(frozen=True)
class Contribution:
    """An opening event or comment, as much of it as the message and the drafter need."""

    repository: str
    kind: str  # what the drafter is told: issue, pull_request, discussion, issue_comment, ...
    thing: str  # issue, pull or discussion: the key's part
    noun: str  # issue, pull request, discussion: the message's word
    verb: str  # opened, commented on, reviewed, ...
    number: int
    title: str
    url: str
    author: str
    body: str
    order: str
    outside: bool  # as the payload says: its association, and no bot
    confirm: bool = False  # "outside" needs GitHub's word (`needs_confirming`) before a page
    repository_id: int = 0  # what the record is keyed by: a rename or a transfer keeps it
    comment: str = ""  # the key's part for a comment or review, e.g. c123
    comment_id: int | None = None
    node_id: str = ""  # GraphQL id of what the drafter answers: the comment or review, or the opening itself
    subject_node_id: str = ""  # GraphQL id of the issue, pull request or discussion

    @property
    def thread(self) -> str:
        """The record of the issue, pull request or discussion it is in (its thread's item is kept there)."""
        return thing_key(self.repository_id, self.thing, self.number)

    @property
    def key(self) -> str:
        return self.thread + (f"#{self.comment}" if self.comment else "")


@dataclass(frozen=True)
class Thread:
    """Where a thread's messages go (the first one shown, which the others reply to) and when it last buzzed."""

    first: int | None = None
    chat: str | None = None
    buzzed_at: float | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Thread:
        first, buzzed = data.get("first"), data.get("buzzed_at")
        return cls(first if isinstance(first, int) else None, data.get("chat"),
                   float(buzzed) if isinstance(buzzed, (int, float)) else None)

    def moment(self, now: float) -> Moment:
        """A further contribution within the hour of the thread's last buzz follows up; else it calls."""
        recent = self.buzzed_at is not None and 0 <= now - self.buzzed_at < FOLLOW_UP_SECONDS
        return Moment.FOLLOW_UP if recent else Moment.CONTACT


NO_THREAD = Thread()


def mute_button(c: Contribution) -> Buttons:
    """🔕 of the thread alone, and 🔕 of the whole repository, each saying what it mutes."""
    thread = f"{int(c.repository_id)}:{THINGS[c.thing]}{c.number}"
    return [[("🔕 Mute this thread 8 h", f"{MUTE_THREAD_PREFIX}{thread}")],
            [(f"🔕 Mute {c.repository} 8 h", f"{MUTE_PREFIX}{thread}")]]


def thing_key(repository_id: int, thing: str, number: int) -> str:
    return f"contribution#{int(repository_id)}#{thing}#{number}"


def thread_url(repository: str, thing: str, number: int) -> str:
    """The page of an issue, pull request or discussion on GitHub."""
    return f"{repo_url(repository)}/{PAGES[thing]}/{int(number)}"


GHOST = "ghost"  # who GitHub shows for an account deleted since (a payload may carry no user at all)


def read_contribution(event: str, payload: dict[str, Any], repository: str) -> Contribution | None:
    """The contribution an opening event or comment is about; None for one pager does not show."""
    sender = payload.get("sender")
    repository_id = integer(field(payload, "repository", "id"))

    def opened(thing: str, noun: str, obj: Any) -> Contribution:
        user = field(obj, "user")
        return Contribution(
            repository=repository,
            kind=event if event != "issues" else "issue",
            thing=thing,
            noun=noun,
            verb="opened",
            number=integer(field(obj, "number")),
            title=text(field(obj, "title")),
            url=text(field(obj, "html_url")),
            author=text(field(user, "login")) or GHOST,
            body=text(field(obj, "body")),
            order=order_of_time(field(obj, "updated_at")) or order_of_time(field(obj, "created_at")),
            outside=is_outside(field(obj, "author_association"), user, sender),
            confirm=needs_confirming(field(obj, "author_association"), payload),
            repository_id=repository_id,
            node_id=text(field(obj, "node_id")),
            subject_node_id=text(field(obj, "node_id")),
        )

    def commented(thing: str, noun: str, parent: Any, comment: Any, tag: str, verb: str, at: str = "created_at") -> Contribution:
        user = field(comment, "user")
        comment_id = field(comment, "id")
        return Contribution(
            repository=repository,
            kind=event,
            thing=thing,
            noun=noun,
            verb=verb,
            number=integer(field(parent, "number")),
            title=text(field(parent, "title")),
            url=text(field(comment, "html_url")),
            author=text(field(user, "login")) or GHOST,
            body=text(field(comment, "body")),
            order=order_of_time(field(comment, at)),
            outside=is_outside(field(comment, "author_association"), user, sender),
            confirm=needs_confirming(field(comment, "author_association"), payload),
            repository_id=repository_id,
            comment=f"{tag}{comment_id}",
            comment_id=comment_id if isinstance(comment_id, int) else None,
            node_id=text(field(comment, "node_id")),
            subject_node_id=text(field(parent, "node_id")),
        )

    if event == "issues":
        return opened("issue", "issue", payload.get("issue"))
    if event == "pull_request":
        pull = payload.get("pull_request")
        return opened("pull", "draft pull request" if field(pull, "draft") is True else "pull request", pull)
    if event == "discussion":
        return opened("discussion", "discussion", payload.get("discussion"))
    if event == "issue_comment":
        issue = payload.get("issue")
        on_pull = isinstance(field(issue, "pull_request"), dict)
        thing, noun = ("pull", "pull request") if on_pull else ("issue", "issue")
        return commented(thing, noun, issue, payload.get("comment"), "c", "commented on")
    if event == "discussion_comment":
        return commented("discussion", "discussion", payload.get("discussion"), payload.get("comment"), "dc", "commented on")
    if event == "pull_request_review_comment":
        return commented(
            "pull", "pull request", payload.get("pull_request"), payload.get("comment"), "rc", "commented on the code of"
        )
    if event == "pull_request_review":
        review = payload.get("review")
        if not text(field(review, "body")).strip():
            return None  # a review without a body says nothing a person must answer
        state = text(field(review, "state")).lower()
        verb = {"approved": "approved", "changes_requested": "asked for changes on"}.get(state, "reviewed")
        return commented("pull", "pull request", payload.get("pull_request"), review, "r", verb, at="submitted_at")
    return None


def render(c: Contribution) -> str:
    """The message: who did what where (its first line, what a phone's notification shows: at most FIRST_LINE
    characters, the title whole on the next line when it had to be cut there), an excerpt, the link."""
    head, shortened = with_title(f"💬 {escape(c.author)} {c.verb} {c.noun} {link(c.url, f'{c.repository}#{c.number}')}: ",
                                 c.title)
    lines = [head] + ([f"<b>{escape(c.title)}</b>"] if shortened else [])
    body = excerpt(c.body)
    return "\n".join(lines + ([f"<i>{body}</i>"] if body else []))


def draft_payload(c: Contribution, message_id: int, chat: str | None = None) -> dict[str, Any]:
    """What the control repository's pager-draft workflow gets as `client_payload` (10 properties: GitHub
    takes at most 10; strings cut so that the dispatch stays far from its 64 KB)."""
    return {
        "repository": c.repository,
        "kind": c.kind,
        "number": c.number,
        "comment_id": c.comment_id,
        "node_id": c.node_id[:200],
        "subject_node_id": c.subject_node_id[:200],
        "url": c.url[:1000],
        "author": c.author[:200],
        "message_id": message_id,
        "chat": chat,
    }


def decide_opening(c: Contribution, control_repository: str, thread: Thread = NO_THREAD, volume: Volume = LOUD):
    """Show the contribution once (in its thread: a reply to the thread's first message; with a sound when it
    is a contact, not a follow-up within the hour), then ask for its draft once; nothing new once it is
    closed (a page shown before still gets its draft)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        state = data.get("state")
        message_id = data.get("message_id")
        if message_id is None:
            if state and state != "open":
                return Step(f"no longer new: {state}")
            message, buttons = render(c), mute_button(c)
            sound = volume.sound(thread.moment(now))
            effect, _ = show(None, message, buttons, sound, reply_to=thread.first, reply_chat=thread.chat)
            return Step(
                "sent",
                effect=effect,
                then=lambda sent: {
                    **data,
                    "state": "open",
                    "order": newest(data.get("order"), c.order),
                    **sent.fields(),
                    "text": message,
                    "buttons": buttons_json(buttons),
                    "shown_at": now,
                    "sound": sound.to_data(),
                },
            )
        period = period_of(data.get("sound") or {})
        if period is not None and not data.get("noted"):  # shown in quiet hours: kept for their summary, once
            label = f"{c.author} {c.verb} {c.noun} {c.repository}#{c.number}"
            # kept by its thread: a thread counts once in a summary, however far apart its contacts came
            note = Note("contribution", c.thread, label, c.url, period, c.repository, at=float(data.get("shown_at") or now),
                        message=c.key)
            return Step("kept for the summary", effect=note, then=lambda _: {**data, "noted": True})
        if not data.get("drafted"):
            return Step(
                "draft asked",
                effect=Dispatch(control_repository, DRAFT_EVENT, draft_payload(c, message_id, data.get("chat"))),
                then=lambda _: {**data, "drafted": True},
            )
        return Step("already shown")

    return decide


def decide_closing(verdict: str, order: str, author_outside: bool, thread_known: bool = False):
    """Edit a shown contribution once to its verdict; remember the verdict of one not shown yet, and of a
    thread pager showed contributions in (`thread_known`: an outsider's comment on a maintainer's issue or a
    release pull request), whose summary then leaves them out."""

    def decide(data: dict[str, Any], now: float) -> Step:
        state = data.get("state")
        if order < str(data.get("order") or ""):  # (a tie: the one delivered last wins)
            return Step("stale: older than what is shown")
        if state == verdict:  # said already; a later closing (its reopening never came) says when it closed last
            later = order > str(data.get("order") or "")
            return Step(f"already {state}", data={**data, "order": order} if later else None)
        message_id = data.get("message_id")
        if message_id is not None:
            said = f"\n✅ {verdict}"  # kept whole: a text at Telegram's limit is cut to leave it room
            before = str(data.get("text", ""))  # another verdict said before (closed, then merged) is replaced
            before = before.removesuffix(f"\n✅ {state}") if state and state != "open" else before
            edited = cut(before, MAX_TEXT - visible_length(said)) + said
            return Step(
                f"edited: {verdict}",
                effect=EditMessage(message_id, edited, chat=data.get("chat")),
                then=lambda shown: {
                    **data,
                    "state": verdict,
                    "order": newest(data.get("order"), order),
                    **shown.fields(),
                    "text": edited,
                    "buttons": None,
                },
            )
        recorded = {**data, "state": verdict, "order": newest(data.get("order"), order)}
        if not author_outside:
            return Step(f"recorded: {verdict}", data=recorded) if thread_known else Step("ignored: not a contribution")
        # Came before its opening event (a late redelivery): the opening shows nothing now.
        return Step(f"recorded: {verdict} before shown", data=recorded)

    return decide


def opened(delivery: Delivery, services: Services) -> str:
    """An opening event or a comment: show it once and ask for its draft, if someone outside wrote it."""
    payload = delivery.payload
    if delivery.event == "pull_request" and is_release_pull(payload.get("pull_request"), payload, services.settings):
        return "ignored: release pull request"
    c = read_contribution(delivery.event, payload, delivery.repository)
    if c is None or not c.number or not delivery.repository or not c.repository_id:
        return "ignored: nothing to answer"
    if not c.outside:
        return "ignored: maintainer or bot"
    if c.confirm and c.author and services.github.is_collaborator(
            delivery.repository, c.author, installation_id=delivery.installation_id):
        return "ignored: a colleague (GitHub counts them a collaborator)"
    # The thread is held while its contribution is shown: two in one thread at the same moment (an issue
    # and its first comment, the sweep's redeliveries) take turns, so only the first contact calls and the
    # other replies under it. Its record is held with it, and what turns a buzz down read with them: one
    # round trip reads them, one claims, one writes all that was done.
    ahead = attention_store.volume_keys(c.repository_id, (c.thing, c.number))
    with holding(services, c.thread, THREAD, ttl_seconds=TTL_SECONDS, along=((c.key, ""),), ahead=ahead) as thread_data:
        if not isinstance(thread_data.get("first"), int) or thread_data.get("release"):
            thread_data.update(_shown_as_release(services, c))  # a release's message: its latest (a repost moves it)
        c = _as_edited_since(c, thread_data)
        outcome, failed = _show_in_thread(services, c, thread_data)
    if failed is not None:
        raise failed
    return outcome


def _as_edited_since(c: Contribution, thread_data: dict[str, Any]) -> Contribution:
    """An opening with the text of an edit that came before it was shown (`edited` kept it in the thread),
    which counts as shown with it; any other contribution as it is."""
    latest = thread_data.get("latest")
    if c.comment or not isinstance(latest, dict) or str(latest.get("order") or "") < c.order:
        return c  # (an edit in the same second as the opening is taken as after it)
    thread_data["edited"] = newest(thread_data.get("edited"), str(latest["order"]))
    return replace(c, title=str(latest.get("title", c.title)), body=str(latest.get("body", c.body)))


def _show_in_thread(services: Services, c: Contribution, thread_data: dict[str, Any]) -> tuple[str, PagerError | None]:
    """Show the contribution (settled on its record) and keep in its thread where it was shown: also when a
    step after the message failed (the draft), since the message is shown all the same. The outcome, and
    the failure to raise once the thread is kept."""
    thread = Thread.from_data(thread_data)
    control = services.settings.control_repository

    def gather() -> Any:
        volume = attention_store.volume(services, c.repository_id, services.now(), (c.thing, c.number))
        return decide_opening(c, control, thread, volume)

    failed: PagerError | None = None
    try:
        settled = settle(services, c.key, gather=gather, ttl_seconds=TTL_SECONDS)
        outcome, shown = settled.outcome, settled.after
    except PagerError as exc:
        outcome, failed, shown = "failed", exc, services.store.load(c.key).data
    if isinstance(shown.get("message_id"), int):
        here = services.chat.is_current(shown.get("chat"), services.store)
        thread_data.update(thread_after(thread_data, c.repository, shown, here=here))
    return outcome, failed


def _shown_as_release(services: Services, c: Contribution) -> dict[str, Any]:
    """A pull request pager shows as a release (its message with 🔀): that message begins the thread, so a
    comment or review on it replies there; the thread remembers it is the release's (`release`), whose
    message is posted anew when it becomes ready to merge."""
    if c.thing != "pull":
        return {}
    shown = services.store.load(release_key(c.repository_id, c.number)).data
    if not isinstance(shown.get("message_id"), int) or not services.chat.is_current(shown.get("chat"), services.store):
        return {}  # none, or left behind in a chat pager no longer writes to: the thread begins anew
    return {"first": shown["message_id"], "chat": shown.get("chat"), "release": True}


def thread_after(data: Mapping[str, Any], repository: str, shown: Mapping[str, Any], *, here: bool = False) -> dict[str, Any]:
    """The thread once a contribution in it was shown: its first message, when it last buzzed, GitHub's time
    of its newest contribution (`newest`: a closing after it leaves the thread out of a summary). A message
    shown in the chat pager writes to now (`here`) while the first one is in another begins the thread anew:
    the chat moved, and a reply cannot reach a message left behind. Safe twice."""
    new = {**data, "repository": repository, "newest": newest(data.get("newest"), shown.get("order"))}
    moved = here and data.get("chat") is not None and str(shown.get("chat")) != str(data["chat"])
    if not isinstance(data.get("first"), int) or moved:
        new.update(first=shown["message_id"], chat=shown.get("chat"))
    at, sound = shown.get("shown_at"), shown.get("sound") or {}
    heard = sound.get("buzz") or sound.get("summary")  # it buzzed, or it is kept for a call that will
    if heard and isinstance(at, (int, float)) and at > float(data.get("buzzed_at") or 0):
        new["buzzed_at"] = at
    return new


def decide_called(moved_from: Any, shown: Any, at: float | None):
    """A call posted a contribution of this thread anew (`shown`: where it is now, `moved_from`: the message it
    replaced): the thread follows it when it was the thread's first message (its follow-ups reply to the new
    one), and counts as called `at` (None: without a sound; a follow-up within the hour of a call is silent).
    Safe twice."""

    def decide(data: dict[str, Any], now: float) -> Step:
        new = dict(data)
        if shown is not None and isinstance(moved_from, int) and data.get("first") == moved_from:
            new.update(first=shown.id, chat=shown.chat)
        if at is not None and at > float(data.get("buzzed_at") or 0):
            new["buzzed_at"] = at
        return Step("thread called", data=new if new != data else None)

    return decide


def edited(delivery: Delivery, services: Services) -> str:
    """An issue, pull request or discussion edited by its author from outside, in a thread already shown: a
    silent reply under the thread's first message with what it says now (once per edit; an edit older than
    one shown, delivered late, shows nothing). One that comes before the thread was shown is kept in the
    thread: should the opening come late (a redelivery carries the text it was opened with), it shows the
    newer text."""
    payload = delivery.payload
    if delivery.event == "pull_request" and is_release_pull(payload.get("pull_request"), payload, services.settings):
        return "ignored: release pull request"
    opened_as = read_contribution(delivery.event, payload, delivery.repository)
    if opened_as is None or not opened_as.number or not opened_as.repository_id or not opened_as.order:
        return "ignored: nothing edited"
    if not opened_as.outside or text(field(payload, "sender", "login")).lower() != opened_as.author.lower():
        return "ignored: not its author from outside"
    c = replace(opened_as, verb="edited", comment=f"e{opened_as.order}")
    with holding(services, c.thread, THREAD, ttl_seconds=TTL_SECONDS) as thread_data:
        thread = Thread.from_data(thread_data)
        thread_data.update(_kept_for_opening(thread_data, c))  # should its opening come late (with older text)
        if thread.first is None:
            return "kept for its opening: its thread was never shown"
        if c.order <= str(thread_data.get("edited") or ""):
            return "stale: a newer edit was shown"
        settled = settle(services, c.key, decide_edit(c, thread), ttl_seconds=TTL_SECONDS)
        if isinstance(settled.after.get("message_id"), int):
            thread_data.update(edited=c.order)
    return settled.outcome


def _kept_for_opening(thread_data: Mapping[str, Any], c: Contribution) -> dict[str, Any]:
    """The thread's `latest`: the newest edit's text, for an opening shown after it (`_as_edited_since`)."""
    if c.order <= str((thread_data.get("latest") or {}).get("order") or ""):
        return {}
    return {"latest": {"order": c.order, "title": c.title, "body": c.body}}


def decide_edit(c: Contribution, thread: Thread):
    """Show an edit once, silently, under the thread's first message."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("message_id") is not None:
            return Step("already shown")
        message = render(c)
        effect, _ = show(None, message, None, LOUD.sound(Moment.EDITED), reply_to=thread.first, reply_chat=thread.chat)
        return Step("sent", effect=effect, then=lambda sent: {**sent.fields(), "text": message, "shown_at": now})

    return decide


def decide_reopening(c: Contribution, word: str = "reopened"):
    """Show a contribution shown closed open again, once, as it reads now; take back a closing recorded
    without a message. One open already keeps the reopening's time (an older closing delivered late is
    then stale), and so does an outsider's not recorded yet; a reopening older than the record changes
    nothing."""

    def decide(data: dict[str, Any], now: float) -> Step:
        state = data.get("state")
        if c.order < str(data.get("order") or ""):  # (a tie: the one delivered last wins)
            return Step("stale: older than what is shown")
        reopened = {**data, "state": "open", "order": c.order}
        if not state or state == "open":
            kept = bool(data) or c.outside  # nothing is written for a maintainer's pager keeps nothing of
            return Step("open already", data=reopened if kept else None)
        message_id = data.get("message_id")
        if message_id is None:
            return Step("recorded: reopened", data=reopened)
        message = render(c) + f"\n↩️ {word}"
        return Step(
            f"edited: {word}",
            effect=EditMessage(message_id, message, chat=data.get("chat"), buttons=mute_button(c)),
            then=lambda shown: {**reopened, **shown.fields(), "text": message, "buttons": buttons_json(mute_button(c))},
        )

    return decide


def reopened(delivery: Delivery, services: Services) -> str:
    """A reopening (issues.reopened, pull_request.reopened, discussion.unanswered): what pager showed or
    recorded closed is open again (`decide_reopening`), so that a summary counts its thread as open."""
    c = read_contribution(delivery.event, delivery.payload, delivery.repository)
    if c is None or not c.number or not c.repository_id:
        return "ignored: nothing it reopens"
    word = "no longer answered" if delivery.event == "discussion" else "reopened"  # (unmarked as the answer)
    c = _as_edited_since(c, dict(services.store.load(c.thread, THREAD).data))  # as it reads now: a newer edit's text
    settled = settle(services, c.thread, decide_reopening(c, word), ttl_seconds=TTL_SECONDS)
    after = settled.after
    if c.outside and not after.get("drafted") and (after.get("state") == "open" or isinstance(after.get("message_id"), int)):
        # open and never shown, or shown and never drafted (its opening came while a closing was recorded, has
        # not come yet, or this reopening failed midway showing it): what is left of the opening is done now
        # (`opened` is safe twice)
        return f"{settled.outcome}; {opened(delivery, services)}"
    return settled.outcome


def closed(delivery: Delivery, services: Services) -> str:
    """A closing event: edit the message of the contribution it closes to its verdict."""
    payload = delivery.payload
    release = False
    if delivery.event == "issues":
        thing, obj, verdict = "issue", payload.get("issue"), "closed"
    elif delivery.event == "pull_request":
        obj = payload.get("pull_request")
        release = is_release_pull(obj, payload, services.settings)
        thing, verdict = "pull", "merged" if field(obj, "merged") is True else "closed"
    else:
        thing, obj, verdict = "discussion", payload.get("discussion"), "answered"
    number = integer(field(obj, "number"))
    if not number or delivery.repo is None:
        return "ignored: nothing it closes"
    order = order_of_time(field(obj, "updated_at"))
    author_outside = not release and is_outside(field(obj, "author_association"), field(obj, "user"))
    key = thing_key(delivery.repo.id, thing, number)
    # Not an outsider's: its verdict matters only where pager showed contributions in its thread (one read).
    known = author_outside or bool(services.store.load(key, THREAD).data)
    if release and not known:
        return "ignored: release pull request"
    return settle(services, key, decide_closing(verdict, order, author_outside, known), ttl_seconds=TTL_SECONDS).outcome
