"""The two sweeps that pager's is compared with in the benchmark, with the same signature as `run_sweep`.

- `first_design_sweep`: the decision as first accepted, before its amendment. One list (no status
  filter), at most three pages of the newest deliveries and only the last three hours, grouped by
  guid; an event whose first delivery is on those pages and whose newest attempt got a 5xx or no
  answer is asked for again while it has fewer than three attempts, at most ten per run, oldest
  first, within the call budget; a newer passed event of the same kind and repository, on the same
  pages, makes it stale (SUPERSEDED). No state of its own: an event that used its three attempts is
  an entry of the control repository's alarm (as that design had it), and a later pass of an event
  on the pages closes its entry.
- `github_script_sweep`: the approach of GitHub's documented redelivery script. It keeps only the
  time of its last run; each run lists every delivery since then (following the pages to the end),
  and asks again for every guid among them without an "OK" attempt: no cap, no attempt count, no
  notion of a stale event, no alarm.

Both count their calls from the clients' counters, as pager's sweep does, and return a summary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pager.errors import Conflict, PagerError, StoreUnavailable
from pager.services import Services
from pager.signals import SUPERSEDED
from pager.signals.alarm import CONTROL, Alarm
from pager.values import parse_iso

SCRIPT_STATE_KEY = "script#last-run"
FIRST_RUN_LOOKBACK = 24 * 3600  # the script's default when it has never run
PAGES = 3
MAX_ATTEMPTS = 3
MAX_REDELIVERIES = 10
WINDOW = 3 * 3600

AlarmUpdate = Callable[..., bool]


def _time(item: dict[str, Any]) -> float:
    return parse_iso(item.get("delivered_at")) or 0.0


def _passed(item: dict[str, Any]) -> bool:
    return 200 <= int(item.get("status_code") or 0) <= 399


def _refused(item: dict[str, Any]) -> bool:
    return 400 <= int(item.get("status_code") or 0) <= 499


def _calls(services: Services) -> int:
    return int(getattr(services.github, "calls", 0)) + int(getattr(services.telegram, "calls", 0))


def _default_update_alarm() -> AlarmUpdate | None:
    try:
        from pager.signals.alarm import update_alarm
    except ImportError:  # the alarm signal is not there: the first design then only redelivers
        return None
    return update_alarm


# ------------------------------------------------------------------------------------ the first design


def plan_first_design(items: list[dict[str, Any]], *, now: float, max_attempts: int = MAX_ATTEMPTS,
                      window: float = WINDOW) -> tuple[list[dict[str, Any]], dict[str, str], list[str], int]:
    """Decide from the pages read: (redeliver: the newest attempt of each event to ask for again, oldest
    event first; entries to open, key -> guid; entry keys to close; superseded events skipped)."""
    start = now - window
    by_guid: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        if _time(item) >= start:
            by_guid.setdefault(item["guid"], []).append(item)
    counted = {guid: sorted(attempts, key=lambda a: a["id"]) for guid, attempts in by_guid.items()
               if any(not a.get("redelivery") for a in attempts)}
    first_id = {guid: next(a["id"] for a in attempts if not a.get("redelivery")) for guid, attempts in counted.items()}
    newest_pass: dict[tuple[str, Any], int] = {}
    for guid, attempts in counted.items():
        if any(_passed(a) for a in attempts):
            key = (attempts[0]["event"], attempts[0].get("repository_id"))
            newest_pass[key] = max(newest_pass.get(key, 0), first_id[guid])
    redeliver: list[dict[str, Any]] = []
    opened: dict[str, str] = {}
    closed: list[str] = []
    superseded = 0
    for guid in sorted(counted, key=lambda g: first_id[g]):
        attempts = counted[guid]
        newest = attempts[-1]
        if any(_passed(a) for a in attempts):
            if len(attempts) > 1:
                closed.append(f"delivery:{guid}")
            continue
        if _refused(newest):
            continue
        kind = newest["event"]
        if kind in SUPERSEDED and newest_pass.get((kind, newest.get("repository_id")), 0) > first_id[guid]:
            superseded += 1
            closed.append(f"delivery:{guid}")
            continue
        if len(attempts) < max_attempts:
            redeliver.append(newest)
        else:
            opened[f"delivery:{guid}"] = guid
    return redeliver, opened, closed, superseded


def first_design_sweep(services: Services, *, now: float, run_id: str,
                       update_alarm: AlarmUpdate | None = None) -> dict[str, Any]:
    """One run of the decision's first design (see the module docstring)."""
    settings = services.settings
    github = services.github
    start_calls = _calls(services)
    summary: dict[str, Any] = {"run_id": run_id, "design": "first"}
    items: list[dict[str, Any]] = []
    url = None
    pages = 0
    try:
        while pages < PAGES:
            page = github.list_deliveries(per_page=100, url=url)
            pages += 1
            items.extend(page.items)
            if not page.next_url or (page.items and _time(page.items[-1]) < now - WINDOW):
                break
            url = page.next_url
    except PagerError as exc:
        summary.update(outcome=f"aborted: {type(exc).__name__}", calls_used=_calls(services) - start_calls)
        return summary
    redeliver, opened, closed, superseded = plan_first_design(items, now=now)
    asked = 0
    for item in redeliver:
        # keep one call for the alarm, as the design did
        if asked >= MAX_REDELIVERIES or _calls(services) - start_calls >= settings.sweep_call_budget - 1:
            break
        try:
            github.redeliver(int(item["id"]))
            asked += 1
        except PagerError:
            continue
    alarm = "unchanged"
    change = update_alarm or _default_update_alarm()
    if change is not None and (opened or closed) and _calls(services) - start_calls < settings.sweep_call_budget:
        entries = {key: {"title": f"delivery {guid} failed {MAX_ATTEMPTS} times", "url": settings.advanced_page,
                         "order": key} for key, guid in opened.items()}
        try:
            control = Alarm(CONTROL, settings.control_repository)
            alarm = "applied" if change(services, control, opened=entries, closed=closed) else "unchanged"
        except PagerError as exc:
            alarm = f"waiting: {type(exc).__name__}"
    summary.update(outcome="done", pages=pages, deliveries_seen=len(items), redeliveries=asked, superseded=superseded,
                   entries_opened=len(opened), entries_closed=len(closed), alarm=alarm,
                   calls_used=_calls(services) - start_calls)
    return summary


# ---------------------------------------------------------------------------------- GitHub's script


def plan_script(items: list[dict[str, Any]]) -> list[int]:
    """The delivery ids the script asks for again: for each guid without an "OK" attempt, its newest."""
    by_guid: dict[str, list[dict[str, Any]]] = {}
    for item in items:  # newest first, as listed
        by_guid.setdefault(item["guid"], []).append(item)
    return [attempts[0]["id"] for attempts in by_guid.values() if not any(a.get("status") == "OK" for a in attempts)]


def github_script_sweep(services: Services, *, now: float, run_id: str) -> dict[str, Any]:
    """One run of GitHub's documented script (see the module docstring)."""
    github = services.github
    start_calls = _calls(services)
    summary: dict[str, Any] = {"run_id": run_id, "design": "github-script"}
    try:
        record = services.store.load(SCRIPT_STATE_KEY)
    except StoreUnavailable as exc:
        summary.update(outcome=f"aborted: {exc}", calls_used=0)
        return summary
    since = float(record.data.get("last_run", now - FIRST_RUN_LOOKBACK))
    items: list[dict[str, Any]] = []
    url = None
    pages = 0
    try:
        while True:
            page = github.list_deliveries(per_page=100, url=url)
            pages += 1
            if page.items and _time(page.items[-1]) < since:
                for item in page.items:
                    if _time(item) > since:
                        items.append(item)
                    else:
                        break
                break
            items.extend(page.items)
            if not page.next_url:
                break
            url = page.next_url
        ids = plan_script(items)
        for delivery_id in ids:
            github.redeliver(delivery_id)
    except PagerError as exc:
        # the script stops at the first error and keeps its old time, so the next run reads back as far
        summary.update(outcome=f"aborted: {type(exc).__name__}", pages=pages, calls_used=_calls(services) - start_calls)
        return summary
    try:
        services.store.save(record, {"last_run": now})
    except (Conflict, StoreUnavailable):
        pass
    summary.update(outcome="done", pages=pages, deliveries_seen=len(items), redeliveries=len(ids),
                   calls_used=_calls(services) - start_calls)
    return summary
