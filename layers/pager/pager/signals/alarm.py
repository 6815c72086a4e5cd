"""Alarm (docs/signals.md): one message per repository listing what fails on its default branch, and one
for pager's own health ("⚙️ pager").

Entries, each keyed, with a title, a link and an order key:

    workflow:<workflow_id>     workflow_run.completed on the default branch: failure, timed_out,
                               startup_failure open it, success closes it (order: run number, attempt)
    suite:<app slug>           check_suite.completed on the default branch of an app other than
                               GitHub Actions: failure, timed_out, startup_failure open, success
                               closes (order: the commit's, then the run's: `suite_order`)
    code-scanning:<number>     code_scanning_alert created, appeared_in_branch (on the default branch),
                               reopened, reopened_by_user open it; fixed (on the default branch),
                               closed_by_user close it; updated_assignment changes nothing
    delivery:<guid>            the sweep's failed deliveries (`update_alarm`), in pager's own alarm;
                               the first few offer ↻ Deliver again
    pager:<what>               pager's own health, written by the sweep (pager.sweep.health): the list
                               not served, deliveries refused with 401, signals GitHub or Telegram refused

pager's own entries (`delivery:`, `pager:`) also keep a `detail`: their title is one plain sentence for the
maintainer, what happened and what to do, which heads ⚙️ pager's message (`OWN_MARK`, at most FIRST_LINE
characters in all); their detail, with status codes, setting names and make targets, is their line below it.

Records, all under the key `alarm#<repository id>` (the id survives a rename or a transfer: a pass
under the new name closes the failure shown under the old one, and the message shows the new name);
pager's own health under `alarm#control` (`CONTROL`: the sweep, which writes its `delivery:` and
`pager:` entries there, knows no repository; the control repository's own failures are kept by its id
like any other repository's):

    the head (the record itself)   message {id, chat, text, buttons, open}: the message shown, open until it
                                   says all clear; repository, branch: as GitHub called them last;
                                   since: when it went red; announced: {entry: its opening} of the
                                   openings that buzzed (pager.attention); seen: what was red meanwhile,
                                   for the all clear; fix: 🛠's dispatch {at, by, entries}, while it holds, with
                                   its run's link once GitHub lists the run (run) and how it ended (ended);
                                   retired: messages a repost left, still to delete
    one item per entry             `entry:<key>` = {state: open or closed, title, url, order, rank, at}

A delivery first settles its entry's item (no other delivery of the repository writes it, unless it
is about the same thing), then renders the message from every open entry as stored: a send without a
sound when the alarm was clear, a repost with a sound once an entry is still red past its grace
(ALARM_GRACE_MINUTES; pager's own at once), an edit when what it shows changed, all clear without
buttons when the last entry closed. The render is settled on the head after the entries are read,
conditional on the head's version: a delivery that finds another one rendering waits for it (as long
as its deadline lets it) and then renders again from what is stored, so every entry applied is shown,
and eight workflows failing at once end in one message that lists all eight. The every-minute check
renders an alarm whose grace ends without an event (`attention_store.index_alarm` keeps when).

The message lists the most important entries first (failing runs and other apps' suites, then failed
deliveries, then code scanning alerts by severity), the newest first within each, as many as fit
Telegram's 4096 characters, and then says how many more there are and where to see them.

Late: an entry's order key only grows, and a closed entry keeps the order that closed it for three
days (as long as GitHub lists a delivery): a failure older than the newest payload applied to its
entry changes nothing, and a success older than the failure shown closes nothing. A success writes
its order even when nothing was open, so that its failure, delivered late, cannot open the entry
afterwards. A code scanning alert's payload cannot order its events (none of its actions carries an
`updated_at` or a `fixed_at`: `created`, `fixed` and `reopened` share `created_at`) nor rank them (no
security severity): each delivery reads the alert from GitHub (the gather step); an opening applies only
while GitHub calls the alert open, a closing only while it does not, the entry's order key is the alert's
`updated_at` as GitHub has it then, and the entry is ranked by the severity GitHub gives it now. When GitHub
refuses to show the alert, the payload's time orders it and a tie changes nothing (`alert_order`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import UTC, tzinfo
from typing import Any

from .. import attention, attention_store
from ..attention import LOUD, Moment, Sound, Volume, heard_after, period_of, ripe
from ..engine.effects import Dispatch, EditMessage, Note, Posted, Redeliver, SendMessage, Step
from ..engine.settle import Busy, Held, settle
from ..errors import GitHubRefused, PagerError, Partial
from ..html import MAX_TEXT, escape, link, visible_length
from ..observe import logger
from ..routing import Delivery, Repository
from ..services import Services
from ..store import Record
from ..values import field, integer, newest, order_of_time, parse_iso, text
from ..words import FIRST_LINE, duration, fit, stamp, units, with_title
from .common import default_branch, repo_link, repo_url
from .messages import RETIRED, Shown, buttons_json, retired_after, show, tidy

FIX_EVENT = "pager-fix"
DELIVERY_PREFIX = "delivery:"
FIX_PREFIX = "fix:"
MUTE_PREFIX = "mute:a:"  # 🔕 on an alarm: mute:a:<repository id>
SEEN_PREFIX = "seen:"  # 👀 on an alarm: seen:<repository id>
OWN_PREFIX = "pager:"
OWN_MARK = "⚙️ "  # how pager's own message begins: then its most important entry's title, one plain sentence
OWN_TITLE = FIRST_LINE - units(OWN_MARK)  # room for that title in the first line (SPEC §6.1)
AGAIN_PREFIX = "again:"  # ↻ Deliver again of a failed delivery: again:<delivery id>
AGAIN_ALL = "again:all"  # ↻ all: every failed delivery of the alarm, delivered again by the sweep's next runs
REFUSED_AGAIN = "refused:again"  # ↻ of the deliveries refused with 401
PAGES_AGAIN = "refused:pages"  # ↻ of the signals GitHub or Telegram refused (answered 424)
AGAIN_BUTTONS = 3  # failed deliveries offered ↻ in one message, the most important first
# The ↻ buttons pager's own entries ask for (an entry's `button`, pager.sweep.health), each at most once a
# message: the entry's button, its label, its data.
OWN_BUTTONS = (
    ("refused", "↻ Deliver the refused deliveries again", REFUSED_AGAIN),
    ("pages", "↻ Deliver the refused pages again", PAGES_AGAIN),
)
ENTRY_ITEM = "entry:"
CLOSED_MEMORY_SECONDS = 3 * 24 * 3600  # GitHub lists a delivery (and so may redeliver it) for 3 days
FIX_PAYLOAD_ENTRIES = 40  # entries a pager-fix dispatch carries at most
FIX_PAYLOAD_BYTES = 60_000  # ... and fewer when they would pass this (GitHub refuses a client_payload over 64 KB)
FIX_HOLD_SECONDS = 3600  # after 🛠, its button stays away this long, unless the alarm changes or the fix's run ends first
FIX_RUN_NAME = "pager-fix "  # how the example pager-fix workflow names its runs: "pager-fix owner/name"
ENDED = {"success": "succeeded", "failure": "failed", "cancelled": "was cancelled", "timed_out": "timed out"}
FOOTER_ROOM = 400  # characters kept free in the message for the line saying how many more there are
SEEN_KEPT = 20  # what was red during an alarm, kept for its all clear
SEEN_SHOWN = 8  # ... and shown there, struck through

FAILING_RUN = frozenset({"failure", "timed_out", "startup_failure"})
FAILING_SUITE = frozenset({"failure", "timed_out", "startup_failure"})
OPENING_ALERT = frozenset({"created", "appeared_in_branch", "reopened", "reopened_by_user"})
CLOSING_ALERT = frozenset({"fixed", "closed_by_user"})
UNORDERED_ALERT = frozenset({"appeared_in_branch", "reopened", "reopened_by_user"})  # no time of their own
CLOSED_AT_TIE = "|closed"  # a code scanning closing's order key, read from its payload, ends so (`alert_order`)
ACTIONS_APP = "github-actions"
# What a failing conclusion is called on GitHub's pages of a run or a check.
FAILED = {"failure": "failed", "timed_out": "timed out", "startup_failure": "failed to start"}

# What an entry is worth a person's attention: failing CI first, then pager's own failures, then
# code scanning alerts by severity (GitHub's security severity, else the rule's severity).
RANK_CI, RANK_DELIVERY = 0, 1
SEVERITY_RANK = {"critical": 2, "high": 3, "error": 3, "medium": 4, "warning": 4, "low": 5, "note": 5}
RANK_OTHER = 6


CONTROL = "control"  # pager's own health: the `ref` of its alarm


@dataclass(frozen=True)
class Alarm:
    """Which alarm: `ref` keeps it and names it in a button's data (the repository's id, or CONTROL for
    pager's own health); `name` is the repository as the message shows it, `branch` its default branch
    ("": as the head last recorded it)."""

    ref: str
    name: str
    branch: str = ""


def alarm_of(repo: Repository, branch: str = "") -> Alarm:
    """A repository's alarm, kept by its id."""
    return Alarm(str(int(repo.id)), repo.name, branch)


def control_alarm(services: Services) -> Alarm:
    """pager's own alarm: failed deliveries and pager's health, written by the sweep."""
    return Alarm(CONTROL, services.settings.control_repository)


def alarm_key(ref: str) -> str:
    return f"alarm#{ref}"


@dataclass(frozen=True)
class Change:
    """Entries to open (key -> {title, url, order, rank}) and to close (key -> order, None: always)."""

    opened: Mapping[str, dict[str, Any]] = dataclass_field(default_factory=dict)
    closed: Mapping[str, str | None] = dataclass_field(default_factory=dict)
    unordered: frozenset[str] = frozenset()  # opened keys whose order key says nothing


# -- reading payloads -----------------------------------------------------------------------------------


def read_workflow_run(payload: Mapping[str, Any]) -> Change | str:
    run = payload.get("workflow_run")
    branch = default_branch(payload)
    if not branch or field(run, "head_branch") != branch:
        return "ignored: not the default branch"
    head_repo = field(run, "head_repository", "full_name")
    if head_repo and head_repo != field(payload, "repository", "full_name"):
        return "ignored: a fork's branch"
    workflow_id = field(run, "workflow_id") or field(payload, "workflow", "id")
    key = f"workflow:{workflow_id}"
    number = integer(field(run, "run_number"))
    attempt = integer(field(run, "run_attempt")) or 1
    order = f"{number:012d}.{attempt:04d}"
    conclusion = text(field(run, "conclusion"))
    if conclusion in FAILING_RUN:
        name = text(field(payload, "workflow", "name")) or text(field(run, "name")) or text(field(run, "path")) or key
        title = f"{name} run #{number}" + (f" (attempt {attempt})" if attempt > 1 else "") + f" {FAILED[conclusion]}"
        return Change(opened={key: {"title": title, "url": text(field(run, "html_url")), "order": order, "rank": RANK_CI}})
    if conclusion == "success":
        return Change(closed={key: order})
    return f"ignored: conclusion {conclusion or 'none'}"


def read_check_suite(payload: Mapping[str, Any]) -> Change | str:
    suite = payload.get("check_suite")
    app = field(suite, "app")
    slug = text(field(app, "slug")) or text(field(app, "name")) or str(field(app, "id") or "app")
    if slug == ACTIONS_APP:
        return "ignored: GitHub Actions (its workflow runs count)"
    branch = default_branch(payload)
    if not branch or field(suite, "head_branch") != branch:
        return "ignored: not the default branch"
    key = f"suite:{slug}"
    order = suite_order(suite)
    conclusion = text(field(suite, "conclusion"))
    if conclusion in FAILING_SUITE:
        repository = text(field(payload, "repository", "full_name"))
        sha = text(field(suite, "head_sha"))
        url = f"{repo_url(repository, payload)}/commit/{sha}/checks" if sha else repo_url(repository, payload)
        title = f"{text(field(app, 'name')) or slug} {FAILED[conclusion]} on {sha[:7] or branch}"
        return Change(opened={key: {"title": title, "url": url, "order": order, "rank": RANK_CI}})
    if conclusion == "success":
        return Change(closed={key: order})
    return f"ignored: conclusion {conclusion or 'none'}"


def suite_order(suite: Any) -> str:
    """A check suite's order key: its commit's first, then its run's. GitHub creates one suite per app and
    head commit when the commit is pushed, and a rerun (rerequest) keeps the suite, its `created_at`
    included, and moves its `updated_at`. So `created_at` orders the commits of one app's suites on the
    default branch as they were pushed, and `updated_at` the runs of one commit: a late success of an
    older commit's suite no longer closes a newer commit's failure, and a rerun on the same commit
    still does. Neither costs a call: both come with the payload."""
    created, updated = order_of_time(field(suite, "created_at")), order_of_time(field(suite, "updated_at"))
    return f"{created or updated}|{updated}"


def read_code_scanning_alert(payload: Mapping[str, Any], live: Mapping[str, Any] | None = None) -> Change | str:
    """The change an alert's event makes; `live` is the alert as GitHub has it now (its payload carries no
    security severity, and no time that orders its events): its rule ranks the entry, its `updated_at` orders
    it (`alert_order`)."""
    action = text(payload.get("action"))
    alert = payload.get("alert")
    number = integer(field(alert, "number"))
    if not number:
        return "ignored: no alert number"
    key = f"code-scanning:{number}"
    ref = text(payload.get("ref"))
    on_default = ref == f"refs/heads/{default_branch(payload)}"
    # A change by a person (reopened_by_user, closed_by_user) has no ref: it applies to the alert.
    if ref and not on_default:
        return "ignored: not the default branch"
    live_order = order_of_time(field(live, "updated_at"))
    if action in OPENING_ALERT:
        rule = field(live, "rule") if isinstance(field(live, "rule"), Mapping) else field(alert, "rule")
        what = text(field(rule, "description")) or text(field(rule, "id")) or "alert"
        severity = (text(field(rule, "security_severity_level")) or text(field(rule, "severity"))).lower()
        title = f"Code scanning alert #{number}: {what}" + (f" ({severity})" if severity else "")
        entry = {"title": title, "url": text(field(alert, "html_url")), "order": alert_order(alert, live, closing=False),
                 "rank": SEVERITY_RANK.get(severity, RANK_OTHER)}
        unordered = frozenset({key}) if action in UNORDERED_ALERT and not live_order else frozenset()
        return Change(opened={key: entry}, unordered=unordered)
    if action in CLOSING_ALERT:
        return Change(closed={key: alert_order(alert, live, closing=True)})
    return f"ignored: action {action or 'none'}"


def alert_order(alert: Any, live: Mapping[str, Any] | None, *, closing: bool) -> str:
    """A code scanning alert's order key. The alert as GitHub has it now orders its events: its `updated_at`
    moves with each change of its state (the REST API's alert has it; no webhook payload of the alert does,
    nor a `fixed_at`). When GitHub refuses to show it, only the payload's own times are left, and `created`,
    `fixed` and `reopened` carry one and the same, `created_at` (a dismissal its `dismissed_at`): there a tie
    changes nothing, so a closing's key sorts after an opening's of the same time (it ends in CLOSED_AT_TIE):
    a `created` delivered late, after its `fixed`, opens nothing, and a `fixed` still closes what it fixes.
    (`reopened`, `reopened_by_user` and `appeared_in_branch` come after a closing by what they are: read
    from their payload alone, they open whatever the order, `Change.unordered`.)"""
    live_order = order_of_time(field(live, "updated_at"))
    if live_order:
        return live_order
    order = newest(
        order_of_time(field(alert, "created_at")),
        order_of_time(field(alert, "fixed_at")),
        order_of_time(field(alert, "dismissed_at")),
        order_of_time(field(alert, "updated_at")),
    )
    return order + CLOSED_AT_TIE if closing and order else order


# -- an entry ---------------------------------------------------------------------------------------------


def entry_item(key: str) -> str:
    return ENTRY_ITEM + key


def _remembered(data: Mapping[str, Any], now: float) -> Mapping[str, Any]:
    """An entry as it counts now: a closed one is forgotten three days after it closed."""
    if data.get("state") == "closed" and float(data.get("at", now)) <= now - CLOSED_MEMORY_SECONDS:
        return {}
    return data


def decide_entry(wanted: Mapping[str, Any] | None, close_order: str | None, unordered: bool):
    """Open an entry (`wanted`) or close it (at `close_order`; None: whatever its order), unless the
    entry applied a newer payload already. Pure; its outcome says what became of it."""

    def decide(data: dict[str, Any], now: float) -> Step:
        known = _remembered(data, now)
        if wanted is not None:
            return _open_entry(known, wanted, unordered, now)
        return _close_entry(known, close_order, now)

    return decide


def _open_entry(known: Mapping[str, Any], wanted: Mapping[str, Any], unordered: bool, now: float) -> Step:
    """An opening applied to the entry as it counts now (`known`): stale behind a newer payload, a repeat of
    the one it shows, or the entry opened (or updated, kept open since it first opened)."""
    state, order = known.get("state"), known.get("order", "")
    if not unordered and known and wanted["order"] < order:
        return Step("stale")
    new = {"state": "open", **wanted, "order": newest(order, wanted["order"]) if unordered else wanted["order"],
           "at": known["at"] if state == "open" else now}
    if state == "open" and known.get("again") and known.get("delivery_id") == wanted.get("delivery_id"):
        new["again"] = known["again"]  # ↻ asked for the attempt the entry still shows
    if state == "open" and _same_but_time(known, new):
        return Step("repeated")
    return Step("opened" if state != "open" else "updated", data=new)


def _same_but_time(known: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether an open entry already holds all an opening would write, but when it opened."""
    return set(known) == set(new) and all(known.get(k) == v for k, v in new.items() if k != "at")


def _close_entry(known: Mapping[str, Any], close_order: str | None, now: float) -> Step:
    """A closing (at `close_order`; None: whatever its order) applied to the entry as it counts now (`known`)."""
    state, order = known.get("state"), known.get("order", "")
    if state != "open":
        if known and (close_order is None or close_order == order):
            return Step("repeated")  # closed by this very change before: its render may have failed
        if close_order is None or (known and close_order < order):
            return Step("unchanged")
        # A newer pass of an entry closed before: its closing's render may have failed, and this pass would
        # otherwise overtake the redelivery that renders it (then "unchanged"): it renders (at most a look).
        fate = "closed again" if known else "remembered"
        return Step(fate, data={"state": "closed", "order": close_order, "at": now})
    if close_order is not None and close_order < order:
        return Step("stale")
    return Step("closed", data={**known, "state": "closed", "order": newest(close_order, order), "at": now})


# What became of an entry that may have changed what the message shows, or repeats a payload applied
# before (whose render may have failed): then the message is rendered again.
VISIBLE = frozenset({"opened", "updated", "closed", "repeated", "closed again"})


# -- the message ------------------------------------------------------------------------------------------


def open_entries(items: Iterable[Record], now: float) -> dict[str, dict[str, Any]]:
    """The open entries among an alarm's items, by entry key."""
    return {
        record.item[len(ENTRY_ITEM):]: record.data
        for record in items
        if record.item.startswith(ENTRY_ITEM) and record.data.get("state") == "open"
    }


def own(key: str) -> bool:
    """Whether an entry is pager's own health (a failed delivery, a `pager:` entry), not a repository's."""
    return key.startswith((DELIVERY_PREFIX, OWN_PREFIX))


def fixable(key: str) -> bool:
    """Whether a fix in the repository could see the entry: not a failed delivery, not pager's own."""
    return not own(key)


def offers_fix(entries: Mapping[str, Any]) -> bool:
    """🛠 Start fix unless no entry is one a fix could see."""
    return any(fixable(key) for key in entries)


def shown_entries(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """What an alarm's message shows of its open entries: pager's own health is ⚙️ pager's alone (the record
    `alarm#control`), where a repository's failures never are (an earlier version kept the control repository's
    there too)."""
    health = alarm.ref == CONTROL
    return {k: v for k, v in entries.items() if own(k) == health}


def by_importance(entries: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Entry keys, the most important first: by rank, then the newest first."""
    return sorted(entries, key=lambda k: (int(entries[k].get("rank", RANK_OTHER)), -float(entries[k].get("at", 0)), k))


def failing_url(entries: Mapping[str, Mapping[str, Any]], repository: str) -> str:
    """Where to see what fails most in a repository: the most important open entry's own page (a workflow
    run's, a check suite's, a code scanning alert's), else the repository's Actions."""
    url = str(entries[by_importance(entries)[0]].get("url") or "") if entries else ""
    return url or f"{repo_url(repository)}/actions"


def grace_of(alarm: Alarm, grace: float) -> float:
    """An alarm's grace: a repository's failure may be a flake; pager's own health needs the maintainer now."""
    return 0.0 if alarm.ref == CONTROL else grace


def _line(entry: Mapping[str, Any], key: str) -> str:
    title = str(entry.get("detail") or entry.get("title") or key)  # pager's own entries: their words for the operator
    url = str(entry.get("url") or "")
    return f"• {link(url, title)}" if url else f"• {escape(title)}"


def _more(repository: str, hidden: list[str], entries: Mapping[str, Mapping[str, Any]]) -> str:
    """The line that says how many entries the message leaves out, and where to see them."""
    kinds = {"of pager's own": OWN_PREFIX, "code scanning alerts": "code-scanning:", "failed deliveries": DELIVERY_PREFIX,
             "failing checks": "suite:", "failing workflows": "workflow:"}
    where = {"code-scanning:": f"{repo_url(repository)}/security/code-scanning", "workflow:": f"{repo_url(repository)}/actions",
             "suite:": f"{repo_url(repository)}/commits"}
    parts = []
    for label, prefix in kinds.items():
        count = sum(1 for key in hidden if key.startswith(prefix))
        if count:
            url = where.get(prefix) or str(next(entries[k].get("url") for k in hidden if k.startswith(prefix)) or "")
            parts.append(link(url, f"{count} {label}") if url else f"{count} {label}")
    return f"… and {len(hidden)} more: " + ", ".join(parts)


@dataclass(frozen=True)
class View:
    """What an alarm's message says besides its entries: since when it is red, a fix under way, and the
    clock the times are shown on (TIMEZONE)."""

    since: float
    now: float
    zone: tzinfo
    fix: Mapping[str, Any] | None = None
    actions: str = ""  # the control repository's Actions, where a fix runs
    seen: Mapping[str, Any] | None = None  # who said they look at it (👀), and when


def headline(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]], top: str) -> tuple[str, bool]:
    """The first line, what a phone's notification shows: what is red, where, and the most important entry
    (linked when it is the only one: the message then lists nothing below), within FIRST_LINE characters;
    and whether its title had to be cut there (the message then lists it whole below). pager's own: that
    entry's title alone, one plain sentence (SPEC §6.1); how many more, and the details, are on the lines
    below."""
    label = str(entries[top].get("title") or top)
    if alarm.ref == CONTROL:
        label = fit(label, OWN_TITLE)  # already short, but for an entry a version before wrote
        title = link(str(entries[top]["url"]), label) if len(entries) == 1 and entries[top].get("url") else escape(label)
        return OWN_MARK + title, False
    more = f", and {len(entries) - 1} more" if len(entries) > 1 else ""
    where = f" on {escape(alarm.branch)}" if alarm.branch else ""
    line, cut = with_title(f"🚨 {repo_link(alarm.name)} is red{where}: ", label, more)
    if len(entries) == 1 and entries[top].get("url") and not cut:
        line = f"🚨 {repo_link(alarm.name)} is red{where}: {link(str(entries[top]['url']), label)}"
    return line, cut


def render(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]], view: View,
           limit: int = MAX_TEXT) -> tuple[str, list | None]:
    """The alarm's text and buttons: the headline, since when, a fix under way, the most important entries
    that fit, then how many more."""
    ordered = by_importance(entries)
    state = [f"since {stamp(view.since, view.zone)}"]
    if view.fix:
        state.append(fix_said(view.fix, view.zone, view.now, view.actions))
    health = alarm.ref == CONTROL
    if health and len(ordered) > 1:
        state.append(f"{len(ordered) - 1} more below")
    if view.seen:
        state.append(seen_said(view.seen, view.zone))
    head, cut = headline(alarm, entries, ordered[0])
    lines = [head, " · ".join(state)]
    used = sum(visible_length(line) + 1 for line in lines)
    # One entry: the headline is all (unless its title was cut there); but pager's own are all listed, with their
    # details, below its one sentence.
    shown = 1 if len(ordered) == 1 and not health and not cut else 0
    for key in ordered[shown:]:
        line = _line(entries[key], key)
        size = visible_length(line) + 1
        if used + size > limit - FOOTER_ROOM and shown < len(ordered) - 1:
            break
        lines.append(line)
        used += size
        shown += 1
    if shown < len(ordered):
        lines.append(_more(alarm.name, ordered[shown:], entries))
    fixing = view.fix is not None and not view.fix.get("ended")
    return "\n".join(lines), _buttons(alarm, entries, ordered[:shown], fixing=fixing, seen=bool(view.seen)) or None


def seen_said(ack: Mapping[str, Any], zone: tzinfo) -> str:
    """What an alarm says of its acknowledgement: who looks at it, since when."""
    by = f" by {escape(str(ack['by']))}" if ack.get("by") else ""
    return f"👀 seen{by} {stamp(float(ack['at']), zone)}"


def _buttons(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]], shown: list[str], *,
             fixing: bool, seen: bool = False) -> list[list[tuple[str, str]]]:
    """The alarm's buttons: 🛠 and 👀 for the alarm itself, 🔕 for its repository, then ↻ for what the
    entries shown offer to deliver again."""
    return _alarm_rows(alarm, entries, fixing, seen) + _own_rows(entries, shown) + _again_rows(entries, shown)


def _alarm_rows(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]], fixing: bool,
                seen: bool = False) -> list[list[tuple[str, str]]]:
    """🛠 Start fix, unless a fix is under way or none could see its entries; 👀 Seen for a repository's alarm
    nobody said they look at yet; 🔕 for a repository's alarm."""
    rows = []
    first = [("🛠 Start fix", f"{FIX_PREFIX}{alarm.ref}")] if offers_fix(entries) and not fixing else []
    if alarm.ref != CONTROL and not seen:
        first.append(("👀 Seen", f"{SEEN_PREFIX}{alarm.ref}"))
    if first:
        rows.append(first)
    if alarm.ref != CONTROL:
        rows.append([(f"🔕 Mute {alarm.name} 8 h", f"{MUTE_PREFIX}{alarm.ref}")])
    return rows


def _own_rows(entries: Mapping[str, Mapping[str, Any]], shown: list[str]) -> list[list[tuple[str, str]]]:
    """The buttons pager's own entries shown ask for."""
    own_buttons = {entries[k].get("button") for k in shown if k.startswith(OWN_PREFIX)}
    return [[(label, data)] for button, label, data in OWN_BUTTONS if button in own_buttons]


def _again_rows(entries: Mapping[str, Mapping[str, Any]], shown: list[str]) -> list[list[tuple[str, str]]]:
    """↻ all when more than one failed delivery is still to ask for, then ↻ for each of the first
    AGAIN_BUTTONS failed deliveries shown, named by their thing (numbered when two read the same)."""
    rows = []
    again = [k for k in shown if k.startswith(DELIVERY_PREFIX) and isinstance(entries[k].get("delivery_id"), int)]
    left = len(to_deliver_again(entries))
    if left > 1:
        rows.append([(f"↻ Deliver all {left} again", AGAIN_ALL)])
    labels: dict[str, int] = {}
    for key in again[:AGAIN_BUTTONS]:
        what = str(entries[key].get("short") or entries[key].get("thing") or "this delivery")[:40]
        labels[what] = labels.get(what, 0) + 1
        label = f"↻ Deliver again: {what}" + (f" ({labels[what]})" if labels[what] > 1 else "")
        rows.append([(label, f"{AGAIN_PREFIX}{entries[key]['delivery_id']}")])
    return rows


def render_clear(alarm: Alarm, view: View, seen: Mapping[str, Mapping[str, Any]]) -> str:
    """All clear, with what was red (struck through) and for how long."""
    red_for = duration(view.now - view.since)
    if alarm.ref == CONTROL:
        head = f"✅ pager is well again after {red_for}"
    else:
        where = f" on {escape(alarm.branch)}" if alarm.branch else ""
        head = f"✅ {repo_link(alarm.name)} is green again{where} after {red_for}"
    lines = [head]
    for key in list(seen)[:SEEN_SHOWN]:
        title, url = str(seen[key].get("title") or key), str(seen[key].get("url") or "")
        lines.append(f"• <s>{link(url, title) if url else escape(title)}</s>")
    if len(seen) > SEEN_SHOWN:
        lines.append(f"… and {len(seen) - SEEN_SHOWN} more")
    return "\n".join(lines)


def at(posted: Posted) -> dict[str, Any]:
    """Where the alarm's message is, as its head keeps it."""
    return {"id": posted.message_id, "chat": posted.chat}


def seen_after(seen: Any, entries: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, str]]:
    """What was red during the alarm, for its all clear: the most important first, at most SEEN_KEPT."""
    before = dict(seen) if isinstance(seen, Mapping) else {}
    now = {k: {"title": str(entries[k].get("title") or k)[:200], "url": str(entries[k].get("url") or "")[:500]}
           for k in by_importance(entries)[:SEEN_KEPT]}
    return dict(list({**now, **{k: v for k, v in before.items() if k not in now}}.items())[:SEEN_KEPT])


def fix_said(fix: Mapping[str, Any], zone: tzinfo, now: float, actions: str = "") -> str:
    """What an alarm says of the fix 🛠 started: by whom and when, or how its run ended, with a link to it (to
    the control repository's Actions, `actions`, until GitHub lists the run)."""
    by = f" by {escape(str(fix['by']))}" if fix.get("by") else ""
    ended = fix.get("ended")
    if isinstance(ended, Mapping):
        how = ENDED.get(str(ended.get("conclusion")), f"ended: {escape(str(ended.get('conclusion')))}")
        run = f" ({link(str(ended['url']), 'its run')})" if ended.get("url") else ""
        return f"🛠 the fix{by} {how} {stamp(float(ended.get('at') or now), zone)}{run}"
    where = str(fix.get("run") or actions)  # the run itself once GitHub lists it, else where it will be
    run = f" ({link(where, 'its run')})" if where else ""
    return f"🛠 fix started {stamp(float(fix['at']), zone)}{by}{run}"


def live_fix(fix: Any, entries: Mapping[str, Any], now: float) -> Mapping[str, Any] | None:
    """The fix 🛠 started, while the message says so: for FIX_HOLD_SECONDS, and only while the alarm lists
    what it listed then (a new failure or a closed one brings 🛠 back, as does the fix's run ending)."""
    if not isinstance(fix, Mapping) or not isinstance(fix.get("at"), (int, float)):
        return None
    if now >= float(fix["at"]) + FIX_HOLD_SECONDS:
        return None
    listed = fix.get("entries")
    if isinstance(listed, list) and sorted(listed) != sorted(k for k in entries if fixable(k)):
        return None
    return fix


def due_of(alarm: Alarm, data: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], grace: float) -> float | None:
    """When the alarm next needs a look without an event: an entry past its grace that has not buzzed (after
    the fix under way, if any), or a fix's hold ending (None: nothing comes due)."""
    if not entries:
        return None
    openings = {k: float(e.get("at", 0)) for k, e in entries.items()}
    heard = data.get("heard")
    buzz = attention.due(openings, float(heard) if isinstance(heard, (int, float)) else None, grace_of(alarm, grace))
    fix = data.get("fix")
    hold = None
    if isinstance(fix, Mapping) and isinstance(fix.get("at"), (int, float)):
        hold = float(fix["at"]) + FIX_HOLD_SECONDS
        if buzz is not None and not fix.get("ended") and buzz < hold:
            buzz = None  # held by the fix under way (decide_render): its end renders the alarm, or the hold's does
    called = called_at(data)
    if buzz is not None and called is not None and alarm.ref != CONTROL and called <= buzz:
        buzz = max(buzz, called + attention.NOW_AGAIN_SECONDS)  # not within the hour of its last buzz (`ring`)
    return min((t for t in (buzz, hold) if t is not None), default=None)


def summary_note(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]], period: tuple[float, float],
                 at: float) -> Note:
    """What the quiet hours' summary keeps of an alarm that came past its grace inside them (at `at`): what
    fails most, linked to it, and the message to post anew when it is the one thing the summary holds."""
    top = by_importance(entries)[0] if entries else ""
    what = str(entries[top].get("title") or top) if top else "all clear again"
    if alarm.ref == CONTROL:
        return Note("health", alarm.ref, f"pager: {what}", "", period, alarm.name, at, message=alarm_key(alarm.ref))
    return Note("alarm", alarm.ref, f"{alarm.name}: {what}", failing_url(entries, alarm.name), period, alarm.name, at,
                message=alarm_key(alarm.ref))


def decide_render(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]], *, grace: float = 0.0,
                  volume: Volume = LOUD, zone: tzinfo | None = None, actions: str = ""):
    """Make the head's message show `entries` (the open ones, as stored).

    The first failure of a clear alarm is sent without a sound (ALARM_OPENED); an entry still open past its
    grace that has not buzzed yet (`heard`: every opening until then did) reposts the message with one
    (ALARM_RED, or HEALTH for pager's own), once, at the urgency now: whatever buzzed before, but a
    repository's alarm not within the hour of its last buzz (`called`; what opened meanwhile rings when the
    hour ends); other changes edit it; the last entry closing edits it to all clear, with what was red
    struck through. A repost's old message is deleted next (`tidy`). A message shown by a version before
    `heard` counts as heard: it buzzed when it was sent. An alarm seen (👀, `ack`) shows by whom until
    something opens after it."""
    entries = shown_entries(alarm, entries)
    zone = zone or UTC
    grace = grace_of(alarm, grace)

    def decide(data: dict[str, Any], now: float) -> Step:
        pending = _left_to_do(alarm, entries, data, now)
        if pending is not None:
            return pending
        message = data.get("message") or {}
        data = {**data, "repository": alarm.name, **({"branch": alarm.branch} if alarm.branch else {})}
        shown = Shown(int(message["id"]), message.get("chat"), str(message.get("text", "")), message.get("buttons")) \
            if message.get("open") and isinstance(message.get("id"), int) else None
        if entries:
            look = Look(alarm, entries, grace, volume, zone, actions)
            return _red(look, data, shown, bool(message.get("open")), now)
        if shown is not None:
            return _clear(alarm, data, shown, zone, now)
        return Step("alarm unchanged")

    return decide


@dataclass(frozen=True)
class Look:
    """What a render of a red alarm decides with, besides its head: its open entries, its grace, the volume
    (a mute, quiet hours, the phone's rest), the clock, and where a fix runs."""

    alarm: Alarm
    entries: Mapping[str, Mapping[str, Any]]
    grace: float
    volume: Volume
    zone: tzinfo
    actions: str


def _left_to_do(alarm: Alarm, entries: Mapping[str, Mapping[str, Any]], data: dict[str, Any], now: float) -> Step | None:
    """What an earlier render left to do before anything else: delete a reposted message, keep a note owed
    to the quiet hours' summary."""
    tidying = tidy(data)
    if tidying is not None:
        return tidying
    owed = period_of({"period": data.get("owed")})
    if owed is not None:  # an opening heard inside quiet hours: kept for their summary, once
        rest = {k: v for k, v in data.items() if k != "owed"}
        return Step("kept for the summary", effect=summary_note(alarm, entries, owed, now), then=lambda _: rest)
    return None


def ring(look: Look, data: Mapping[str, Any], showing: bool, fix: Mapping[str, Any] | None,
         now: float) -> tuple[Sound | None, float | None]:
    """Whether this render rings (the sound of ALARM_RED, or HEALTH for pager's own; None: no moment that
    buzzes), and `heard` after it. An opening past its grace that has not buzzed rings; not while a fix
    is under way (🛠 pressed, its run not ended: the person pressing knows; its run failing, or its hold
    ending, with the alarm still red, rings then), nor within the hour of the repository alarm's last
    buzz (NOW_AGAIN_SECONDS: it rings when the hour ends, `due_of`)."""
    openings = {k: float(e.get("at", now)) for k, e in look.entries.items()}
    known = data.get("heard") if "heard" in data else now  # shown by an earlier version: it buzzed then
    heard = float(known) if showing and isinstance(known, (int, float)) else None
    rings = bool(ripe(openings, heard, look.grace, now)) and not (fix is not None and not fix.get("ended"))
    if rings and look.alarm.ref != CONTROL and attention.again_at(called_at(data), now) is not None:
        rings = False
    if not rings:
        return None, heard
    sound = look.volume.sound(Moment.HEALTH if look.alarm.ref == CONTROL else Moment.ALARM_RED)
    return sound, heard_after(heard, look.grace, now)


def called_at(data: Mapping[str, Any]) -> float | None:
    """When the alarm's message last buzzed (kept across its all clear: a flapping repository rings once an hour)."""
    called = data.get("called")
    return float(called) if isinstance(called, (int, float)) else None


def seen_of(data: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The acknowledgement (👀) an alarm shows: who said they look at it and when, until something opens after it."""
    ack = data.get("ack")
    if not isinstance(ack, Mapping) or not isinstance(ack.get("at"), (int, float)):
        return None
    if any(float(e.get("at", 0)) > float(ack["at"]) for e in entries.values()):
        return None
    return ack


def _red(look: Look, data: dict[str, Any], shown: Shown | None, showing: bool, now: float) -> Step:
    """The render of an alarm with open entries: sent, reposted with a sound, edited, or unchanged."""
    alarm, entries = look.alarm, look.entries
    fix = live_fix(data.get("fix"), entries, now)
    if fix is None:
        data.pop("fix", None)
    ack = seen_of(data, entries) if showing else None  # (kept while something newer is open: a flake closes)
    sound, heard = ring(look, data, showing, fix, now)
    since = _red_since(data, entries, showing, now)
    body, buttons = render(alarm, entries, View(since, now, look.zone, fix, look.actions, ack))
    new = _red_data(data, entries, showing, since, heard, sound, now)
    effect, reposted = show(shown, body, buttons, sound)
    if sound is not None and sound.period is not None:  # heard inside quiet hours: kept for their summary
        if effect is None:
            return Step("kept for the summary", effect=summary_note(alarm, entries, sound.period, now),
                        then=lambda _: new)
        new["owed"] = list(sound.period)  # noted by the step after the message's (in one claim)
    if effect is None:
        return Step("alarm unchanged", data=new if new != data else None)
    retired = retired_after(data, shown, reposted)
    return Step(_red_shown(shown, reposted, effect), effect=effect, then=lambda sent: {
        **new, "message": {**at(sent), "text": body, "buttons": buttons_json(buttons), "open": True},
        **({RETIRED: retired} if retired else {})})


def _red_since(data: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], showing: bool, now: float) -> float:
    """Since when a red alarm is red: as its message says (else its oldest open entry), or from now on when
    no message of it is open."""
    if not showing:
        return now
    return float(data.get("since") or min(float(e.get("at", now)) for e in entries.values()))


def _red_data(data: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]], showing: bool, since: float,
              heard: float | None, sound: Sound | None, now: float) -> dict[str, Any]:
    """A red alarm's head after its render, but for the message: since when it is red, what was red (`seen`),
    when it was heard and last buzzed; a fix is kept only while the message that shows it is open."""
    new = {**data, "since": since, "seen": seen_after(data.get("seen") if showing else None, entries), "heard": heard}
    new.pop("cleared", None)
    if not showing:
        new = {k: v for k, v in new.items() if k != "fix"}
    if sound is not None and sound.buzz:
        new["called"] = now
    return new


def _red_shown(shown: Shown | None, reposted: bool, effect: SendMessage | EditMessage) -> str:
    """What a render that changes a red alarm's message did to it (the step's outcome)."""
    what = "alarm opened" if shown is None else "alarm reposted" if reposted else "alarm updated"
    return what + (" with a sound" if isinstance(effect, SendMessage) and effect.notify else "")


def _clear(alarm: Alarm, data: dict[str, Any], shown: Shown, zone: tzinfo, now: float) -> Step:
    """The last entry closed: the message says all clear, with what was red struck through, and no buttons."""
    since = float(data.get("since") or now)
    clear = render_clear(alarm, View(since, now, zone), data.get("seen") or {})
    rest = {k: v for k, v in data.items() if k not in ("fix", "heard", "seen", "since", "ack")}
    return Step("all clear", effect=EditMessage(shown.id, clear, chat=shown.chat),
                then=lambda sent: {**rest, "cleared": {"since": since, "at": now},
                                   "message": {**at(sent), "text": clear, "buttons": None, "open": False}})


def decide_rang(at: float):
    """A call named the alarm among other things, with a sound, at `at`: it rang then (the hour before it rings
    again runs from it, as from its own buzz)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        called = called_at(data)
        if not data or (called is not None and called >= at):
            return Step("")
        return Step("rang with a call", data={**data, "called": at})

    return decide


# -- 👀 Seen -----------------------------------------------------------------------------------------------


def decide_seen(by: str = "", entries: Mapping[str, Mapping[str, Any]] | None = None):
    """👀 on a red alarm (its open `entries`): someone looks at it. Who and when are kept (`ack`) and shown;
    every opening until now counts as heard, so the alarm is not called again until something new fails in
    it. A second press says who saw it first; one after something new failed is seen anew."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if not field(data, "message", "open"):
            return Step("✅ all clear: nothing to look at")
        ack = seen_of(data, entries or {})
        if ack is not None and ack.get("by"):
            return Step(f"👀 seen already, by {ack['by']}")
        heard = data.get("heard")
        heard = max(float(heard), now) if isinstance(heard, (int, float)) else now
        return Step("👀 seen: it is not called again until something new fails in it",
                    data={**data, "ack": {"by": by, "at": now}, "heard": heard})

    return decide


# -- Start fix --------------------------------------------------------------------------------------------


def fix_payload(repository: str, data: Mapping[str, Any], entries: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What the control repository's pager-fix workflow gets as `client_payload`: the most important
    entries, as many as fit GitHub's limits (FIX_PAYLOAD_ENTRIES, FIX_PAYLOAD_BYTES as sent: JSON with
    non-ASCII escaped), and how many more."""
    keys = [key for key in by_importance(entries) if fixable(key)]
    shown = [{"key": key, "title": str(entries[key].get("title", ""))[:300], "url": str(entries[key].get("url", ""))[:500]}
             for key in keys[:FIX_PAYLOAD_ENTRIES]]
    while True:
        payload = {"repository": repository, "entries": shown, "more": len(keys) - len(shown),
                   "message_id": field(data, "message", "id")}
        if len(json.dumps(payload).encode()) <= FIX_PAYLOAD_BYTES or not shown:
            return payload
        shown = shown[:-1]


def decide_fix(control_repository: str, entries: Mapping[str, Mapping[str, Any]], by: str = ""):
    """🛠 Start fix: dispatch pager-fix once per alarm (for the repository its head names), and record who and
    when, which the message then shows; a second press while that fix holds says so."""

    def decide(data: dict[str, Any], now: float) -> Step:
        repository = text(data.get("repository"))
        if not data.get("message"):
            return Step("this alarm is no longer known")
        if not entries or not field(data, "message", "open") or not repository:
            return Step("✅ all clear: nothing to fix")
        if not offers_fix(entries):
            return Step("nothing here a fix in the repository could see")
        fix = live_fix(data.get("fix"), entries, now)
        if fix is not None and not fix.get("ended"):
            who = f" by {fix['by']}" if fix.get("by") else ""
            return Step(f"🛠 a fix was started{who} already")
        listed = sorted(k for k in entries if fixable(k))
        return Step(
            "🛠 fix started",
            effect=Dispatch(control_repository, FIX_EVENT, fix_payload(repository, data, entries)),
            then=lambda _: {**data, "fix": {"at": now, "by": by, "entries": listed, "message_id": field(data, "message", "id")}},
        )

    return decide


# -- ↻ Deliver again -------------------------------------------------------------------------------------


def decide_again(delivery_id: int):
    """↻ on a failed delivery's entry: ask GitHub for one more attempt, once per attempt the entry shows.
    A press while that ask is recorded says so and asks nothing: ten presses, at once or one after
    another, ask once. The sweep's next change of the entry (the attempt asked for failed too: a newer
    `delivery_id`) makes room for another press; a pass closes the entry."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("state") != "open" or data.get("delivery_id") != delivery_id:
            return Step("this delivery is no longer in the alarm")
        if data.get("again") == delivery_id:
            return Step("↻ already asked for: the next sweep shows whether it passed")
        return Step("↻ GitHub delivers it again; the next sweep shows whether it passed",
                    effect=Redeliver(delivery_id), then=lambda _: {**data, "again": delivery_id})

    return decide


def to_deliver_again(entries: Mapping[str, Mapping[str, Any]], room: int | None = None) -> list[tuple[str, int]]:
    """The failed deliveries ↻ all still has to ask for (entry key, the attempt): those whose attempt no ↻
    asked for yet, the oldest first, at most `room`."""
    left = sorted(((str(e.get("order", "")), key, e["delivery_id"]) for key, e in entries.items()
                   if key.startswith(DELIVERY_PREFIX) and isinstance(e.get("delivery_id"), int)
                   and e.get("again") != e["delivery_id"]))
    return [(key, delivery_id) for _, key, delivery_id in left[:room]]


# -- the shell ----------------------------------------------------------------------------------------


def entries_now(services: Services, ref: str) -> dict[str, dict[str, Any]]:
    """The open entries of an alarm, as its items hold them (one query)."""
    return open_entries(services.store.items(alarm_key(ref)), services.now())


def record(services: Services, ref: str, change: Change) -> list[str]:
    """Settle each entry of a change (the table only); what became of each."""
    key = alarm_key(ref)
    fates = []
    for entry, wanted in change.opened.items():
        decide = decide_entry(wanted, None, entry in change.unordered)
        fates.append(settle(services, key, decide, item=entry_item(entry), ttl_seconds=None).idle)
    for entry, order in change.closed.items():
        decide = decide_entry(None, order, False)
        fates.append(settle(services, key, decide, item=entry_item(entry), ttl_seconds=CLOSED_MEMORY_SECONDS).idle)
    return fates


RENDERS = frozenset({"SendMessage", "EditMessage", "DeleteMessage"})  # the effects of a render, as a claim names them
RENDERS_AGAIN = 4  # renders one delivery carries out at most for what others stored meanwhile


def actions_url(services: Services) -> str:
    """The control repository's Actions, filtered to the runs a dispatch started (where 🛠's fix runs)."""
    return f"https://github.com/{services.settings.control_repository}/actions?query=event%3Arepository_dispatch"


def render_now(services: Services, alarm: Alarm, *, leave_to_render_under_way: bool = False) -> str:
    """Make the message show the open entries as stored (a Telegram call per render), then keep the
    every-minute check's index in step (when it comes due) and note for the quiet hours' summary an alarm
    that would have buzzed inside them.

    A render reads the entries, then claims the head: an entry another delivery stores meanwhile is not
    in it. So the delivery that rendered reads the entries again afterwards and renders once more if the
    message would change (a few times at most; past its deadline it answers 500, and its redelivery
    renders; so does one whose entries keep changing after RENDERS_AGAIN renders: the others left their
    entries to it). With `leave_to_render_under_way`, a delivery whose entry is stored and that finds
    another delivery rendering answers at once instead of waiting for it: that render's next look shows
    its entry (it was stored before that render released its claim). A claim of another kind (🛠's
    dispatch) is waited for, as before."""
    key = alarm_key(alarm.ref)
    settings = services.settings
    last: dict[str, Any] = {}

    def gather() -> Any:
        entries = entries_now(services, alarm.ref)
        repository_id = int(alarm.ref) if alarm.ref.isdigit() else None
        volume = attention_store.volume(services, repository_id, services.now())
        last.update(entries=entries, volume=volume)
        return decide_render(alarm, entries, grace=settings.alarm_grace, volume=volume, zone=settings.zone,
                             actions=actions_url(services))

    shown: list[str] = []
    for _ in range(RENDERS_AGAIN):
        try:
            settled = settle(services, key, gather=gather, wait=not leave_to_render_under_way)
        except Held as held:
            if held.effect in RENDERS:
                return "; ".join(shown) or "shown by the render under way"
            settled = settle(services, key, gather=gather)
        if not settled.performed:
            break
        shown.append(settled.outcome)
    else:
        raise Busy(f"{key} kept changing over {RENDERS_AGAIN} renders: its redelivery renders what is left")
    _attend(services, alarm, settled.after, last)
    return "; ".join(shown) or settled.idle


def _attend(services: Services, alarm: Alarm, after: Mapping[str, Any], last: Mapping[str, Any]) -> None:
    """After a render: the check's index (since when the alarm is red, when it next comes due)."""
    entries = shown_entries(alarm, last.get("entries") or {})
    red = bool(field(after, "message", "open")) and bool(entries)
    attention_store.index_alarm(services, alarm.ref, repository=alarm.name, branch=str(after.get("branch") or ""),
                                since=float(after.get("since") or services.now()) if red else None,
                                due=due_of(alarm, after, entries, services.settings.alarm_grace) if red else None)


def apply(services: Services, alarm: Alarm, change: Change) -> tuple[str, bool]:
    """Settle each entry of a change, then render the message if what it shows may have changed (or
    leave it to a render under way). Returns the outcome and whether an entry opened or closed."""
    fates = record(services, alarm.ref, change)
    changed = any(fate in ("opened", "closed") for fate in fates)
    if not VISIBLE.intersection(fates):
        return "alarm unchanged", changed
    return render_now(services, alarm, leave_to_render_under_way=True), changed


def delivery_times(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, float]:
    """Of open entries, the `delivery:<guid>` ones: guid -> the time of the event's newest failed attempt."""
    return {
        key[len(DELIVERY_PREFIX):]: parse_iso(entry.get("order")) or float(entry.get("at", 0))
        for key, entry in entries.items()
        if key.startswith(DELIVERY_PREFIX)
    }


# What a sweep's entry keeps besides its line: its details below it, ↻'s attempt, a button, and what it is about
# (a delivery's event, repository and thing, which pager's own health names once GitHub no longer keeps the
# delivery; `short` labels its ↻).
ENTRY_FIELDS = ("detail", "delivery_id", "button", "event", "repository_id", "repository", "thing", "short")


def record_entries(services: Services, ref: str, *, opened: Mapping[str, Mapping[str, Any]],
                   closed: Iterable[str]) -> bool:
    """Open, update and close the sweep's entries of a repository's alarm (`delivery:` and `pager:`),
    in the table only (no call to Telegram: `render_now` shows them). True when an entry opened or
    closed. Safe twice."""
    change = Change(
        opened={
            key: {"title": str(entry.get("title", "")), "url": str(entry.get("url", "")), "order": str(entry.get("order", "")),
                  "rank": RANK_CI if key.startswith(OWN_PREFIX) else RANK_DELIVERY,
                  **{k: entry[k] for k in ENTRY_FIELDS if entry.get(k) is not None}}
            for key, entry in opened.items()
        },
        closed={key: None for key in closed},
    )
    return any(fate in ("opened", "closed") for fate in record(services, ref, change))


def update_alarm(services: Services, alarm: Alarm, *, opened: Mapping[str, Mapping[str, Any]], closed: Iterable[str]) -> bool:
    """Open and close the sweep's `delivery:<guid>` entries, then render the message from what is
    stored (also with nothing to open or close: a render that failed before). True when an entry
    opened or closed. Raises Transient on failure; the next call applies the same change again."""
    changed = record_entries(services, alarm.ref, opened=opened, closed=closed)
    render_now(services, alarm)
    return changed


def start_fix(services: Services, ref: str, by: str = "") -> str:
    """The 🛠 Start fix press (by whom): the answer to show the person. The message then says who started
    it and when, without 🛠, until the fix's hold ends or the alarm changes."""
    control = services.settings.control_repository
    which = Alarm(ref, "")
    decide = lambda: decide_fix(control, shown_entries(which, entries_now(services, ref)), by)  # noqa: E731
    settled = settle(services, alarm_key(ref), gather=decide, wait=False)
    if not settled.after.get("fix"):
        return settled.outcome
    return _shown_after(services, ref, settled)


def seen_press(services: Services, ref: str, by: str = "") -> str:
    """The 👀 press (by whom): the answer to show the person. The message then says who looks at it and
    since when, without 👀, and the alarm is not called again until something new fails in it."""
    settled = settle(services, alarm_key(ref), gather=lambda: decide_seen(by, entries_now(services, ref)), wait=False)
    if not settled.after.get("ack"):
        return settled.outcome
    return _shown_after(services, ref, settled)


def _shown_after(services: Services, ref: str, settled: Any) -> str:
    """After a press changed the head: render the message (also for a press after one whose render failed:
    the message catches up); the press's outcome is the answer, and a render that fails is left to the
    every-minute check."""
    head = settled.after
    shown = Alarm(ref, str(head.get("repository") or ""), str(head.get("branch") or ""))
    try:
        render_now(services, shown)
    except PagerError as exc:
        # The press is recorded: that is the answer. The every-minute check renders the message.
        _render_soon(services, shown, head)
        raise Partial(f"{settled.outcome}, then: {exc}", said=f"{settled.outcome} (the message shows it in a minute)") from exc
    return settled.outcome


def _render_soon(services: Services, alarm: Alarm, head: Mapping[str, Any]) -> None:
    """Have the every-minute check render a red alarm whose render failed (its index: due now)."""
    now = services.now()
    try:
        attention_store.index_alarm(services, alarm.ref, repository=alarm.name, branch=alarm.branch,
                                    since=float(head.get("since") or now), due=now)
    except PagerError as exc:  # the next delivery or press about it renders it
        logger.warning("alarm not indexed to render", extra={"alarm": alarm.ref, "error": type(exc).__name__})


def deliver_again(services: Services, ref: str, delivery_id: int) -> str:
    """The ↻ press on a failed delivery's entry: the answer to show the person. Claimed on the entry's
    own record, like 🛠 on the alarm's and 🔀 on the release's."""
    entries = entries_now(services, ref)
    key = next((k for k, entry in entries.items() if k.startswith(DELIVERY_PREFIX) and entry.get("delivery_id") == delivery_id),
               None)
    if key is None:
        return "this delivery is no longer in the alarm"
    settled = settle(services, alarm_key(ref), decide_again(delivery_id), item=entry_item(key), wait=False)
    return settled.performed[0] if settled.performed else settled.idle


def deliver_again_picked(services: Services, ref: str, picks: Iterable[tuple[str, int]]) -> int:
    """↻ all's picks of a sweep run, each claimed on its entry like a ↻ press; how many GitHub took. A
    failure is left to the next run (the entry is picked again)."""
    took = 0
    for key, delivery_id in picks:
        try:
            settled = settle(services, alarm_key(ref), decide_again(delivery_id), item=entry_item(key), wait=False)
        except PagerError as exc:
            logger.warning("↻ all: not asked for yet", extra={"entry": key, "error": type(exc).__name__, "reason": str(exc)})
            continue
        took += bool(settled.performed)
    return took


def _apply(delivery: Delivery, services: Services, change: Change | str) -> str:
    if isinstance(change, str):
        return change
    repo = delivery.repo
    if repo is None:
        return "ignored: no repository id"
    return apply(services, alarm_of(repo, default_branch(delivery.payload)), change)[0]


def workflow_run(delivery: Delivery, services: Services) -> str:
    """workflow_run.completed: a run on the default branch opens or closes its workflow's entry; a run of
    the control repository's pager-fix workflow that ends (its run-name "pager-fix owner/name", as the
    example workflow sets it) ends the fix its alarm shows, and brings 🛠 back. That run is the fix's, not the
    control repository's own CI: it opens no alarm there (its failure is said in the alarm it was for, and a
    🛠 on the control repository would ask for a fix of the fixer)."""
    fixed = fixed_repository(delivery.payload, services.settings.control_repository)
    change = read_workflow_run(delivery.payload)
    if fixed:
        ended = fix_ended(services, fixed, delivery.payload)
        if isinstance(change, Change) and change.closed and not change.opened:
            # one that passes still closes what a failed one opened there before this version
            return f"{ended}; {_apply(delivery, services, change)}"
        return ended
    return _apply(delivery, services, change)


def fixed_repository(payload: Mapping[str, Any], control_repository: str) -> str:
    """The repository a pager-fix run of the control repository was for ("" for any other run)."""
    run = payload.get("workflow_run")
    title = text(field(run, "display_title"))
    if (text(field(payload, "repository", "full_name")).lower() != control_repository.lower()
            or text(field(run, "event")) != "repository_dispatch" or not title.startswith(FIX_RUN_NAME)):
        return ""
    return title[len(FIX_RUN_NAME):].strip()


def _red_alarm(services: Services, repository: str) -> attention_store.Red | None:
    """The red alarm of a repository named as a pager-fix run names it (None: it is not red)."""
    return next((r for r in attention_store.index(services).red if r.repository.lower() == repository.lower()), None)


def fix_started(delivery: Delivery, services: Services) -> str:
    """workflow_run.requested: a run of the control repository's pager-fix workflow (as `fixed_repository` tells)
    started for a red alarm's fix. GitHub lists a run, and sends `requested` with its `html_url`, from when it
    is created (GitHub's "Webhook events and payloads", workflow_run): the message's "its run" then links the
    run itself instead of the control repository's Actions. Any other run is ignored at once, without a read."""
    fixed = fixed_repository(delivery.payload, services.settings.control_repository)
    if not fixed:
        return "ignored: not a pager-fix run of the control repository"
    run = delivery.payload.get("workflow_run")
    url = text(field(run, "html_url"))
    if not url:
        return "ignored: a pager-fix run without its link"
    red = _red_alarm(services, fixed)
    if red is None:
        return f"the fix of {fixed} started; its alarm is not red"
    started = {"url": url, "at": parse_iso(field(run, "created_at")) or services.now()}
    settled = settle(services, alarm_key(red.ref), decide_fix_run(started))
    if field(settled.after, "fix", "run"):  # also when linked before: that delivery's render may have failed
        render_now(services, Alarm(red.ref, red.repository, red.branch))
    return settled.outcome


def decide_fix_run(started: Mapping[str, Any]):
    """Record the link of the fix's run, once: the first run created since 🛠 was pressed (a run created
    before the fix, a second delivery, or a run of a fix that ended, changes nothing)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        fix = data.get("fix")
        if not isinstance(fix, Mapping):
            return Step("no fix under way")
        if fix.get("ended"):
            return Step("the fix's run ended already")
        if fix.get("run"):
            return Step("the fix's run is linked already")
        if float(started.get("at") or now) < float(fix.get("at") or 0):
            return Step("stale: a run from before the fix")
        return Step("fix run linked", data={**data, "fix": {**fix, "run": str(started["url"])}})

    return decide


def fix_ended(services: Services, repository: str, payload: Mapping[str, Any]) -> str:
    """The red alarm of `repository` says its fix's run ended (its conclusion and link), and offers 🛠 again."""
    run = payload.get("workflow_run")
    red = _red_alarm(services, repository)
    if red is None:
        return f"the fix of {repository} ended; its alarm is not red"
    ended = {"conclusion": text(field(run, "conclusion")), "url": text(field(run, "html_url")),
             "at": parse_iso(field(run, "updated_at")) or services.now()}
    settled = settle(services, alarm_key(red.ref), decide_fix_end(ended))
    if settled.after.get("fix"):
        render_now(services, Alarm(red.ref, red.repository, red.branch))
    return settled.outcome


def decide_fix_end(ended: Mapping[str, Any]):
    """Record that the fix's run ended, once (a run started before the fix, or a second delivery, changes nothing)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        fix = data.get("fix")
        if not isinstance(fix, Mapping) or fix.get("ended"):
            return Step("no fix under way")
        if float(ended.get("at") or now) < float(fix.get("at") or 0):
            return Step("stale: a run from before the fix")
        return Step("fix ended", data={**data, "fix": {**fix, "ended": dict(ended)}})

    return decide


def check_suite(delivery: Delivery, services: Services) -> str:
    """check_suite.completed: another app's suite on the default branch opens or closes its entry."""
    return _apply(delivery, services, read_check_suite(delivery.payload))


def code_scanning(delivery: Delivery, services: Services) -> str:
    """code_scanning_alert: an alert on the default branch opens or closes its entry, as GitHub has the
    alert now (gather): an opening while GitHub calls it closed, or a closing while GitHub calls it
    open, is stale, and the entry is ordered by the alert's `updated_at`. The payloads' times cannot order
    them: no action carries a time of its own beyond `created_at` (a dismissal its `dismissed_at`); with
    the alert unreadable, a tie of those changes nothing (`alert_order`)."""
    change = read_code_scanning_alert(delivery.payload)
    if not isinstance(change, Change):
        return _apply(delivery, services, change)
    number = integer(field(delivery.payload, "alert", "number"))
    live = gather_alert(services, delivery.repository, number, delivery.installation_id)
    if live is not None and (text(live.get("state")) == "open") != bool(change.opened):
        return f"stale: GitHub calls code scanning alert #{number} {text(live.get('state')) or 'closed'} now"
    return _apply(delivery, services, read_code_scanning_alert(delivery.payload, live))


def gather_alert(services: Services, repository: str, number: int, installation_id: int | None) -> Mapping[str, Any] | None:
    """The code scanning alert as GitHub has it now; None when GitHub refuses to show it (then the
    payload alone decides, as it would have without this read)."""
    try:
        return services.github.get_code_scanning_alert(repository, number, installation_id=installation_id)
    except GitHubRefused:
        return None
