"""Alarm (SPEC §5.2): one message per repository listing what fails on its default branch.

Entries, each keyed, with a title, a link and an order key:

    workflow:<workflow_id>     workflow_run.completed on the default branch: failure, timed_out,
                               startup_failure open it, success closes it (order: run number, attempt)
    suite:<app slug>           check_suite.completed on the default branch of an app other than
                               GitHub Actions: failure or timed_out opens, success closes (order: updated_at)
    code-scanning:<number>     code_scanning_alert created, reopened, appeared_in_branch on the default
                               branch open it; fixed, closed_by_user close it
    delivery:<guid>            the sweep's failed deliveries (`update_alarm`), in the control
                               repository's alarm only

One record per repository, `alarm#<repo>`:

    entries   key -> {title, url, order}: what is failing now
    closed    key -> {order, at}: the order key of the payload that closed an entry, kept three days
              (as long as GitHub lists a delivery), so that a stale failure does not reopen it
    message   {id, text, buttons, open}: the message shown; open until it says all clear
    fix       the pager-fix dispatch of this alarm, once 🛠 Start fix was pressed
    ref       the short reference of the repository in callback data (an index record `ref#<ref>`)

A change of entries edits the open message; the first entry of a closed alarm sends a new message
(so it notifies); the last entry closing edits it to all clear without buttons. The entries are
recorded together with the message that shows them, so nothing is half-recorded: a failed send or
edit leaves the record as it was, and the redelivery applies the change again. An event that changes
no entry writes nothing.

Late: an entry's order key only grows. A failure older than the newest payload applied to its entry
(open or closed) changes nothing; a success older than the failure shown closes nothing. The one
exception is a code scanning alert reopened or appeared in a branch: its payload has no time of the
reopening, so it always applies; a late redelivery of one is left to the sweep's coarse rule. A
success for an entry that is not open writes nothing, so its order is not kept either: a failure
redelivered after such a success is kept out by the sweep (a newer delivery of the same event
passed), not by this record.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dataclass_field
from typing import Any, Iterable, Mapping

from ..html import link
from ..routing import Delivery
from ..services import Services
from ..values import field, integer, iso, newest, order_of_time, text
from .common import buttons_json, default_branch, ref_key, repo_link, repo_url, short_ref
from .records import settle
from .steps import Dispatch, EditMessage, Remember, SendMessage, Step

FIX_EVENT = "pager-fix"
DELIVERY_PREFIX = "delivery:"
FIX_PREFIX = "fix:"
CLOSED_MEMORY_SECONDS = 3 * 24 * 3600  # GitHub lists a delivery (and so may redeliver it) for 3 days

FAILING_RUN = frozenset({"failure", "timed_out", "startup_failure"})
FAILING_SUITE = frozenset({"failure", "timed_out"})
OPENING_ALERT = frozenset({"created", "reopened", "appeared_in_branch"})
CLOSING_ALERT = frozenset({"fixed", "closed_by_user"})
UNORDERED_ALERT = frozenset({"reopened", "appeared_in_branch"})  # no time of the event in the payload
ACTIONS_APP = "github-actions"


def alarm_key(repository: str) -> str:
    return f"alarm#{repository}"


@dataclass(frozen=True)
class Change:
    """Entries to open (key -> {title, url, order}) and to close (key -> order, None: always)."""

    opened: Mapping[str, dict[str, str]] = dataclass_field(default_factory=dict)
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
        title = f"{name}: {conclusion.replace('_', ' ')} in run #{number}" + (f" (attempt {attempt})" if attempt > 1 else "")
        return Change(opened={key: {"title": title, "url": text(field(run, "html_url")), "order": order}})
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
    order = order_of_time(field(suite, "updated_at"))
    conclusion = text(field(suite, "conclusion"))
    if conclusion in FAILING_SUITE:
        repository = text(field(payload, "repository", "full_name"))
        sha = text(field(suite, "head_sha"))
        url = f"{repo_url(repository, payload)}/commit/{sha}/checks" if sha else repo_url(repository, payload)
        title = f"{text(field(app, 'name')) or slug}: {conclusion.replace('_', ' ')} on {sha[:7] or branch}"
        return Change(opened={key: {"title": title, "url": url, "order": order}})
    if conclusion == "success":
        return Change(closed={key: order})
    return f"ignored: conclusion {conclusion or 'none'}"


def read_code_scanning_alert(payload: Mapping[str, Any]) -> Change | str:
    action = text(payload.get("action"))
    alert = payload.get("alert")
    number = field(alert, "number")
    key = f"code-scanning:{number}"
    ref = text(payload.get("ref"))
    on_default = ref == f"refs/heads/{default_branch(payload)}"
    order = newest(
        order_of_time(field(alert, "created_at")),
        order_of_time(field(alert, "fixed_at")),
        order_of_time(field(alert, "dismissed_at")),
        order_of_time(field(alert, "updated_at")),
    )
    if action in OPENING_ALERT:
        if not on_default:
            return "ignored: not the default branch"
        rule = field(alert, "rule")
        what = text(field(rule, "description")) or text(field(rule, "id")) or "alert"
        severity = text(field(rule, "security_severity_level")) or text(field(rule, "severity"))
        title = f"code scanning #{number}: {what}" + (f" ({severity})" if severity else "")
        unordered = frozenset({key}) if action in UNORDERED_ALERT else frozenset()
        return Change(opened={key: {"title": title, "url": text(field(alert, "html_url")), "order": order}}, unordered=unordered)
    if action in CLOSING_ALERT:
        # A dismissal has no ref (it applies to the alert); a fix counts on the default branch only.
        if ref and not on_default:
            return "ignored: not the default branch"
        return Change(closed={key: order})
    return f"ignored: action {action}"


# -- deciding -----------------------------------------------------------------------------------------


def apply_change(data: Mapping[str, Any], change: Change, now: float) -> tuple[dict, dict, bool]:
    """The entries and closed memory after a change, and whether the entries changed."""
    before = data.get("entries") or {}
    entries = {key: dict(entry) for key, entry in before.items()}
    closed = {key: dict(memo) for key, memo in (data.get("closed") or {}).items()}
    for key, entry in change.opened.items():
        known = newest(field(entries, key, "order"), field(closed, key, "order"))
        if key not in change.unordered and entry["order"] < known:
            continue  # stale: an older failure than what was applied to this entry
        if entries.get(key) == entry:
            continue
        entries[key] = dict(entry)
        closed.pop(key, None)
    for key, order in change.closed.items():
        current = entries.get(key)
        if current is None:
            continue
        if order is not None and order < current.get("order", ""):
            continue  # stale: a success older than the failure shown
        del entries[key]
        closed[key] = {"order": newest(order, current.get("order")), "at": now}
    changed = entries != before
    if changed:
        closed = {key: memo for key, memo in closed.items() if float(memo.get("at", now)) > now - CLOSED_MEMORY_SECONDS}
    return entries, closed, changed


def offers_fix(entries: Mapping[str, Any]) -> bool:
    """🛠 Start fix unless every entry is a failed delivery, which a fix could not see."""
    return any(not key.startswith(DELIVERY_PREFIX) for key in entries)


def render(repository: str, entries: Mapping[str, Mapping[str, str]], ref: str) -> tuple[str, list | None]:
    lines = [f"🚨 {repo_link(repository)}"]
    for key in sorted(entries):
        entry = entries[key]
        title = entry.get("title") or key
        lines.append(f"• {link(entry['url'], title)}" if entry.get("url") else f"• {title}")
    buttons = [[("🛠 Start fix", FIX_PREFIX + ref)]] if offers_fix(entries) else None
    return "\n".join(lines), buttons


def render_clear(repository: str) -> str:
    return f"✅ {repo_link(repository)}: all clear"


def decide_alarm(repository: str, change: Change):
    """Apply a change of entries and make the message show them: send, edit, all clear, or nothing."""

    def decide(data: dict[str, Any], now: float) -> Step:
        entries, closed, changed = apply_change(data, change, now)
        message = data.get("message") or {}
        showing = bool(message.get("open"))
        if entries:
            if offers_fix(entries) and not data.get("ref"):
                ref = short_ref(repository)
                return Step("", effect=Remember(ref_key(ref), {"repository": repository}), then=lambda _: {**data, "ref": ref})
            body, buttons = render(repository, entries, data.get("ref") or short_ref(repository))
            shown = {"text": body, "buttons": buttons_json(buttons), "open": True}
            new = {**data, "entries": entries, "closed": closed}
            if not showing:
                fresh = {k: v for k, v in new.items() if k != "fix"}
                return Step("alarm opened", effect=SendMessage(body, buttons), then=lambda mid: {**fresh, "message": {"id": mid, **shown}})
            if body != message.get("text") or buttons_json(buttons) != message.get("buttons"):
                return Step(
                    "alarm updated",
                    effect=EditMessage(message["id"], body, buttons),
                    then=lambda mid: {**new, "message": {"id": mid, **shown}},
                )
            return Step("alarm unchanged", data=new if changed else None)
        if showing:
            clear = render_clear(repository)
            rest = {k: v for k, v in data.items() if k != "fix"}
            return Step(
                "all clear",
                effect=EditMessage(message["id"], clear),
                then=lambda mid: {**rest, "entries": {}, "closed": closed, "message": {"id": mid, "text": clear, "buttons": None, "open": False}},
            )
        return Step("alarm unchanged", data={**data, "entries": entries, "closed": closed} if changed else None)

    return decide


def fix_payload(repository: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """What the control repository's pager-fix workflow gets as `client_payload`."""
    entries = data.get("entries") or {}
    return {
        "repository": repository,
        "entries": [
            {"key": key, "title": entries[key].get("title", ""), "url": entries[key].get("url", "")}
            for key in sorted(entries)
            if not key.startswith(DELIVERY_PREFIX)
        ],
        "message_id": field(data, "message", "id"),
    }


def decide_fix(repository: str, control_repository: str):
    """🛠 Start fix: dispatch pager-fix once per alarm; a second press says so."""

    def decide(data: dict[str, Any], now: float) -> Step:
        entries = data.get("entries") or {}
        if not entries or not field(data, "message", "open"):
            return Step("✅ all clear: nothing to fix")
        if not offers_fix(entries):
            return Step("only failed deliveries: see the app's Advanced page")
        if data.get("fix"):
            return Step("🛠 a fix was already started")
        return Step(
            "🛠 fix started",
            effect=Dispatch(control_repository, FIX_EVENT, fix_payload(repository, data)),
            then=lambda _: {**data, "fix": {"at": iso(now), "message_id": field(data, "message", "id")}},
        )

    return decide


# -- the shell ----------------------------------------------------------------------------------------


def update_alarm(services: Services, repository: str, *, opened: Mapping[str, dict], closed: Iterable[str]) -> bool:
    """Open and close entries of a repository's alarm (the sweep's `delivery:<guid>` entries).

    Returns True when the alarm's entries changed. Raises Transient on failure, with nothing
    half-recorded: the next call applies the same change again.
    """
    change = Change(
        opened={
            key: {"title": str(entry.get("title", "")), "url": str(entry.get("url", "")), "order": str(entry.get("order", ""))}
            for key, entry in opened.items()
        },
        closed={key: None for key in closed},
    )
    settled = settle(services, alarm_key(repository), decide_alarm(repository, change))
    return (settled.before.get("entries") or {}) != (settled.after.get("entries") or {})


def start_fix(services: Services, repository: str) -> str:
    """The 🛠 Start fix press: the answer to show the person."""
    decide = decide_fix(repository, services.settings.control_repository)
    return settle(services, alarm_key(repository), decide).outcome


def _apply(delivery: Delivery, services: Services, change: Change | str) -> str:
    if isinstance(change, str):
        return change
    return settle(services, alarm_key(delivery.repository), decide_alarm(delivery.repository, change)).outcome


def workflow_run(delivery: Delivery, services: Services) -> str:
    """workflow_run.completed: a run on the default branch opens or closes its workflow's entry."""
    return _apply(delivery, services, read_workflow_run(delivery.payload))


def check_suite(delivery: Delivery, services: Services) -> str:
    """check_suite.completed: another app's suite on the default branch opens or closes its entry."""
    return _apply(delivery, services, read_check_suite(delivery.payload))


def code_scanning(delivery: Delivery, services: Services) -> str:
    """code_scanning_alert: an alert on the default branch opens or closes its entry."""
    return _apply(delivery, services, read_code_scanning_alert(delivery.payload))
